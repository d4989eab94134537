package agent

import (
	"fmt"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/benchhq/bench/tasks"
)

// Profile is a permission profile: a decision per permission class, with
// per-tool overrides and argument rules for the built-in command and write
// tools. Profiles are named in the run file, and a few are built in (see
// BuiltinProfiles).
//
// A call is decided in this order:
//  1. a tool with no class is denied;
//  2. a decision in Tools for the tool's name, else the decision for its
//     class; a class the profile does not name is denied;
//  3. if that said allow or ask, the argument rules may still deny:
//     run_command's command must match AllowCommands (when set), and the
//     path of write_file or edit_file must match none of DenyWrite.
//
// Argument rules only ever take away: they never allow a call that the
// class or tool decision denies.
type Profile struct {
	// Name is how run files and arms refer to the profile.
	Name string
	// Description says what the profile is for.
	Description string
	// Classes gives a decision per permission class. A class that is not
	// here is denied.
	Classes map[Class]Decision
	// Tools overrides the class decision for tools by name (built-in names
	// such as run_command, or namespaced foreign ones such as "fs__read").
	Tools map[string]Decision
	// AllowCommands, when not empty, restricts run_command to command lines
	// that start with one of these prefixes (whole words, split on spaces
	// and tabs as the shell splits them) and use no shell operator
	// (; & | ` $ < > ( ) or a line break) and no other space or control
	// character.
	AllowCommands []string
	// DenyWrite denies write_file and edit_file on paths matching one of
	// these globs, relative to the workspace root. A glob without a slash
	// matches a name at any depth ("*.lock"); one with a slash is anchored
	// at the root ("tests/**"); ** matches any number of folders; a glob
	// that matches a folder covers everything under it.
	DenyWrite []string
}

// Network reports whether the profile allows the network class, which is
// what opens the network to sandboxed commands. Ask does not: a sandbox
// cannot ask per connection.
func (p *Profile) Network() bool {
	return p != nil && p.Classes[ClassNetwork] == Allow
}

// The names of the built-in tools that argument rules apply to.
const (
	toolRunCommand = "run_command"
	toolWriteFile  = "write_file"
	toolEditFile   = "edit_file"
)

// The built-in profile names.
const (
	ProfileFull     = "full"
	ProfileStandard = "standard"
	ProfileNoExec   = "no-exec"
	ProfileReadOnly = "read-only"
	ProfileAskExec  = "ask-exec"
)

// BuiltinProfiles returns the profiles that ship with bench, by name:
//
//	full       read, write, exec and network allowed
//	standard   read, write and exec allowed; network denied (the default)
//	no-exec    read and write allowed; exec and network denied
//	read-only  read allowed; write, exec and network denied
//	ask-exec   read and write allowed; exec asks the approver; network denied
//
// None of them allows a class other than these four: a foreign tool's
// operator-given class must be allowed by a profile of the run file.
func BuiltinProfiles() Profiles {
	mk := func(name, desc string, read, write, exec, net Decision) *Profile {
		return &Profile{Name: name, Description: desc, Classes: map[Class]Decision{
			ClassRead: read, ClassWrite: write, ClassExec: exec, ClassNetwork: net,
		}}
	}
	return Profiles{
		ProfileFull:     mk(ProfileFull, "everything the built-in classes cover, network included", Allow, Allow, Allow, Allow),
		ProfileStandard: mk(ProfileStandard, "read, write and run commands; no network", Allow, Allow, Allow, Deny),
		ProfileNoExec:   mk(ProfileNoExec, "read and write files; no commands, no network", Allow, Allow, Deny, Deny),
		ProfileReadOnly: mk(ProfileReadOnly, "read files only", Allow, Deny, Deny, Deny),
		ProfileAskExec:  mk(ProfileAskExec, "read and write files; every command goes to the approver; no network", Allow, Allow, Ask, Deny),
	}
}

