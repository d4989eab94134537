package mcp

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/benchhq/bench/agent"
)

// A foreign tool's description (and the descriptions inside its schema) is
// written by a stranger and read by the model. The harness never acts on it,
// but flags what looks like an attempt to steer the model, so that an
// operator reading `bench mcp inspect` can see it. Flags never grant or
// block anything.

// The kinds of flag.
const (
	// FlagInstructions: text that addresses the model ("ignore previous
	// instructions", "you must", "before using any other tool").
	FlagInstructions = "instructions"
	// FlagSecrets: mentions of secrets, credentials, keys, .ssh, env vars.
	FlagSecrets = "secrets"
	// FlagPath: a file path (absolute, home-relative or a dot-file).
	FlagPath = "path"
	// FlagToolMention: the name of another tool.
	FlagToolMention = "tool-mention"
	// FlagInvisible: invisible, bidi-control or tag characters.
	FlagInvisible = "invisible-unicode"
	// FlagLong: a very long text.
	FlagLong = "long"
)

// LongDescription is the length in characters past which a description is
// flagged as long.
const LongDescription = 1500

// Flag is something suspicious in a tool's description.
type Flag struct {
	// Kind is one of the Flag* constants.
	Kind string `json:"kind"`
	// Where names the text: "description", or the schema location of a
	// property's description ("inputSchema.properties.path.description").
	Where string `json:"where"`
	// Excerpt is the matched text (escaped when invisible).
	Excerpt string `json:"excerpt"`
}

// String shows the flag on one line.
func (f Flag) String() string { return fmt.Sprintf("%s in %s: %s", f.Kind, f.Where, f.Excerpt) }

// pattern is a compiled pattern of one kind.
type pattern struct {
	kind string
	re   *regexp.Regexp
}

// patterns are the phrase patterns, compiled once: a compiled regexp is
// immutable and safe for concurrent use.
var patterns = slices.Concat(
	compile(FlagInstructions,
		`\b(ignore|disregard|forget|override)\b[^.\n]{0,40}\b(previous|prior|above|earlier|all|other|system|your)\b[^.\n]{0,20}\b(instructions?|prompts?|rules?|messages?|guidelines?)`,
		`\byou (must|should always|are required to)\b`,
		`\b(before|instead of|prior to)\b (using|calling|running|invoking) (any|other|another|all|the other)\b`,
		`\balways (call|use|run|invoke|pass|send|include)\b`,
		`\bdo not (tell|inform|mention|reveal|notify|show)\b`,
		`\bdon'?t (tell|inform|mention|reveal|notify|show)\b`,
		`\b(the )?user (must not|should not|shouldn'?t) (know|see)\b`,
		`\bsystem prompt\b`,
		`</?(important|system|instructions?|secret|hidden)>`,
		`\[/?INST\]|<\|im_start\|>|<!--`,
		`\bnew instructions\b`,
	),
	compile(FlagSecrets,
		`\b(secrets?|credentials?|passwords?|passwd|passphrases?)\b`,
		`\bapi[ _-]?keys?\b|\baccess[ _-]?tokens?\b|\bauth(entication)?[ _-]?tokens?\b|\bbearer\b`,
		`\bprivate[ _-]?keys?\b|\bid_(rsa|dsa|ecdsa|ed25519)\b|\.ssh\b|\.aws\b|\.netrc\b|\.npmrc\b|\.pgpass\b|\.git-credentials\b|\.env\b`,
		`\benv(ironment)?[ _-]?var(iable)?s?\b|(?-i:\$[A-Z][A-Z0-9_]{2,}\b)|\bprocess\.env\b|\bos\.environ\b`,
		`(?-i:\b(AWS|OPENAI|ANTHROPIC|GITHUB|GH|HF|NPM|SLACK|STRIPE)_[A-Z_]+\b)`,
	),
	compile(FlagPath,
		`(^|[\s'"(=:])(~|\$HOME)?/(etc|home|root|usr|var|tmp|proc|Users|opt|srv|mnt)(/[\w.@-]+)+`,
		`(^|[\s'"(=:])~/[\w.@-]+`,
		`\b[A-Za-z]:\\[\w.\\ -]+`,
		`(^|[\s'"(])\.\.(/[\w.@-]+)+`,
	),
)

