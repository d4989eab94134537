package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/internal/ollamatest"
	"github.com/benchhq/bench/tasks"
)

// profilesFrom parses the [profiles] of a run file's TOML.
func profilesFrom(t *testing.T, src string) (agent.Profiles, error) {
	t.Helper()
	var doc map[string]any
	if _, err := toml.Decode(src, &doc); err != nil {
		t.Fatalf("bad TOML in the test: %v", err)
	}
	raw, _ := doc["profiles"].(map[string]any)
	return agent.ParseProfiles("run.toml", raw)
}

const testProfiles = `
[profiles.careful]
extends = "standard"
allow_commands = ["go test", "python3 -m unittest"]
deny_write = ["*.lock", "tests/**", "/go.mod"]
search = "allow"
[profiles.careful.tools]
list_dir = "deny"

[profiles.stricter]
extends = "careful"
deny_write = ["docs"]
exec = "ask"
[profiles.stricter.classes]
tools = "allow"
`

func builtinCall(tool string, class agent.Class, args map[string]any) agent.Call {
	return agent.Call{Tool: tool, Class: class, Origin: agent.OriginBuiltin, Args: args}
}

func TestProfileDecisions(t *testing.T) {
	ps, err := profilesFrom(t, testProfiles)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, d := range []string{"tests", "src"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("tests", filepath.Join(dir, "t")); err != nil {
		t.Fatal(err)
	}
	ws, err := agent.NewWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	run := func(cmd string) agent.Call {
		return builtinCall("run_command", agent.ClassExec, map[string]any{"command": cmd})
	}
	write := func(p string) agent.Call {
		return builtinCall("write_file", agent.ClassWrite, map[string]any{"path": p, "content": "x"})
	}
	tests := []struct {
		profile  string
		call     agent.Call
		want     agent.Decision
		wantRule string
	}{
		{"standard", builtinCall("read_file", agent.ClassRead, nil), agent.Allow, "class read"},
		{"", run("ls"), agent.Allow, "class exec"},
		{"no-exec", run("ls"), agent.Deny, "class exec"},
		{"read-only", write("a.txt"), agent.Deny, "class write"},
		{"full", agent.Call{Tool: "web__fetch", Class: agent.ClassNetwork, Origin: "mcp:web"}, agent.Allow, "class network"},
		{"full", agent.Call{Tool: "s__find", Class: "search", Origin: "mcp:s"}, agent.Deny, "unknown class search"},
		{"full", agent.Call{Tool: "s__find", Origin: "mcp:s"}, agent.Deny, "no class"},
		{"careful", agent.Call{Tool: "s__find", Class: "search", Origin: "mcp:s"}, agent.Allow, "class search"},
		{"careful", builtinCall("list_dir", agent.ClassRead, nil), agent.Deny, "tools.list_dir"},
		{"careful", run("go test ./..."), agent.Allow, "class exec"},
		{"careful", run("  go   test"), agent.Allow, "class exec"},
		{"careful", run("python3 -m unittest -v"), agent.Allow, "class exec"},
		{"careful", run("go tester"), agent.Deny, "allow_commands"},
		{"careful", run("go test; rm -rf /"), agent.Deny, "allow_commands"},
		{"careful", run("go test $(rm -rf /)"), agent.Deny, "allow_commands"},
		{"careful", run("go test > tests/x"), agent.Deny, "allow_commands"},
		{"careful", run("go test\nrm -rf /"), agent.Deny, "allow_commands"},
		{"careful", run("rm -rf /"), agent.Deny, "allow_commands"},
		{"careful", write("src/main.go"), agent.Allow, "class write"},
		{"careful", write("tests/test_x.py"), agent.Deny, `deny_write "tests/**"`},
		{"careful", write("./tests/../tests/test_x.py"), agent.Deny, `deny_write "tests/**"`},
		{"careful", write(filepath.Join(ws.Root(), "tests", "x.py")), agent.Deny, `deny_write "tests/**"`},
		{"careful", write("t/x.py"), agent.Deny, `deny_write "tests/**"`}, // through a link
		{"careful", write("src/tests/x.py"), agent.Allow, "class write"},  // anchored at the root
		{"careful", write("deep/down/Cargo.lock"), agent.Deny, `deny_write "*.lock"`},
		{"careful", write("go.mod"), agent.Deny, `deny_write "/go.mod"`},
		{"careful", write("src/go.mod"), agent.Allow, "class write"},
		{"careful", builtinCall("edit_file", agent.ClassWrite, map[string]any{"path": "tests/a"}), agent.Deny, `deny_write "tests/**"`},
		// Argument rules are the built-in tools': a foreign tool's arguments mean what its server says.
		{"careful", agent.Call{Tool: "fs__write_file", Class: agent.ClassWrite, Origin: "mcp:fs", Args: map[string]any{"path": "tests/a"}}, agent.Allow, "class write"},
		{"stricter", write("docs/x.md"), agent.Deny, `deny_write "docs"`},
		{"stricter", write("tests/x.md"), agent.Deny, `deny_write "tests/**"`},
		{"stricter", builtinCall("list_dir", agent.ClassRead, nil), agent.Deny, "tools.list_dir"},
		{"stricter", agent.Call{Tool: "x__y", Class: "tools", Origin: "mcp:x"}, agent.Allow, "class tools"},
		// Ask goes to the approver (none: deny), but argument rules deny first.
		{"stricter", run("go test"), agent.Deny, "class exec"},
		{"stricter", run("make"), agent.Deny, "allow_commands"},
	}
	for _, tt := range tests {
		name := tt.profile + " " + tt.call.Tool + " " + tt.wantRule
		t.Run(name, func(t *testing.T) {
			prof, err := ps.Lookup(tt.profile)
			if err != nil {
				t.Fatal(err)
			}
			pol := &agent.ProfilePolicy{Profile: prof, Workspace: ws}
			v := pol.Decide(context.Background(), tt.call)
			if v.Decision != tt.want || v.Rule != tt.wantRule {
				t.Errorf("Decide(%+v) = %s by %q (%s), want %s by %q", tt.call.Args, v.Decision, v.Rule, v.Reason, tt.want, tt.wantRule)
			}
			if v.Decision == agent.Deny && v.Reason == "" {
				t.Errorf("a denial without a reason: %+v", v)
			}
		})
	}
}

func TestParseProfilesErrors(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"bad decision", "[profiles.x]\nexec = \"yes\"", `run.toml: field profiles.x.exec: expected "allow", "ask" or "deny", got "yes"`},
		{"decision not a string", "[profiles.x.tools]\nrun_command = 1", "field profiles.x.tools.run_command: expected \"allow\", \"ask\" or \"deny\", got a number"},
		{"unknown field", "[profiles.x]\ncount = 3", "field profiles.x.count: unknown field"},
		{"not a table", "[profiles]\nx = \"full\"", "field profiles.x: expected a table"},
		{"built-in name", "[profiles.full]\nread = \"deny\"", "field profiles.full: is a built-in profile name"},
		{"commands not a list", "[profiles.x]\nallow_commands = \"go test\"", "field profiles.x.allow_commands: expected an array of strings, got a string"},
		{"command not a string", "[profiles.x]\nallow_commands = [1]", "field profiles.x.allow_commands[0]: expected a string"},
		{"command with an operator", "[profiles.x]\nallow_commands = [\"go test\", \"make && make install\"]", "field profiles.x.allow_commands[1]: \"make && make install\" holds a shell operator"},
		{"empty command", "[profiles.x]\nallow_commands = [\" \"]", "field profiles.x.allow_commands[0]: empty prefix"},
		{"bad glob", "[profiles.x]\ndeny_write = [\"ok/*\", \"[bad\"]", "field profiles.x.deny_write[1]: \"[bad\" is not a valid glob"},
		{"dotdot glob", "[profiles.x]\ndeny_write = [\"../x\"]", "field profiles.x.deny_write[0]"},
		{"unknown base", "[profiles.x]\nextends = \"nope\"", "field profiles.x.extends: no profile \"nope\" (expected one of: ask-exec, full, no-exec, read-only, standard, x)"},
		{"loop", "[profiles.a]\nextends = \"b\"\n[profiles.b]\nextends = \"a\"", "profiles extend each other in a loop: a -> b -> a"},
		{"classes not a table", "[profiles.x]\nclasses = \"read\"", "field profiles.x.classes: expected a table"},
		{"command with a vertical tab", "[profiles.x]\nallow_commands = [\"go\\u000Btest\"]", "field profiles.x.allow_commands[0]: \"go\\vtest\" holds the character '\\v'"},
		{"command with a no-break space", "[profiles.x]\nallow_commands = [\"go\\u00A0test\"]", "field profiles.x.allow_commands[0]: \"go\\u00a0test\" holds the character '\\u00a0'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := profilesFrom(t, tt.src)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

// allow_commands reads words as /bin/sh splits them, on spaces and tabs
// only: any other space or control character is refused, or a command the
// shell runs as another program could pass a rule.
func TestAllowCommandsSplitLikeTheShell(t *testing.T) {
	ps, err := profilesFrom(t, "[profiles.x]\nextends = \"standard\"\nallow_commands = [\"./check.sh\", \"go\ttest\"]")
	if err != nil {
		t.Fatal(err)
	}
	prof, err := ps.Lookup("x")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		command string
		want    agent.Decision
	}{
		{"./check.sh", agent.Allow},
		{"./check.sh -v", agent.Allow},
		{"./check.sh\t-v", agent.Allow},
		{" \t./check.sh  -v ", agent.Allow},
		{"go test ./...", agent.Allow},
		{"go\ttest ./...", agent.Allow},
		{"./check.sh\vx", agent.Deny},     // sh runs "./check.sh\vx", another file
		{"./check.sh\fx", agent.Deny},     // form feed
		{"./check.sh\rx", agent.Deny},     // carriage return
		{"./check.sh\u00a0x", agent.Deny}, // no-break space
		{"./check.sh\u2003x", agent.Deny}, // em space
		{"./check.sh\u0085x", agent.Deny}, // next line
		{"./check.sh\x00x", agent.Deny},   // NUL
		{"./check.sh\x1bx", agent.Deny},   // escape
		{"go\vtest", agent.Deny},
		{"go\u00a0test ./...", agent.Deny},
		{"./check.sh -v\v", agent.Deny}, // after the prefix too
		{"./check.shx", agent.Deny},
	}
	pol := &agent.ProfilePolicy{Profile: prof}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.command), func(t *testing.T) {
			v := pol.Decide(context.Background(), builtinCall("run_command", agent.ClassExec, map[string]any{"command": tt.command}))
			if v.Decision != tt.want {
				t.Errorf("Decide(%q) = %s by %q (%s), want %s", tt.command, v.Decision, v.Rule, v.Reason, tt.want)
			}
			if v.Decision == agent.Deny && (v.Rule != "allow_commands" || v.Reason == "") {
				t.Errorf("Decide(%q): denied by %q (%s), want allow_commands with a reason", tt.command, v.Rule, v.Reason)
			}
		})
	}
}

