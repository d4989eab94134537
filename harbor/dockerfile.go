package harbor

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// Dockerfile is a Dockerfile that bench can replay without Docker: one
// FROM, then RUN, COPY, WORKDIR and ENV steps. Instructions that only
// describe the image to a container runtime (LABEL, MAINTAINER, EXPOSE,
// CMD, ENTRYPOINT, HEALTHCHECK, STOPSIGNAL) change no file and are
// skipped, each reported in Ignored; any other is refused by
// ParseDockerfile, naming it.
type Dockerfile struct {
	// From is the base image reference.
	From string
	// Steps are the steps to replay, in order.
	Steps []Step
	// Ignored lists the skipped instructions, as "line N: LABEL".
	Ignored []string
}

// Step is one replayable instruction.
type Step struct {
	// Line is the instruction's first line in the Dockerfile.
	Line int
	// Op is "RUN", "COPY", "WORKDIR" or "ENV".
	Op string
	// Shell is a RUN's command in shell form (run by /bin/sh -c).
	Shell string
	// Exec is a RUN's command in exec (JSON) form.
	Exec []string
	// Sources and Dest are a COPY's sources (relative to the build
	// context, environment/) and destination, unexpanded.
	Sources []string
	Dest    string
	// Chown is a COPY's --chown value ("" for none).
	Chown string
	// Chmod is a COPY's --chmod value ("" for none).
	Chmod string
	// Dir is a WORKDIR's folder, unexpanded.
	Dir string
	// Env are an ENV's assignments, values unexpanded and unquoted.
	Env [][2]string
}

// metadataOnly are the instructions that change no file of the image.
var metadataOnly = map[string]bool{
	"LABEL": true, "MAINTAINER": true, "EXPOSE": true, "CMD": true,
	"ENTRYPOINT": true, "HEALTHCHECK": true, "STOPSIGNAL": true,
}