// decide applies the profile's rules to a call. An Ask is returned as is,
// for the policy to put to its approver. ws, when not nil, resolves write
// paths.
func (p *Profile) decide(c Call, ws *Workspace) Verdict {
	if c.Class == "" {
		return Verdict{Decision: Deny, Rule: "no class", Reason: "the operator gave this tool no permission class"}
	}
	var v Verdict
	if d, ok := p.Tools[c.Tool]; ok {
		v = Verdict{Decision: d, Rule: "tools." + c.Tool}
	} else if d, ok := p.Classes[c.Class]; ok {
		v = Verdict{Decision: d, Rule: "class " + string(c.Class)}
	} else {
		return Verdict{Decision: Deny, Rule: "unknown class " + string(c.Class),
			Reason: fmt.Sprintf("the profile %s gives no decision for the class %s", p.Name, c.Class)}
	}
	if v.Decision == Deny {
		if v.Reason == "" {
			v.Reason = fmt.Sprintf("the profile %s denies it", p.Name)
		}
		return v
	}
	if c.Origin != OriginBuiltin {
		return v
	}
	switch c.Tool {
	case toolRunCommand:
		if len(p.AllowCommands) > 0 {
			cmd, _ := c.Args["command"].(string)
			if ok, why := commandAllowed(p.AllowCommands, cmd); !ok {
				return Verdict{Decision: Deny, Rule: "allow_commands", Reason: why}
			}
		}
	case toolWriteFile, toolEditFile:
		wp, _ := c.Args["path"].(string)
		if glob, shown := deniedWrite(p.DenyWrite, ws, wp); glob != "" {
			return Verdict{Decision: Deny, Rule: fmt.Sprintf("deny_write %q", glob),
				Reason: fmt.Sprintf("the path %s is protected from writes", shown)}
		}
	}
	return v
}

// shellOperators are the characters that would let a command line do more
// than its first program: lists, pipes, substitutions, redirections.
const shellOperators = ";&|`$<>()\n\r"

// commandAllowed checks a command line against allowed prefixes. A prefix
// matches whole words: "go test" allows "go test ./..." but not "go tester".
// Words are split as /bin/sh splits them, on spaces and tabs only; a
// command holding any other space or control character (vertical tab, form
// feed, no-break space...) is refused like a shell operator, since reading
// it as a separator would match a rule the shell does not run.
func commandAllowed(prefixes []string, command string) (bool, string) {
	list := strings.Join(prefixes, ", ")
	if i := strings.IndexAny(command, shellOperators); i >= 0 {
		return false, fmt.Sprintf("the command uses the shell operator %q; only plain commands starting with one of these are allowed: %s", command[i], list)
	}
	if r, ok := oddSpace(command); ok {
		return false, fmt.Sprintf("the command holds the character %q, which is neither a space nor a tab; only plain commands starting with one of these are allowed: %s", r, list)
	}
	cmd := shellWords(command)
	for _, p := range prefixes {
		p = shellWords(p)
		if cmd == p || strings.HasPrefix(cmd, p+" ") {
			return true, ""
		}
	}
	return false, "only commands starting with one of these are allowed: " + list
}

// shellWords splits s into words on spaces and tabs, as /bin/sh does, and
// joins them with single spaces.
func shellWords(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '\t' }), " ")
}

// oddSpace returns the first space or control character of s other than
// space and tab, if any.
func oddSpace(s string) (rune, bool) {
	for _, r := range s {
		if r != ' ' && r != '\t' && (unicode.IsSpace(r) || unicode.IsControl(r)) {
			return r, true
		}
	}
	return 0, false
}

// deniedWrite returns the first glob that a write path matches, and the
// path as shown to the model; "" when none does. The path is checked as
// written and, when a workspace is given, as it resolves (through links),
// so that neither spelling dodges a rule.
func deniedWrite(globs []string, ws *Workspace, p string) (glob, shown string) {
	if len(globs) == 0 {
		return "", ""
	}
	var cands []string
	if written := cleanRel(p, ws); written != "" {
		cands = append(cands, written)
	}
	if ws != nil {
		if real, err := ws.Resolve(p); err == nil {
			if rel := ws.Rel(real); rel != "." {
				cands = append(cands, rel)
			}
		}
	}
	for _, g := range globs {
		for _, c := range cands {
			if tasks.MatchGlob(g, c) {
				return g, c
			}
		}
	}
	return "", ""
}

// cleanRel is a path as written, made relative to the workspace root with
// forward slashes; "" for the root itself or a path outside.
func cleanRel(p string, ws *Workspace) string {
	p = filepath.ToSlash(p)
	if path.IsAbs(p) {
		if ws == nil {
			return strings.TrimPrefix(path.Clean(p), "/")
		}
		rel, err := filepath.Rel(ws.Root(), filepath.Clean(filepath.FromSlash(p)))
		if err != nil {
			return ""
		}
		p = filepath.ToSlash(rel)
	}
	p = path.Clean(p)
	if p == "." || p == ".." || strings.HasPrefix(p, "../") {
		return ""
	}
	return p
}