// Bad [profiles] and [sandbox] fields are *tasks.FieldError, like the run
// file's other fields, so that the command exits with a usage error.
func TestConfigErrorsAreFieldErrors(t *testing.T) {
	tests := []struct {
		name      string
		err       func() error
		wantField string
	}{
		{"profile decision", func() error {
			_, err := profilesFrom(t, "[profiles.x]\nexec = \"yes\"")
			return err
		}, "profiles.x.exec"},
		{"profile extends", func() error {
			_, err := profilesFrom(t, "[profiles.x]\nextends = \"nope\"")
			return err
		}, "profiles.x.extends"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.err()
			var fe *tasks.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v (%T), want a *tasks.FieldError", err, err)
			}
			if fe.File != "run.toml" || fe.Field != tt.wantField || fe.Msg == "" {
				t.Errorf("FieldError{File: %q, Field: %q, Msg: %q}, want file run.toml, field %s and a message", fe.File, fe.Field, fe.Msg, tt.wantField)
			}
		})
	}
}

func TestLookupUnknownProfile(t *testing.T) {
	ps, err := profilesFrom(t, testProfiles)
	if err != nil {
		t.Fatal(err)
	}
	_, err = ps.Lookup("paranoid")
	if err == nil || !strings.Contains(err.Error(), "careful") || !strings.Contains(err.Error(), "read-only") {
		t.Fatalf("Lookup of an unknown profile: %v, want the defined and built-in names listed", err)
	}
	if p, err := agent.Profiles(nil).Lookup(""); err != nil || p.Name != agent.ProfileStandard {
		t.Fatalf(`Lookup("") = %v, %v, want the standard profile`, p, err)
	}
	if !agent.BuiltinProfiles()["full"].Network() || agent.BuiltinProfiles()["standard"].Network() {
		t.Error("Network(): only the full profile allows the network")
	}
}