// compile compiles case-insensitive patterns of one kind.
func compile(kind string, exprs ...string) []pattern {
	out := make([]pattern, len(exprs))
	for i, e := range exprs {
		out[i] = pattern{kind, regexp.MustCompile(`(?i)` + e)}
	}
	return out
}

// FlagDescription flags suspicious content in one text. where names the
// text in the flags; others are the names of the other tools the model may
// see (a mention of one is flagged).
func FlagDescription(where, text string, others []string) []Flag {
	var out []Flag
	for _, p := range patterns {
		if loc := p.re.FindStringIndex(text); loc != nil {
			out = append(out, Flag{Kind: p.kind, Where: where, Excerpt: excerpt(text, loc[0], loc[1])})
		}
	}
	lower := strings.ToLower(text)
	for _, name := range others {
		// Most names do not occur at all: no pattern is built for them.
		if name != "" && strings.Contains(lower, strings.ToLower(name)) && mentions(text, name) {
			out = append(out, Flag{Kind: FlagToolMention, Where: where, Excerpt: name})
		}
	}
	if inv := invisible(text); inv != "" {
		out = append(out, Flag{Kind: FlagInvisible, Where: where, Excerpt: inv})
	}
	if n := utf8.RuneCountInString(text); n > LongDescription {
		out = append(out, Flag{Kind: FlagLong, Where: where, Excerpt: fmt.Sprintf("%d characters", n)})
	}
	return out
}

// mentions reports whether text names the tool name, alone or behind a
// server's prefix ("srv__name", as the model sees a server's tools). A
// name that is a plain word ("search") counts only where it reads as a
// tool: quoted in backquotes, followed by "(", or next to "tool", "call",
// "use", "run", "invoke".
func mentions(text, name string) bool {
	q := `(?:[\w-]*` + Separator + `)?` + regexp.QuoteMeta(name)
	expr := `(?:^|[^\w.-])` + q + `(?:$|[^\w-]|\.(?:$|\s))`
	if plainWord(name) {
		expr = `(?i)` + "`" + q + "`" + `|\b` + q + `\(|\b` + q + ` tool\b|\b(?:tool|call|use|run|invoke|calling|using|running|invoking) ` + q + `\b`
	}
	return regexp.MustCompile(expr).MatchString(text)
}

// plainWord reports whether name is lowercase letters only.
func plainWord(name string) bool {
	for _, r := range name {
		if r < 'a' || r > 'z' {
			return false
		}
	}
	return name != ""
}

// excerpt returns the match with a little context, on one line.
func excerpt(text string, start, end int) string {
	const around = 20
	a, b := start, end
	for i := 0; i < around && a > 0; i++ {
		_, size := utf8.DecodeLastRuneInString(text[:a])
		a -= size
	}
	for i := 0; i < around && b < len(text); i++ {
		_, size := utf8.DecodeRuneInString(text[b:])
		b += size
	}
	s := strings.Join(strings.Fields(text[a:b]), " ")
	if a > 0 {
		s = "…" + s
	}
	if b < len(text) {
		s += "…"
	}
	return s
}

// Invisible reports whether r is a character a reader of the text would
// not see, or would see misleadingly: zero-width and other format
// characters, bidi controls, the Unicode tag block (which can smuggle
// ASCII), variation selectors, and control characters other than tab,
// newline and carriage return. `bench mcp inspect` escapes them; a
// description with any is flagged.
func Invisible(r rune) bool { return invisibleKind(r) != "" }

// invisibleKind names the kind of an invisible character, or "".
func invisibleKind(r rune) string {
	switch {
	case r >= 0xE0000 && r <= 0xE007F:
		return "tag characters"
	case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069, r == 0x200E, r == 0x200F, r == 0x061C:
		return "bidi controls"
	case r == 0x200B, r == 0x200C, r == 0x200D, r == 0x2060, r == 0xFEFF, r == 0x180E:
		return "zero-width characters"
	case unicode.Is(unicode.Cf, r):
		return "format characters"
	case unicode.IsControl(r) && r != '\n' && r != '\t' && r != '\r':
		return "control characters"
	case r >= 0xFE00 && r <= 0xFE0F, r >= 0xE0100 && r <= 0xE01EF:
		return "variation selectors"
	}
	return ""
}