// ParseDockerfile reads a Dockerfile as bench replays it; path names it in
// errors, which say the line and the instruction that cannot be replayed.
func ParseDockerfile(path string, data []byte) (*Dockerfile, error) {
	lines, err := logicalLines(string(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	d := &Dockerfile{}
	for _, l := range lines {
		var op, rest string
		if i := strings.IndexAny(l.text, " \t"); i >= 0 {
			op, rest = l.text[:i], l.text[i+1:]
		} else {
			op, rest = l.text, ""
		}
		op = strings.ToUpper(op)
		rest = strings.TrimSpace(rest)
		fail := func(msg string, a ...any) error {
			return fmt.Errorf("%s: line %d: %s: %s", path, l.line, op, fmt.Sprintf(msg, a...))
		}
		if op != "FROM" && d.From == "" {
			return nil, fail("expected FROM first (bench replays FROM, then RUN, COPY, WORKDIR and ENV)")
		}
		switch {
		case op == "FROM":
			if d.From != "" {
				return nil, fail("a second FROM (a multi-stage build) cannot be replayed: bench replays one FROM followed by RUN, COPY, WORKDIR and ENV; build the image and name it in task.toml's [environment] docker_image")
			}
			f := strings.Fields(rest)
			for len(f) > 0 && strings.HasPrefix(f[0], "--") {
				if !strings.HasPrefix(f[0], "--platform=") {
					return nil, fail("option %s cannot be replayed", f[0])
				}
				f = f[1:]
			}
			if len(f) == 0 {
				return nil, fail("expected an image reference")
			}
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				f = f[:1]
			}
			if len(f) != 1 {
				return nil, fail("expected FROM IMAGE [AS NAME], got %q", rest)
			}
			if strings.Contains(f[0], "$") {
				return nil, fail("an image reference with a build argument (%s) cannot be replayed", f[0])
			}
			d.From = f[0]
		case metadataOnly[op]:
			d.Ignored = append(d.Ignored, fmt.Sprintf("line %d: %s", l.line, op))
		case op == "RUN":
			flags, body := cutFlags(rest)
			if len(flags) > 0 {
				return nil, fail("option %s cannot be replayed", flags[0])
			}
			if body == "" {
				return nil, fail("expected a command")
			}
			s := Step{Line: l.line, Op: op}
			if argv, ok := execForm(body); ok {
				if len(argv) == 0 {
					return nil, fail("expected a command")
				}
				s.Exec = argv
			} else {
				s.Shell = body
			}
			d.Steps = append(d.Steps, s)
		case op == "COPY":
			flags, body := cutFlags(rest)
			s := Step{Line: l.line, Op: op}
			for _, fl := range flags {
				k, v, _ := strings.Cut(fl, "=")
				switch k {
				case "--chown":
					s.Chown = v
				case "--chmod":
					s.Chmod = v
				default:
					return nil, fail("option %s cannot be replayed (only --chown and --chmod)", fl)
				}
			}
			if strings.HasPrefix(body, "<<") {
				return nil, fail("a here-document cannot be replayed: put the file in environment/ and COPY it")
			}
			args, ok := execForm(body)
			if !ok {
				args = strings.Fields(body)
			}
			if len(args) < 2 {
				return nil, fail("expected COPY SOURCE... DEST, got %q", rest)
			}
			s.Sources, s.Dest = args[:len(args)-1], args[len(args)-1]
			d.Steps = append(d.Steps, s)
		case op == "WORKDIR":
			if rest == "" {
				return nil, fail("expected a folder")
			}
			d.Steps = append(d.Steps, Step{Line: l.line, Op: op, Dir: rest})
		case op == "ENV":
			env, err := parseEnv(rest)
			if err != nil {
				return nil, fail("%v", err)
			}
			d.Steps = append(d.Steps, Step{Line: l.line, Op: op, Env: env})
		default:
			return nil, fail("cannot be replayed without Docker (bench replays FROM, RUN, COPY, WORKDIR and ENV): build the image and name it in task.toml's [environment] docker_image")
		}
	}
	if d.From == "" {
		return nil, fmt.Errorf("%s: no FROM instruction", path)
	}
	return d, nil
}

type logicalLine struct {
	line int
	text string
}

// logicalLines joins continued lines and drops comments, blank lines and
// parser directives (only the escape directive is understood).
func logicalLines(src string) ([]logicalLine, error) {
	escape := byte('\\')
	raw := strings.Split(strings.ReplaceAll(src, "\r\n", "\n"), "\n")
	var out []logicalLine
	var cur strings.Builder
	start := 0
	directives := true
	for i := 0; i < len(raw); i++ {
		l := raw[i]
		t := strings.TrimSpace(l)
		if directives && strings.HasPrefix(t, "#") {
			k, v, ok := strings.Cut(strings.TrimSpace(t[1:]), "=")
			if ok && strings.EqualFold(strings.TrimSpace(k), "escape") {
				switch strings.TrimSpace(v) {
				case "`":
					escape = '`'
				case "\\":
				default:
					return nil, fmt.Errorf("line %d: escape directive: expected \\ or `, got %q", i+1, strings.TrimSpace(v))
				}
				continue
			}
			if ok && strings.EqualFold(strings.TrimSpace(k), "syntax") {
				continue
			}
		}
		if t == "" && cur.Len() == 0 {
			continue
		}
		directives = false
		if strings.HasPrefix(t, "#") {
			continue // a comment, also between continued lines
		}
		if cur.Len() == 0 {
			start = i + 1
		}
		if len(t) > 0 && t[len(t)-1] == escape {
			cur.WriteString(t[:len(t)-1])
			cur.WriteByte(' ')
			continue
		}
		cur.WriteString(t)
		if s := strings.TrimSpace(cur.String()); s != "" {
			out = append(out, logicalLine{line: start, text: s})
		}
		cur.Reset()
		// A RUN with here-documents (BuildKit's syntax) goes on with
		// their bodies, each up to its delimiter line, given whole to
		// the shell.
		if len(out) > 0 && out[len(out)-1].line == start {
			last := &out[len(out)-1]
			op, _, _ := strings.Cut(last.text, " ")
			if !strings.EqualFold(op, "RUN") {
				continue
			}
			for _, m := range heredocRE.FindAllStringSubmatch(last.text, -1) {
				strip, delim := m[1] == "-", m[3]
				found := false
				for i+1 < len(raw) {
					i++
					body := raw[i]
					check := body
					if strip {
						check = strings.TrimLeft(body, "\t")
					}
					last.text += "\n" + body
					if check == delim {
						found = true
						break
					}
				}
				if !found {
					return nil, fmt.Errorf("line %d: RUN: here-document %s has no closing line %q", start, m[0], delim)
				}
			}
		}
	}
	if s := strings.TrimSpace(cur.String()); s != "" {
		out = append(out, logicalLine{line: start, text: s})
	}
	return out, nil
}

// heredocRE finds the here-documents of a RUN: <<EOF, <<-EOF, <<'EOF', <<"EOF".
var heredocRE = regexp.MustCompile(`<<(-?)\s*(['"]?)([A-Za-z_][A-Za-z0-9_]*)(?:'|")?`)

// cutFlags splits leading --flags off an instruction's arguments.
func cutFlags(s string) (flags []string, rest string) {
	rest = s
	for strings.HasPrefix(rest, "--") {
		i := strings.IndexAny(rest, " \t")
		if i < 0 {
			return append(flags, rest), ""
		}
		flags = append(flags, rest[:i])
		rest = strings.TrimSpace(rest[i:])
	}
	return flags, rest
}

// execForm reads the JSON array form of RUN or COPY.
func execForm(s string) ([]string, bool) {
	if !strings.HasPrefix(s, "[") {
		return nil, false
	}
	var argv []string
	if err := json.Unmarshal([]byte(s), &argv); err != nil {
		return nil, false
	}
	return argv, true
}

// parseEnv reads ENV's forms: KEY=VALUE pairs (values maybe quoted) or the
// legacy "ENV KEY VALUE".
func parseEnv(s string) ([][2]string, error) {
	if s == "" {
		return nil, fmt.Errorf("expected KEY=VALUE")
	}
	k, _, _ := strings.Cut(s, " ")
	if !strings.Contains(k, "=") {
		// ENV KEY rest of the line
		key, val, ok := strings.Cut(s, " ")
		if !ok {
			return nil, fmt.Errorf("expected KEY=VALUE or KEY VALUE, got %q", s)
		}
		return [][2]string{{key, strings.TrimSpace(val)}}, nil
	}
	words, err := shellWords(s)
	if err != nil {
		return nil, err
	}
	var out [][2]string
	for _, w := range words {
		key, val, ok := strings.Cut(w, "=")
		if !ok || key == "" {
			return nil, fmt.Errorf("expected KEY=VALUE, got %q", w)
		}
		out = append(out, [2]string{key, val})
	}
	return out, nil
}

// shellWords splits s into words as Docker does for ENV: quotes group and
// are removed, a backslash escapes the next character. A "$" is kept as
// is, marked for Expand only where it was not single-quoted.
func shellWords(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	in := false
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
				continue
			}
			if c == '$' {
				w.WriteString(`\$`) // literal: Expand leaves it
				continue
			}
			w.WriteByte(c)
		case c == '\\' && i+1 < len(s):
			i++
			if s[i] == '$' {
				w.WriteString(`\$`)
			} else {
				w.WriteByte(s[i])
			}
			in = true
		case quote == '"':
			if c == '"' {
				quote = 0
				continue
			}
			w.WriteByte(c)
		case c == '"' || c == '\'':
			quote = c
			in = true
		case c == ' ' || c == '\t':
			if in {
				words = append(words, w.String())
				w.Reset()
				in = false
			}
		default:
			w.WriteByte(c)
			in = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated %c quote in %q", quote, s)
	}
	if in {
		words = append(words, w.String())
	}
	return words, nil
}