// fakeTTY is a terminal with a person's answer already typed.
type fakeTTY struct {
	in  io.Reader
	out *strings.Builder
}

func (f fakeTTY) Read(p []byte) (int, error)  { return f.in.Read(p) }
func (f fakeTTY) Write(p []byte) (int, error) { return f.out.Write(p) }
func (f fakeTTY) Close() error                { return nil }

func TestAskUnderEachApprover(t *testing.T) {
	log := filepath.Join(t.TempDir(), "requests.jsonl")
	t.Setenv("APPROVER_LOG", log)
	script, err := filepath.Abs("testdata/approver.sh")
	if err != nil {
		t.Fatal(err)
	}
	judge, err := agent.ParseApprover("command:testdata/approver.sh", ".")
	if err != nil {
		t.Fatal(err)
	}
	slow := &agent.CommandApprover{Argv: []string{script}, Timeout: 300e6}
	var screen strings.Builder
	person := func(answer string) agent.Approver {
		return &agent.TerminalApprover{Open: func() (io.ReadWriteCloser, error) {
			return fakeTTY{strings.NewReader(answer), &screen}, nil
		}}
	}
	tests := []struct {
		name       string
		approver   agent.Approver
		command    string
		want       agent.Decision
		wantName   string
		wantReason string
	}{
		{"none", nil, "ls", agent.Deny, "deny", "refuses every call"},
		{"deny", agent.DenyApprover{}, "ls", agent.Deny, "deny", "refuses every call"},
		{"allow", agent.AllowApprover{}, "ls", agent.Allow, "allow", ""},
		{"command allows", judge, "ls please", agent.Allow, "command:" + script, ""},
		{"command refuses", judge, "ls", agent.Deny, "command:" + script, "the approver refused it: not polite enough"},
		{"command answers JSON", judge, "json", agent.Deny, "command:" + script, "the JSON answer says no"},
		{"command fails", judge, "crash", agent.Deny, "command:" + script, "approver crashed"},
		{"command mumbles", judge, "mumble", agent.Deny, "command:" + script, `answered "maybe later", expected a line starting with allow or deny`},
		{"command too slow", slow, "slow", agent.Deny, "command:" + script, "no answer within"},
		{"terminal yes", person("y\n"), "ls", agent.Allow, "terminal", ""},
		{"terminal no", person("n\n"), "ls", agent.Deny, "terminal", "refused"},
		{"terminal closed", person(""), "ls", agent.Deny, "terminal", "read the answer"},
	}
	prof := agent.BuiltinProfiles()[agent.ProfileAskExec]
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pol := &agent.ProfilePolicy{Profile: prof, Approver: tt.approver, Labels: map[string]string{"arm": "a1", "task": "t1"}}
			v := pol.Decide(context.Background(), builtinCall("run_command", agent.ClassExec, map[string]any{"command": tt.command}))
			if v.Decision != tt.want || v.Approver != tt.wantName || v.Rule != "class exec" {
				t.Errorf("verdict %+v, want %s by %s under rule class exec", v, tt.want, tt.wantName)
			}
			if !strings.Contains(v.Reason, tt.wantReason) {
				t.Errorf("reason %q, want it to contain %q", v.Reason, tt.wantReason)
			}
		})
	}
	if !strings.Contains(screen.String(), "run_command") || !strings.Contains(screen.String(), "Allow this call?") {
		t.Errorf("the terminal was shown %q", screen.String())
	}
	// What the approver command was given.
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(data), "\n")
	var req agent.ApprovalRequest
	if err := json.Unmarshal([]byte(first), &req); err != nil {
		t.Fatalf("the approver got %q: %v", first, err)
	}
	if req.Tool != "run_command" || req.Class != agent.ClassExec || req.Origin != "builtin" || req.Profile != "ask-exec" ||
		req.Rule != "class exec" || req.Arguments["command"] != "ls please" || req.Labels["arm"] != "a1" {
		t.Errorf("the approver got %+v", req)
	}
}