// invisible describes the invisible characters in text, by kind with
// counts ("2 zero-width characters, 1 bidi controls"), or "" when there
// are none.
func invisible(text string) string {
	counts := map[string]int{}
	var order []string
	for _, r := range text {
		what := invisibleKind(r)
		if what == "" {
			continue
		}
		if counts[what] == 0 {
			order = append(order, what)
		}
		counts[what]++
	}
	var parts []string
	for _, w := range order {
		parts = append(parts, fmt.Sprintf("%d %s", counts[w], w))
	}
	return strings.Join(parts, ", ")
}

// FlagCache keeps the description flags of the tools listed so far, by
// what they were computed from: a server that lists the same catalog to
// every attempt of a run is flagged once, not once an attempt (flagging
// runs dozens of patterns over every description: about 2 ms per attempt
// for the project's issue tracker). Safe for concurrent use; the zero
// value is ready to use.
type FlagCache struct {
	mu       sync.Mutex
	flags    map[string][]Flag
	computed int
}

// Computed counts the tools whose flags were computed rather than found.
func (c *FlagCache) Computed() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.computed
}

// toolFlags returns the flags of a listed tool (its description, title and
// input schema as sent, seen beside the tools named in others), computing
// them the first time; c may be nil, which computes them every time.
func (c *FlagCache) toolFlags(description, title string, raw json.RawMessage, schema *jsonschema.Schema, others []string) []Flag {
	compute := func() []Flag {
		flags := flagTool(description, schema, others)
		if title != "" {
			flags = append(flags, FlagDescription("title", title, others)...)
		}
		return flags
	}
	if c == nil {
		return compute()
	}
	var key strings.Builder
	for _, part := range append([]string{description, title, string(raw)}, others...) {
		key.WriteString(strconv.Itoa(len(part)))
		key.WriteByte(':')
		key.WriteString(part)
	}
	c.mu.Lock()
	flags, ok := c.flags[key.String()]
	c.mu.Unlock()
	if ok {
		return slices.Clone(flags)
	}
	flags = compute()
	c.mu.Lock()
	if c.flags == nil {
		c.flags = map[string][]Flag{}
	}
	c.flags[key.String()] = flags
	c.computed++
	c.mu.Unlock()
	return slices.Clone(flags)
}

// flagTool flags a tool's description and every description and title
// inside its input schema.
func flagTool(description string, schema *jsonschema.Schema, others []string) []Flag {
	out := FlagDescription("description", description, others)
	var walk func(s *jsonschema.Schema, where string, depth int)
	walk = func(s *jsonschema.Schema, where string, depth int) {
		if s == nil || depth > 32 {
			return
		}
		if s.Description != "" {
			out = append(out, FlagDescription(where+".description", s.Description, others)...)
		}
		if s.Title != "" {
			out = append(out, FlagDescription(where+".title", s.Title, others)...)
		}
		for _, name := range agent.PropertyNames(s) {
			if name != "" {
				out = append(out, FlagDescription(where+".properties key", name, nil)...)
			}
			walk(s.Properties[name], where+".properties."+name, depth+1)
		}
		walk(s.Items, where+".items", depth+1)
		for i, a := range s.AnyOf {
			walk(a, fmt.Sprintf("%s.anyOf[%d]", where, i), depth+1)
		}
		for i, a := range s.OneOf {
			walk(a, fmt.Sprintf("%s.oneOf[%d]", where, i), depth+1)
		}
		for i, e := range s.Enum {
			if str, ok := e.(string); ok {
				out = append(out, FlagDescription(fmt.Sprintf("%s.enum[%d]", where, i), str, nil)...)
			}
		}
	}
	walk(schema, "inputSchema", 0)
	return dedupeFlags(out)
}

func dedupeFlags(in []Flag) []Flag {
	seen := map[Flag]bool{}
	var out []Flag
	for _, f := range in {
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return out
}