// Profiles are permission profiles by name.
type Profiles map[string]*Profile

// Lookup returns the profile of a name; "" is the standard profile. A nil
// Profiles holds the built-in profiles (ParseProfiles always includes them).
func (ps Profiles) Lookup(name string) (*Profile, error) {
	if ps == nil {
		ps = BuiltinProfiles()
	}
	if name == "" {
		name = ProfileStandard
	}
	if p, ok := ps[name]; ok {
		return p, nil
	}
	names := slices.Sorted(maps.Keys(ps))
	return nil, fmt.Errorf("permission profile %q: no such profile (expected one of: %s)", name, strings.Join(names, ", "))
}

// The keys of a profile table that are not class names.
const (
	keyDescription   = "description"
	keyExtends       = "extends"
	keyClasses       = "classes"
	keyTools         = "tools"
	keyAllowCommands = "allow_commands"
	keyDenyWrite     = "deny_write"
)

// ParseProfiles builds profiles from the [profiles] table of a run file, as
// decoded from TOML (a table per profile name). file names the run file in
// errors, which also name the field. The result holds the built-in
// profiles too; a profile of the file may not reuse a built-in name.
//
// A profile table holds class decisions as keys (read = "allow", or
// classes.NAME for a class whose name is one of the keys below), and:
//
//	description     free text
//	extends         a profile (built-in or of the file) to start from
//	tools           a table of tool name to decision
//	allow_commands  an array of command prefixes for run_command
//	deny_write      an array of path globs write_file and edit_file may not touch
//
// A profile that extends another inherits its classes, tools and
// allow_commands (each overridden by its own), and adds its deny_write
// globs to the other's.
func ParseProfiles(file string, raw map[string]any) (Profiles, error) {
	out := BuiltinProfiles()
	parsed := map[string]*profileDraft{}
	for _, name := range slices.Sorted(maps.Keys(raw)) {
		field := "profiles." + name
		if _, ok := out[name]; ok {
			return nil, fieldErr(file, field, "is a built-in profile name: choose another name, or extend it with extends = %q", name)
		}
		if name == "" || strings.ContainsAny(name, " \t\n") {
			return nil, fieldErr(file, field, "a profile name must be a non-empty word")
		}
		tbl, ok := raw[name].(map[string]any)
		if !ok {
			return nil, fieldErr(file, field, "expected a table ([profiles.%s]), got %s", name, typeName(raw[name]))
		}
		d, err := parseProfile(file, field, tbl)
		if err != nil {
			return nil, err
		}
		parsed[name] = d
	}
	var resolve func(name string, chain []string) (*Profile, error)
	resolve = func(name string, chain []string) (*Profile, error) {
		if p, ok := out[name]; ok {
			return p, nil
		}
		d := parsed[name]
		p := &Profile{Name: name, Description: d.description, Classes: map[Class]Decision{}, Tools: map[string]Decision{}}
		if d.extends != "" {
			if slices.Contains(chain, d.extends) {
				return nil, fieldErr(file, "profiles."+name+".extends", "profiles extend each other in a loop: %s", strings.Join(append(chain, d.extends), " -> "))
			}
			_, inFile := parsed[d.extends]
			if _, builtin := out[d.extends]; !inFile && !builtin {
				names := slices.Sorted(maps.Keys(out))
				for n := range parsed {
					if _, ok := out[n]; !ok {
						names = append(names, n)
					}
				}
				sort.Strings(names)
				return nil, fieldErr(file, "profiles."+name+".extends", "no profile %q (expected one of: %s)", d.extends, strings.Join(names, ", "))
			}
			base, err := resolve(d.extends, append(chain, d.extends))
			if err != nil {
				return nil, err
			}
			maps.Copy(p.Classes, base.Classes)
			maps.Copy(p.Tools, base.Tools)
			p.AllowCommands = slices.Clone(base.AllowCommands)
			p.DenyWrite = slices.Clone(base.DenyWrite)
			if p.Description == "" {
				p.Description = base.Description
			}
		}
		maps.Copy(p.Classes, d.classes)
		maps.Copy(p.Tools, d.tools)
		if d.allowCommands != nil {
			p.AllowCommands = d.allowCommands
		}
		p.DenyWrite = append(p.DenyWrite, d.denyWrite...)
		out[name] = p
		return p, nil
	}
	for _, name := range slices.Sorted(maps.Keys(parsed)) {
		if _, err := resolve(name, []string{name}); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// profileDraft is a profile table as written, before extends is applied.
type profileDraft struct {
	description   string
	extends       string
	classes       map[Class]Decision
	tools         map[string]Decision
	allowCommands []string
	denyWrite     []string
}

func parseProfile(file, field string, tbl map[string]any) (*profileDraft, error) {
	d := &profileDraft{classes: map[Class]Decision{}, tools: map[string]Decision{}}
	for _, key := range slices.Sorted(maps.Keys(tbl)) {
		val := tbl[key]
		f := field + "." + key
		var err error
		switch key {
		case keyDescription:
			d.description, err = stringValue(file, f, val)
		case keyExtends:
			d.extends, err = stringValue(file, f, val)
		case keyClasses, keyTools:
			sub, ok := val.(map[string]any)
			if !ok {
				return nil, fieldErr(file, f, "expected a table of name = \"allow\" | \"ask\" | \"deny\", got %s", typeName(val))
			}
			for _, k := range slices.Sorted(maps.Keys(sub)) {
				dec, err := decisionValue(file, f+"."+k, sub[k])
				if err != nil {
					return nil, err
				}
				if key == keyClasses {
					d.classes[Class(k)] = dec
				} else {
					d.tools[k] = dec
				}
			}
		case keyAllowCommands:
			d.allowCommands, err = stringList(file, f, val)
			if err == nil && d.allowCommands == nil {
				d.allowCommands = []string{}
			}
			for i, p := range d.allowCommands {
				fi := fmt.Sprintf("%s[%d]", f, i)
				switch {
				case strings.TrimSpace(p) == "":
					return nil, fieldErr(file, fi, "empty prefix: it would allow every command")
				case strings.ContainsAny(p, shellOperators):
					return nil, fieldErr(file, fi, "%q holds a shell operator (one of ; & | ` $ < > ( ) or a line break): commands using them are never allowed", p)
				}
				if r, odd := oddSpace(p); odd {
					return nil, fieldErr(file, fi, "%q holds the character %q: separate words with spaces or tabs only (commands holding other space or control characters are never allowed)", p, r)
				}
			}
		case keyDenyWrite:
			d.denyWrite, err = stringList(file, f, val)
			for i, g := range d.denyWrite {
				if msg := tasks.CheckGlob(g); msg != "" {
					return nil, fieldErr(file, fmt.Sprintf("%s[%d]", f, i), "%s", msg)
				}
			}
		default:
			if _, ok := val.(string); !ok {
				return nil, fieldErr(file, f, "unknown field (expected a class name = \"allow\" | \"ask\" | \"deny\", or one of: %s, %s, %s, %s, %s, %s)",
					keyDescription, keyExtends, keyClasses, keyTools, keyAllowCommands, keyDenyWrite)
			}
			var dec Decision
			dec, err = decisionValue(file, f, val)
			d.classes[Class(key)] = dec
		}
		if err != nil {
			return nil, err
		}
	}
	return d, nil
}

func decisionValue(file, field string, v any) (Decision, error) {
	s, ok := v.(string)
	switch d := Decision(s); {
	case ok && (d == Allow || d == Ask || d == Deny):
		return d, nil
	case ok:
		return "", fieldErr(file, field, "expected \"allow\", \"ask\" or \"deny\", got %q", s)
	default:
		return "", fieldErr(file, field, "expected \"allow\", \"ask\" or \"deny\", got %s", typeName(v))
	}
}

func stringValue(file, field string, v any) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", fieldErr(file, field, "expected a string, got %s", typeName(v))
	}
	return s, nil
}

func stringList(file, field string, v any) ([]string, error) {
	var items []any
	switch x := v.(type) {
	case []any:
		items = x
	case []string:
		return slices.Clone(x), nil
	default:
		return nil, fieldErr(file, field, "expected an array of strings, got %s", typeName(v))
	}
	out := make([]string, 0, len(items))
	for i, it := range items {
		s, ok := it.(string)
		if !ok {
			return nil, fieldErr(file, fmt.Sprintf("%s[%d]", field, i), "expected a string, got %s", typeName(it))
		}
		out = append(out, s)
	}
	return out, nil
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "nothing"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int, int64, float64:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "a table"
	}
	return fmt.Sprintf("%T", v)
}

// fieldErr is a *tasks.FieldError: bad [profiles] and [sandbox] fields are
// told apart from other failures like the run file's other fields.
func fieldErr(file, field, format string, args ...any) error {
	return &tasks.FieldError{File: file, Field: field, Msg: fmt.Sprintf(format, args...)}
}