func TestParseApprover(t *testing.T) {
	script, err := filepath.Abs("testdata/approver.sh")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		spec, want, wantErr string
	}{
		{"", "deny", ""},
		{"deny", "deny", ""},
		{" allow ", "allow", ""},
		{"command:testdata/approver.sh --strict", "command:" + script + " --strict", ""},
		{"command:sh -c true", "command:sh -c true", ""},
		{"command:", "", "no program"},
		{"command:testdata/missing.sh", "", "no such file"},
		{"command:./testdata", "", "not an executable file"},
		{"command:no-such-program-anywhere", "", "not found"},
		{"judge", "", "expected deny, allow, terminal or command:PROGRAM ARGS"},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			a, err := agent.ParseApprover(tt.spec, ".")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseApprover(%q) error %v, want %q", tt.spec, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if a.Name() != tt.want {
				t.Errorf("Name() = %q, want %q", a.Name(), tt.want)
			}
		})
	}
}

func TestDeniedCallSeesThePolicyMessage(t *testing.T) {
	ps, err := profilesFrom(t, testProfiles)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ws, err := agent.NewWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	reg := agent.NewRegistry()
	for _, tool := range agent.Builtins(ws, agent.BuiltinOptions{}) {
		if err := reg.Add(tool); err != nil {
			t.Fatal(err)
		}
	}
	srv := ollamatest.New(ollamatest.Turns(ollamatest.Reply{Calls: []ollamatest.Call{
		{Name: "write_file", Args: map[string]any{"path": "tests/test_x.py", "content": "assert True"}},
		{Name: "run_command", Args: map[string]any{"command": "cat /etc/hostname"}},
		{Name: "write_file", Args: map[string]any{"path": "fix.py", "content": "x = 1"}},
	}}))
	t.Cleanup(srv.Close)
	model, err := agent.NewOllama(srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	prof, _ := ps.Lookup("careful")
	tr := agent.Run(context.Background(), agent.Config{
		Model: model, ModelName: "fake", Instruction: "fix it", Tools: reg, MaxTurns: 3,
		Options: map[string]any{"num_ctx": 4096},
		Policy:  &agent.ProfilePolicy{Profile: prof, Approver: agent.AllowApprover{}, Workspace: ws},
	})
	if len(tr.Calls) != 3 {
		t.Fatalf("%d calls recorded, want 3: %+v", len(tr.Calls), tr.Calls)
	}
	want := []struct {
		decision agent.Decision
		rule     string
	}{
		{agent.Deny, `deny_write "tests/**"`},
		{agent.Deny, "allow_commands"},
		{agent.Allow, "class write"},
	}
	for i, c := range tr.Calls {
		if c.Decision != want[i].decision || c.Rule != want[i].rule || c.Approver != "" {
			t.Errorf("call %d (%s) recorded as %s / %q / %q, want %s / %q / no approver", i, c.Tool, c.Decision, c.Rule, c.Approver, want[i].decision, want[i].rule)
		}
		if c.Decision == agent.Deny {
			if c.ErrorKind != "denied" || !strings.Contains(c.Result, "Denied by policy") || !strings.Contains(c.Result, "retrying will not help") {
				t.Errorf("call %d observation: %s", i, c.Result)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "tests")); err == nil {
		t.Error("the denied write ran")
	}
	if _, err := os.Stat(filepath.Join(dir, "fix.py")); err != nil {
		t.Error("the allowed write did not run")
	}
	// The model read the message.
	var seen bool
	for _, m := range srv.Requests()[1].Messages {
		seen = seen || (m.Role == "tool" && strings.Contains(m.Content, "Denied by policy") && strings.Contains(m.Content, "only commands starting with one of these are allowed: go test, python3 -m unittest"))
	}
	if !seen {
		t.Error("the second request does not show the model the policy message of the denied command")
	}
}

func TestAskedCallRecordsTheApprover(t *testing.T) {
	ws, err := agent.NewWorkspace(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	reg := agent.NewRegistry()
	for _, tool := range agent.Builtins(ws, agent.BuiltinOptions{}) {
		if err := reg.Add(tool); err != nil {
			t.Fatal(err)
		}
	}
	srv := ollamatest.New(ollamatest.Turns(ollamatest.Reply{Calls: []ollamatest.Call{
		{Name: "run_command", Args: map[string]any{"command": "echo asked"}},
	}}))
	t.Cleanup(srv.Close)
	model, err := agent.NewOllama(srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	tr := agent.Run(context.Background(), agent.Config{
		Model: model, ModelName: "fake", Instruction: "go", Tools: reg, MaxTurns: 2,
		Options: map[string]any{"num_ctx": 4096},
		Policy:  &agent.ProfilePolicy{Profile: agent.BuiltinProfiles()[agent.ProfileAskExec], Approver: agent.AllowApprover{}},
	})
	c := tr.Calls[0]
	if c.Decision != agent.Allow || c.Rule != "class exec" || c.Approver != "allow" || !strings.Contains(c.Result, "asked") {
		t.Fatalf("asked call recorded as %+v", c)
	}
}