// Expand replaces $NAME, ${NAME}, ${NAME:-word} and ${NAME:+word} in s with
// values from env, as Docker does in ENV, WORKDIR and COPY; "\$" is a
// literal dollar. An unset name expands to "".
func Expand(s string, env map[string]string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+1 < len(s) && s[i+1] == '$' {
			b.WriteByte('$')
			i++
			continue
		}
		if c != '$' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		if s[i+1] == '{' {
			end := strings.IndexByte(s[i+2:], '}')
			if end < 0 {
				b.WriteString(s[i:])
				break
			}
			expr := s[i+2 : i+2+end]
			i += 2 + end
			name, word, op := expr, "", ""
			if j := strings.Index(expr, ":-"); j >= 0 {
				name, word, op = expr[:j], expr[j+2:], "-"
			} else if j := strings.Index(expr, ":+"); j >= 0 {
				name, word, op = expr[:j], expr[j+2:], "+"
			}
			v, set := env[name]
			switch {
			case op == "-" && (!set || v == ""):
				b.WriteString(Expand(word, env))
			case op == "+":
				if set && v != "" {
					b.WriteString(Expand(word, env))
				}
			default:
				b.WriteString(v)
			}
			continue
		}
		j := i + 1
		for j < len(s) && (s[j] == '_' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || j > i+1 && s[j] >= '0' && s[j] <= '9') {
			j++
		}
		if j == i+1 {
			b.WriteByte(c)
			continue
		}
		b.WriteString(env[s[i+1:j]])
		i = j - 1
	}
	return b.String()
}
