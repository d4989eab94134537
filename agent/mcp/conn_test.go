package mcp

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/tasks"
)

const testIssues = `{"issues": [
 {"id": 4, "title": "Parser rejects trailing comma", "state": "open", "labels": ["parser"], "body": "a, b, fails"},
 {"id": 9, "title": "Old crash", "state": "closed", "labels": ["parser"], "body": "fixed"},
 {"id": 11, "title": "Docs typo", "state": "open", "labels": ["docs"], "body": "recieve",
  "comments": [{"author": "bo", "body": "also in README"}]}
]}`

// testServer declares a server run by the test binary itself in mode.
func testServer(name, mode string, env map[string]string) tasks.Server {
	e := map[string]string{serverModeEnv: mode}
	maps.Copy(e, env)
	return tasks.Server{Name: name, Command: testBinary(), Args: []string{"-test.run=^$"}, Env: e}
}

// testBinary is this test binary, which stands in for bench.
func testBinary() string {
	exe, err := os.Executable()
	if err != nil {
		panic(err)
	}
	return exe
}

func issuesServer(t testing.TB, name string) tasks.Server {
	t.Helper()
	path := filepath.Join(t.TempDir(), "issues.json")
	if err := os.WriteFile(path, []byte(testIssues), 0o644); err != nil {
		t.Fatal(err)
	}
	return testServer(name, "issues", map[string]string{"ISSUES_FILE": path})
}

func connect(t testing.TB, srv tasks.Server, vars Vars, opts Options) *Conn {
	t.Helper()
	c, err := Connect(context.Background(), srv, vars, opts)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func toolNamed(t testing.TB, c *Conn, name string) agent.Tool {
	t.Helper()
	for _, tool := range c.Tools() {
		if tool.Spec().Name == name {
			return tool
		}
	}
	t.Fatalf("no tool %q offered", name)
	return nil
}

// infoNamed returns the catalog entry of the tool the model sees as name.
func infoNamed(t testing.TB, c *Conn, name string) ToolInfo {
	t.Helper()
	for _, ti := range c.Catalog() {
		if ti.Name == name {
			return ti
		}
	}
	t.Fatalf("no tool %q in the catalog", name)
	return ToolInfo{}
}

func call(t testing.TB, c *Conn, name string, args map[string]any) agent.Result {
	t.Helper()
	res, err := toolNamed(t, c, name).Call(context.Background(), args)
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	return res
}

func names(tools []agent.Tool) []string {
	var out []string
	for _, t := range tools {
		out = append(out, t.Spec().Name)
	}
	return out
}

func TestIssueTrackerServer(t *testing.T) {
	srv := issuesServer(t, "issues")
	srv.Classes = map[string]string{"get_issue": "read"}
	srv.DefaultClass = "network"
	c := connect(t, srv, Vars{Workspace: t.TempDir()}, Options{})

	info := c.Info()
	if info.Name != "issues" || info.Transport != "stdio" || info.ProtocolVersion != "2026-07-28" ||
		info.ServerName != "bench-issuetracker" || info.ServerVersion != "1.0.0" {
		t.Errorf("Info = %+v", info)
	}
	if got, want := names(c.Tools()), []string{"issues__get_issue", "issues__list_issues", "issues__search_issues"}; !slices.Equal(got, want) {
		t.Fatalf("tools = %v, want %v", got, want)
	}
	if s := c.Skipped(); len(s) != 0 {
		t.Errorf("skipped: %+v", s)
	}
	for _, tool := range c.Tools() {
		s := tool.Spec()
		want := agent.Class("network")
		if s.Name == "issues__get_issue" {
			want = "read"
		}
		if s.Class != want || s.Origin != "mcp:issues" {
			t.Errorf("%s: class %q origin %q, want %q mcp:issues", s.Name, s.Class, s.Origin, want)
		}
		ti := infoNamed(t, c, s.Name)
		if ti.Annotations == nil || !ti.Annotations.ReadOnlyHint {
			t.Errorf("%s: annotations not recorded: %+v", s.Name, ti.Annotations)
		}
	}
	// Properties keep the order the server declared them in (query, then state).
	search := toolNamed(t, c, "issues__search_issues").Spec()
	if !slices.Equal(search.InputSchema.PropertyOrder, []string{"query", "state"}) {
		t.Errorf("search_issues property order = %v", search.InputSchema.PropertyOrder)
	}
	ot, err := agent.OllamaTool(search)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(ot)
	if i, j := strings.Index(string(b), `"query"`), strings.Index(string(b), `"state"`); i < 0 || j < i {
		t.Errorf("ollama tool does not list query before state: %s", b)
	}

	res := call(t, c, "issues__list_issues", map[string]any{"label": "parser", "state": "all"})
	if res.IsError || !strings.Contains(res.Text, "#4 [open] Parser rejects trailing comma") || !strings.Contains(res.Text, "#9 [closed]") {
		t.Errorf("list_issues: %+v", res)
	}
	res = call(t, c, "issues__get_issue", map[string]any{"id": 11})
	if res.IsError || !strings.Contains(res.Text, "also in README") {
		t.Errorf("get_issue: %+v", res)
	}
	res = call(t, c, "issues__get_issue", map[string]any{"id": 99})
	if !res.IsError || !strings.Contains(res.Text, "no issue #99") {
		t.Errorf("get_issue 99: %+v", res)
	}

	// Arguments are checked against the server's schema before any call.
	reg := agent.NewRegistry()
	for _, tool := range c.Tools() {
		if err := reg.Add(tool); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		tool string
		args map[string]any
		ok   bool
	}{
		{"issues__get_issue", map[string]any{"id": 4}, true},
		{"issues__get_issue", map[string]any{}, false},
		{"issues__get_issue", map[string]any{"id": "4"}, false},
		{"issues__get_issue", map[string]any{"id": 4, "extra": true}, false},
		{"issues__list_issues", map[string]any{"state": "wip"}, false},
		{"issues__search_issues", map[string]any{"query": "typo", "state": "open"}, true},
	} {
		err := reg.Validate(tt.tool, tt.args)
		if (err == nil) != tt.ok {
			t.Errorf("Validate(%s, %v) = %v, want ok=%v", tt.tool, tt.args, err, tt.ok)
		}
	}

	if stderr := c.Close(); strings.Contains(stderr, "panic") {
		t.Errorf("stderr: %s", stderr)
	}
}

func TestRawServerFallsBackToInitialize(t *testing.T) {
	c := connect(t, testServer("raw", "raw", map[string]string{"RAW_ONLY": "echo"}), Vars{}, Options{})
	info := c.Info()
	if info.ProtocolVersion != "2025-06-18" || info.ServerName != "raw-test-server" || info.ServerVersion != "0.0.1" {
		t.Errorf("Info = %+v", info)
	}
	ti := infoNamed(t, c, "raw__echo")
	if ti.Annotations == nil || !ti.Annotations.ReadOnlyHint || ti.Annotations.DestructiveHint == nil || *ti.Annotations.DestructiveHint {
		t.Errorf("annotations = %+v", ti.Annotations)
	}
	if ti.Class != "" || toolNamed(t, c, "raw__echo").Spec().Class != "" {
		t.Errorf("a tool without a class got %q", ti.Class)
	}
}

// TestFaults calls each misbehaving tool and checks the observation, then
// that the server still answers. The tools that never answer run on a
// connection with a short call timeout; the others get the default, so that
// a slow machine (or the race detector) does not turn them into timeouts.
func TestFaults(t *testing.T) {
	srv := testServer("raw", "raw", nil)
	patient := connect(t, srv, Vars{}, Options{})
	srv.CallTimeout = tasks.Duration{Duration: 1500 * time.Millisecond}
	hasty := connect(t, srv, Vars{}, Options{})
	tests := []struct {
		tool    string
		hasty   bool
		isError bool
		want    []string
	}{
		{"raw__fail", false, true, []string{"the disk is full"}},
		{"raw__error_no_text", false, true, []string{"reported an error without saying what"}},
		{"raw__rpc_error", false, true, []string{`server "raw" answered with a protocol error (code -32000): database locked`}},
		{"raw__hang", true, true, []string{`server "raw" did not answer within 1.5s; the call was abandoned`}},
		{"raw__garbage", false, false, []string{"ok after garbage"}},
		{"raw__garbage_only", true, true, []string{"did not answer within 1.5s", "meanwhile the server wrote a stdout line that is not a JSON-RPC message", `{\"jsonrpc\": \"2.0\"`}},
		{"raw__huge", false, false, []string{"BEGINxxxx", "[bench: result cut: showing the first 32768 of 52428805 bytes]"}},
		{"raw__media", false, false, []string{
			"here is everything\n[image/png, 1234 bytes]\n[audio/wav, 10 bytes]\n[resource link file:///notes/a.txt (a.txt, text/plain, 42 bytes)]\n" +
				"[resource file:///x.txt (text/plain)]\nhello\n[resource file:///x.bin: application/octet-stream, 3 bytes]",
		}},
		{"raw__structured", false, false, []string{`{"temperature":21.5}`}},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			c := patient
			if tt.hasty {
				c = hasty
			}
			res := call(t, c, tt.tool, nil)
			if res.IsError != tt.isError {
				t.Errorf("IsError = %v, want %v; text %q", res.IsError, tt.isError, clip(res.Text, 300))
			}
			for _, w := range tt.want {
				if !strings.Contains(res.Text, w) {
					t.Errorf("observation %q lacks %q", clip(res.Text, 400), w)
				}
			}
			if tt.tool == "raw__huge" && len(res.Text) > 33<<10 {
				t.Errorf("huge result not cut: %d bytes", len(res.Text))
			}
			if after := call(t, c, "raw__echo", map[string]any{"text": "still here"}); after.IsError || after.Text != "echo: still here" {
				t.Errorf("next call after %s: %+v", tt.tool, after)
			}
		})
	}
	stderr := patient.Close()
	for _, w := range []string{`[bench] dropped a stdout line that is not a JSON-RPC message (16 bytes): "this is not JSON"`, "not JSON-RPC"} {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, stderr)
		}
	}
}

func TestCrashMidCall(t *testing.T) {
	healthy := connect(t, testServer("other", "raw", map[string]string{"RAW_ONLY": "echo"}), Vars{}, Options{})
	c := connect(t, testServer("raw", "raw", map[string]string{"RAW_ONLY": "echo,crash"}), Vars{}, Options{})
	res := call(t, c, "raw__crash", nil)
	if !res.IsError || !strings.Contains(res.Text, "the server exited without answering the call (exit status 3)") ||
		!strings.Contains(res.Text, `the tools of server "raw" are unavailable for the rest of this attempt`) {
		t.Errorf("crash: %+v", res)
	}
	start := time.Now()
	res = call(t, c, "raw__echo", map[string]any{"text": "hello?"})
	if !res.IsError || !strings.Contains(res.Text, "raw__echo cannot be called: the server exited without answering the call (exit status 3)") {
		t.Errorf("call after crash: %+v", res)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Logf("call to a dead server took %s", d) // reported, not asserted: the machine is shared
	}
	if res := call(t, healthy, "other__echo", map[string]any{"text": "fine"}); res.IsError || res.Text != "echo: fine" {
		t.Errorf("a healthy server after another crashed: %+v", res)
	}
	if stderr := c.Close(); !strings.Contains(stderr, "panic: crash requested") {
		t.Errorf("stderr lacks the crash: %q", stderr)
	}
}

func TestBannerOnStdout(t *testing.T) {
	c := connect(t, testServer("raw", "raw", map[string]string{"RAW_ONLY": "echo", "RAW_BANNER": "1"}), Vars{}, Options{})
	if res := call(t, c, "raw__echo", map[string]any{"text": "x"}); res.IsError {
		t.Errorf("echo: %+v", res)
	}
	if stderr := c.Close(); !strings.Contains(stderr, `"raw server ready"`) {
		t.Errorf("the banner is not noted: %q", stderr)
	}
}

func TestSchemasAndSkipped(t *testing.T) {
	c := connect(t, testServer("raw", "raw", map[string]string{"RAW_PAGE": "4"}), Vars{}, Options{})
	all := rawCatalogNames()
	if got := len(c.Catalog()); got != len(all)-1 { // "dup" is one entry
		t.Errorf("catalog has %d tools, want %d (pagination followed?)", got, len(all)-1)
	}
	skipped := map[string]string{}
	for _, s := range c.Skipped() {
		skipped[s.Tool] = s.Reason
	}
	wantSkipped := map[string]string{
		"recursive": "is recursive and cannot be represented",
		"rootanyof": "anyOf at its root",
		"remoteref": "is not local to the schema",
		"bad name!": `has the character ' '`,
		"dup":       `the server lists 2 tools named "dup"`,
	}
	for tool, why := range wantSkipped {
		if !strings.Contains(skipped[tool], why) {
			t.Errorf("skipped[%q] = %q, want it to say %q", tool, skipped[tool], why)
		}
	}
	if len(skipped) != len(wantSkipped) {
		t.Errorf("skipped = %v", skipped)
	}

	reg := agent.NewRegistry()
	for _, tool := range c.Tools() {
		if _, err := agent.OllamaTool(tool.Spec()); err != nil {
			t.Errorf("%s: %v", tool.Spec().Name, err)
		}
		if err := reg.Add(tool); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		tool string
		args string
		ok   bool
	}{
		{"raw__refs", `{"where": {"city": "Delft", "country": "NL"}, "when": "2025-05-01"}`, true},
		{"raw__refs", `{"where": {"country": "NL"}}`, false},                 // city required (inlined $defs)
		{"raw__refs", `{"where": {"city": "Gent", "country": "BE"}}`, false}, // const
		{"raw__zodref", `{"zeta": [{"x": 1}], "alpha": [{"x": 2}]}`, true},
		{"raw__zodref", `{"zeta": [], "alpha": [{"y": 2}]}`, false}, // #/properties/zeta/items inlined
		{"raw__zodref", `{"zeta": [], "other": 1}`, false},
		{"raw__allof", `{"a": "x", "b": 1}`, true},
		{"raw__allof", `{"b": 1}`, false},
		{"raw__allof", `{"a": "x", "b": 0}`, false},
		{"raw__echo", `{"text": 5}`, false},
	}
	for _, tt := range tests {
		var args map[string]any
		if err := json.Unmarshal([]byte(tt.args), &args); err != nil {
			t.Fatal(err)
		}
		if err := reg.Validate(tt.tool, args); (err == nil) != tt.ok {
			t.Errorf("Validate(%s, %s) = %v, want ok=%v", tt.tool, tt.args, err, tt.ok)
		}
	}

	refs := toolNamed(t, c, "raw__refs").Spec()
	ot, err := agent.OllamaTool(refs)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(ot.Function.Parameters)
	for _, w := range []string{`"where"`, `"city"`, `"enum":["NL"]`, `"Day of departure"`, `(required: city)`} {
		if !strings.Contains(string(b), w) {
			t.Errorf("refs as shown to the model lacks %s: %s", w, b)
		}
	}
	if strings.Contains(string(b), "$ref") {
		t.Errorf("refs still has a $ref: %s", b)
	}
	zod := toolNamed(t, c, "raw__zodref").Spec()
	if !slices.Equal(zod.InputSchema.PropertyOrder, []string{"zeta", "alpha", "mode"}) {
		t.Errorf("zodref order = %v", zod.InputSchema.PropertyOrder)
	}
	// The raw schema is kept as the server sent it.
	ti := infoNamed(t, c, "raw__refs")
	if !strings.Contains(string(ti.InputSchema), `"where":{"$ref":"#/$defs/place"}`) {
		t.Errorf("raw schema not kept: %s", ti.InputSchema)
	}
}

func rawCatalogNames() []string {
	var out []string
	for _, t := range rawCatalog() {
		out = append(out, t.Name)
	}
	return out
}

func TestPoisonedDescriptionIsFlagged(t *testing.T) {
	c := connect(t, testServer("raw", "raw", map[string]string{"RAW_ONLY": "echo,poisoned"}), Vars{}, Options{})
	var poisoned, echo ToolInfo
	for _, ti := range c.Catalog() {
		switch ti.Tool {
		case "poisoned":
			poisoned = ti
		case "echo":
			echo = ti
		}
	}
	if !poisoned.Offered {
		t.Errorf("flags must not block: %+v", poisoned)
	}
	kinds := map[string]bool{}
	for _, f := range poisoned.Flags {
		kinds[f.Kind+" "+f.Where] = true
	}
	for _, w := range []string{
		"instructions description", "secrets description", "path description", "tool-mention description",
		"invisible-unicode description", "secrets inputSchema.properties.note.description",
	} {
		if !kinds[w] {
			t.Errorf("no flag %q in %v", w, poisoned.Flags)
		}
	}
	if len(echo.Flags) != 0 {
		t.Errorf("echo flagged: %v", echo.Flags)
	}
}

func TestAllowListAndClasses(t *testing.T) {
	srv := testServer("raw", "raw", nil)
	srv.Tools = []string{"echo", "fail"}
	srv.Classes = map[string]string{"echo": "read", "hang": "exec"}
	c := connect(t, srv, Vars{}, Options{})
	if got := names(c.Tools()); !slices.Equal(got, []string{"raw__echo", "raw__fail"}) {
		t.Errorf("tools = %v", got)
	}
	for _, ti := range c.Catalog() {
		if ti.Tool == "hang" && (!ti.Excluded || ti.Offered || ti.Class != "exec") {
			t.Errorf("hang: %+v", ti)
		}
	}
	for _, s := range c.Skipped() {
		if s.Tool == "hang" {
			t.Errorf("an allow-list exclusion is reported as skipped")
		}
	}

	tests := []struct {
		name   string
		modify func(*tasks.Server)
		want   string
	}{
		{"unknown tool", func(s *tasks.Server) { s.Tools = []string{"echo", "nope"} }, `tools allow-list names "nope", which the server does not offer`},
		{"unofferable tool", func(s *tasks.Server) { s.Tools = []string{"recursive"} }, `tools allow-list names "recursive", which cannot be offered: input schema`},
		{"unknown class", func(s *tasks.Server) { s.Classes = map[string]string{"ecoh": "read"} }, `classes names "ecoh", which the server does not offer`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := testServer("raw", "raw", nil)
			tt.modify(&srv)
			c, err := Connect(context.Background(), srv, Vars{}, Options{})
			if err == nil {
				c.Close()
				t.Fatal("Connect: no error")
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), `mcp server "raw"`) {
				t.Errorf("error %q lacks %q", err, tt.want)
			}
		})
	}
}

// TestLenientKeepsMismatches: with Options.Lenient, every mismatch between
// the declaration and the server is a warning, in the order a strict
// Connect would meet them, and each tool says where its class came from.
func TestLenientKeepsMismatches(t *testing.T) {
	srv := testServer("raw", "raw", map[string]string{"RAW_ONLY": "echo,fail,recursive"})
	srv.Tools = []string{"echo", "nope", "recursive"}
	srv.DefaultClass = "read"
	srv.Classes = map[string]string{"fail": "exec", "ghost": "read", "echo": "network"}
	if _, err := Connect(context.Background(), srv, Vars{}, Options{}); err == nil || !strings.Contains(err.Error(), `tools allow-list names "nope"`) {
		t.Fatalf("strict Connect: %v", err)
	}
	c := connect(t, srv, Vars{}, Options{Lenient: true})
	want := []string{
		`tools allow-list names "nope", which the server does not offer (it offers: echo, fail, recursive)`,
		`tools allow-list names "recursive", which cannot be offered: input schema: `,
		`classes names "ghost", which the server does not offer (it offers: echo, fail, recursive)`,
	}
	got := c.Warnings()
	if len(got) != len(want) {
		t.Fatalf("Warnings = %q", got)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("Warnings[%d] = %q, want %q...", i, got[i], want[i])
		}
	}
	if names := names(c.Tools()); !slices.Equal(names, []string{"raw__echo"}) {
		t.Errorf("tools = %v", names)
	}
	for _, tt := range []struct {
		tool   string
		class  agent.Class
		source string
	}{
		{"raw__echo", "network", ClassFromClasses},
		{"raw__fail", "exec", ClassFromClasses},
		{"raw__recursive", "read", ClassFromDefault},
	} {
		if ti := infoNamed(t, c, tt.tool); ti.Class != tt.class || ti.ClassSource != tt.source {
			t.Errorf("%s: class %q from %q, want %q from %q", tt.tool, ti.Class, ti.ClassSource, tt.class, tt.source)
		}
	}
	srv.DefaultClass = ""
	srv.Classes = nil
	c = connect(t, srv, Vars{}, Options{Lenient: true})
	if ti := infoNamed(t, c, "raw__echo"); ti.Class != "" || ti.ClassSource != ClassFromNone {
		t.Errorf("no class: %q from %q", ti.Class, ti.ClassSource)
	}
}

// fakeBuiltin is a built-in tool, for collisions.
type fakeBuiltin struct{ name string }

func (f fakeBuiltin) Spec() agent.Spec {
	return agent.Spec{Name: f.name, Class: agent.ClassRead, Origin: agent.OriginBuiltin}
}
func (fakeBuiltin) Call(context.Context, map[string]any) (agent.Result, error) {
	return agent.Result{}, nil
}

func TestNameCollisions(t *testing.T) {
	// "a" + "__" + "_read_file" and "a_" + "__" + "read_file" are the same name.
	a := connect(t, testServer("a", "raw", map[string]string{"RAW_ONLY": "x", "RAW_EXTRA": "_read_file"}), Vars{}, Options{})
	b := connect(t, testServer("a_", "raw", map[string]string{"RAW_ONLY": "x", "RAW_EXTRA": "read_file"}), Vars{}, Options{})

	reg := agent.NewRegistry()
	if err := reg.Add(fakeBuiltin{"read_file"}); err != nil {
		t.Fatal(err)
	}
	for _, tool := range a.Tools() {
		if err := reg.Add(tool); err != nil {
			t.Fatalf("a tool named like a built-in is namespaced and must not collide: %v", err)
		}
	}
	var err error
	for _, tool := range b.Tools() {
		if err = reg.Add(tool); err != nil {
			break
		}
	}
	if err == nil || !strings.Contains(err.Error(), `"a___read_file"`) || !strings.Contains(err.Error(), "mcp:a_") || !strings.HasSuffix(err.Error(), "from mcp:a") {
		t.Errorf("collision error = %v", err)
	}

	// A built-in that happens to have a namespaced-looking name.
	reg = agent.NewRegistry()
	if err := reg.Add(fakeBuiltin{"a___read_file"}); err != nil {
		t.Fatal(err)
	}
	err = reg.Add(a.Tools()[0])
	if err == nil || !strings.Contains(err.Error(), "builtin") || !strings.Contains(err.Error(), "mcp:a") {
		t.Errorf("collision with a built-in: %v", err)
	}
}

func TestStartFailures(t *testing.T) {
	tests := []struct {
		name string
		srv  tasks.Server
		vars Vars
		want []string
	}{
		{"exits at once", testServer("broken", "exit", nil), Vars{},
			[]string{`mcp server "broken": connect:`, "(the server exited: exit status 1)", "stderr ends with:\n  starting up\n  fatal: cannot open database /nonexistent/db"}},
		{"list fails", testServer("broken", "raw", map[string]string{"RAW_LIST_FAIL": "1"}), Vars{},
			[]string{`mcp server "broken": list tools:`, "index missing", "tools are not ready"}},
		{"no such command", tasks.Server{Name: "broken", Command: "/nonexistent/mcp-server"}, Vars{},
			[]string{`mcp server "broken": start: run /nonexistent/mcp-server:`, "no such file"}},
		{"placeholder without value", tasks.Server{Name: "broken", Command: "cat", Args: []string{"{data}/x.json"}}, Vars{},
			[]string{`mcp server "broken": start: args[0] uses {data}, which has no value here`}},
		{"bench is a test binary", tasks.Server{Name: "broken", Command: "{bench}", Args: []string{"mcp", "serve", "issues"}}, Vars{},
			[]string{"command uses {bench}, which has no value here (mcp.test is a Go test binary, not bench: build bench and give its path)"}},
		{"bench given as a test binary", tasks.Server{Name: "broken", Command: "{bench}"}, Vars{Bench: "/tmp/go-build1/b001/runner.test"},
			[]string{"(runner.test is a Go test binary, not bench"}},
		{"bad url", tasks.Server{Name: "web", URL: "ftp://example.invalid/"}, Vars{},
			[]string{`mcp server "web": url "ftp://example.invalid/": expected an http:// or https:// URL`}},
		{"both", tasks.Server{Name: "x", URL: "http://127.0.0.1:1/", Command: "cat"}, Vars{},
			[]string{"expected command or url, not both"}},
		{"neither", tasks.Server{Name: "x"}, Vars{},
			[]string{`mcp server "x": expected command (stdio) or url (Streamable HTTP)`}},
		{"no name", tasks.Server{Command: "cat"}, Vars{},
			[]string{"mcp server name missing"}},
		{"name with the separator", tasks.Server{Name: "a__b", Command: "cat"}, Vars{},
			[]string{`mcp server name "a__b": expected letters`}},
		{"name with a space", tasks.Server{Name: "a b", Command: "cat"}, Vars{},
			[]string{`mcp server name "a b": expected letters`}},
		{"name with a slash", tasks.Server{Name: "a/b", URL: "http://127.0.0.1:1/"}, Vars{},
			[]string{`mcp server name "a/b": expected letters`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Connect(context.Background(), tt.srv, tt.vars, Options{StartTimeout: 20 * time.Second})
			if err == nil {
				c.Close()
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

func TestWorkspaceAndEnvironment(t *testing.T) {
	t.Setenv("BENCH_TEST_SECRET", "hunter2")
	ws := t.TempDir()
	srv := testServer("raw", "raw", map[string]string{"RAW_ONLY": "env", "RAW_DECLARED": "{workspace}/declared"})
	c := connect(t, srv, Vars{Workspace: ws}, Options{})
	res := call(t, c, "raw__env", nil)
	wantWD, _ := filepath.EvalSymlinks(ws)
	for _, w := range []string{"cwd=" + wantWD + "\n", "RAW_DECLARED=" + ws + "/declared\n", "BENCH_TEST_SECRET=\n"} {
		if !strings.Contains(res.Text+"\n", w) {
			t.Errorf("env tool said %q, want %q", res.Text, w)
		}
	}
}

func TestSandboxWrap(t *testing.T) {
	var seen []string
	ws := t.TempDir()
	wrap := func(argv []string) []string {
		seen = slices.Clone(argv)
		return argv
	}
	srv := testServer("raw", "raw", map[string]string{"RAW_ONLY": "echo"})
	c := connect(t, srv, Vars{Workspace: ws}, Options{Wrap: wrap})
	if seen != nil {
		t.Errorf("Wrap called for a server without sandbox = true")
	}
	c.Close()
	srv.Sandbox = true
	connect(t, srv, Vars{Workspace: ws}, Options{Wrap: wrap})
	if len(seen) != 2 || seen[1] != "-test.run=^$" {
		t.Errorf("Wrap saw %v", seen)
	}
	c = connect(t, srv, Vars{}, Options{})
	if stderr := c.Close(); !strings.Contains(stderr, "[bench] sandbox = true, but no sandbox is available") {
		t.Errorf("stderr = %q", stderr)
	}
}

func TestCloseStubbornServer(t *testing.T) {
	srv := testServer("raw", "raw", map[string]string{"RAW_ONLY": "echo", "RAW_STUBBORN": "1"})
	c := connect(t, srv, Vars{}, Options{ShutdownGrace: 200 * time.Millisecond})
	pid := c.proc.cmd.Process.Pid
	c.Close()
	select {
	case <-c.proc.exited:
	default:
		t.Fatalf("process %d still running after Close", pid)
	}
	if c.Close() != c.Close() {
		t.Error("Close is not idempotent")
	}
}

func TestCallAfterAttemptEnds(t *testing.T) {
	c := connect(t, testServer("raw", "raw", map[string]string{"RAW_ONLY": "hang"}), Vars{}, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		time.Sleep(100 * time.Millisecond)
		cancel()
	}()
	_, err := toolNamed(t, c, "raw__hang").Call(ctx, nil)
	if err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Errorf("Call with the attempt's context cancelled: %v", err)
	}
}

// A nested allOf that cannot be merged is left for agent.OllamaTool to
// refuse, so the tool is not offered.
func TestNestedAllOfConflict(t *testing.T) {
	s, err := agent.ParseSchema([]byte(`{"type": "object", "properties": {"p": {"allOf": [{"type": "string"}, {"type": "integer"}]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if reason := checkSpec(agent.Spec{Name: "t", InputSchema: s}); !strings.Contains(reason, "allOf cannot be represented") {
		t.Errorf("checkSpec = %q", reason)
	}
}

// What a result carries goes to the model once: an image mirrored in the
// structured content is not sent again as base64.
func TestResultSentOnce(t *testing.T) {
	c := connect(t, testServer("raw", "raw", map[string]string{"RAW_ONLY": "picture,echo"}), Vars{}, Options{})
	res := call(t, c, "raw__picture", nil)
	if res.IsError || res.Text != "[image/png, 360000 bytes]" {
		t.Errorf("picture: %+v, want only the image's summary", clipResult(res))
	}
}

// A tool's outputSchema holds its results to it: a mismatch, a result
// without structured content, or a schema that is none are error
// observations with the reason; the model still reads what came back.
func TestOutputSchema(t *testing.T) {
	c := connect(t, testServer("raw", "raw", map[string]string{"RAW_ONLY": "typed,badout"}), Vars{}, Options{})
	if ti := infoNamed(t, c, "raw__typed"); !strings.Contains(string(ti.OutputSchema), "celsius") || ti.OutputSchemaError != "" {
		t.Errorf("typed: output schema %s, error %q", ti.OutputSchema, ti.OutputSchemaError)
	}
	if ti := infoNamed(t, c, "raw__badout"); ti.OutputSchemaError == "" || !ti.Offered {
		t.Errorf("badout: offered %v, output schema error %q (want offered, with the error)", ti.Offered, ti.OutputSchemaError)
	}
	for _, tt := range []struct {
		tool, how string
		isError   bool
		want      []string
	}{
		{"raw__typed", "good", false, []string{`{"celsius":21.5}`}},
		{"raw__typed", "bad", true, []string{`raw__typed: the result of server "raw" cannot be trusted: its structuredContent does not match its outputSchema`, "celsius", `It was:` + "\n" + `{"celsius":"warm"}`}},
		{"raw__typed", "none", true, []string{"it declares an outputSchema but returned no structuredContent", "21.5 degrees"}},
		{"raw__badout", "good", true, []string{"its outputSchema is not a JSON Schema bench can check"}},
	} {
		res := call(t, c, tt.tool, map[string]any{"how": tt.how})
		if res.IsError != tt.isError || (tt.isError && res.Kind != "bad_output") {
			t.Errorf("%s %s: IsError %v kind %q, want %v", tt.tool, tt.how, res.IsError, res.Kind, tt.isError)
		}
		for _, w := range tt.want {
			if !strings.Contains(res.Text, w) {
				t.Errorf("%s %s: %q lacks %q", tt.tool, tt.how, res.Text, w)
			}
		}
	}
}

func clipResult(r agent.Result) agent.Result {
	r.Text = clip(r.Text, 300)
	return r
}

// A server's requests for what bench does not support are refused at once
// (not left to the server's own timeout), and its log messages are kept
// in its log.
func TestServerRequestsRefused(t *testing.T) {
	c := connect(t, testServer("raw", "raw", map[string]string{"RAW_ONLY": "asks"}), Vars{}, Options{})
	res := call(t, c, "raw__asks", nil)
	if want := "elicitation: error -32601; sampling: error -32601; roots: error -32601"; res.IsError || res.Text != want {
		t.Errorf("asks: %+v, want %q", res, want)
	}
	log := c.Close()
	for _, w := range []string{"[bench] server log (warning db): index is stale", "[bench] the server sent elicitation/create, which was refused at once"} {
		if !strings.Contains(log, w) {
			t.Errorf("log lacks %q:\n%s", w, log)
		}
	}
}

// Every call carries a progress token. Progress extends a call only when
// the declaration sets max_call_time, and never past it, so that a server
// reporting progress without end is still cut; a call abandoned has its
// notifications/cancelled on the wire when Call returns.
func TestProgress(t *testing.T) {
	notes := filepath.Join(t.TempDir(), "notes")
	srv := testServer("raw", "raw", map[string]string{"RAW_ONLY": "slow", "RAW_NOTES": notes})
	srv.CallTimeout = tasks.Duration{Duration: 600 * time.Millisecond}
	fixed := connect(t, srv, Vars{}, Options{ShutdownGrace: 200 * time.Millisecond})
	srv.MaxCallTime = tasks.Duration{Duration: 1500 * time.Millisecond}
	var seen []Progress
	var mu sync.Mutex
	extended := connect(t, srv, Vars{}, Options{ShutdownGrace: 200 * time.Millisecond, OnProgress: func(p Progress) {
		mu.Lock()
		seen = append(seen, p)
		mu.Unlock()
	}})

	// 4 steps of 250 ms: past the call timeout, within max_call_time.
	res := call(t, extended, "raw__slow", map[string]any{"steps": 4, "every": 250})
	if res.IsError || res.Text != "done" {
		t.Errorf("with max_call_time: %+v", res)
	}
	var d struct{ Progress Progress }
	if err := json.Unmarshal(res.Details, &d); err != nil || d.Progress.Count != 4 || d.Progress.Total != 4 || d.Progress.Message != "step 4" {
		t.Errorf("details %s (%v), want the 4th of 4 steps", res.Details, err)
	}
	mu.Lock()
	if len(seen) != 4 || seen[3].Tool != "raw__slow" || FormatProgress(seen[3]) != "4/4: step 4" {
		t.Errorf("OnProgress saw %+v", seen)
	}
	mu.Unlock()

	// The same without max_call_time: cut at the call timeout.
	res = call(t, fixed, "raw__slow", map[string]any{"steps": 4, "every": 250})
	if !res.IsError || res.Kind != "timeout" || !strings.Contains(res.Text, "did not answer within 600ms (it reported progress ") ||
		!strings.Contains(res.Text, "/4: step ") || !strings.Contains(res.Text, "; progress extends a call only when the server's declaration sets max_call_time)") {
		t.Errorf("without max_call_time: %+v", res)
	}
	// Progress without end: cut at max_call_time.
	res = call(t, extended, "raw__slow", map[string]any{"steps": -1, "every": 100})
	if !res.IsError || res.Kind != "timeout" || !strings.Contains(res.Text, "did not answer within 1.5s (it reported progress") {
		t.Errorf("endless progress: %+v", res)
	}
	fixed.Close()
	extended.Close()
	b, _ := os.ReadFile(notes)
	if got := strings.Count(string(b), "cancelled bench-"); got != 1 {
		// The endless server never reads its stdin again: only the
		// first abandoned call's notification can be seen.
		t.Errorf("the server saw %d cancellations, want 1:\n%s", got, b)
	}
}

// waitStale waits until the connection has taken an announcement of a new
// tool list (the SDK hands notifications over in its own goroutine).
func waitStale(t *testing.T, c *Conn, announced int64) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); c.announced.Load() < announced; {
		if time.Now().After(deadline) {
			t.Fatalf("%d announcements taken, want %d", c.announced.Load(), announced)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A server's new tool list is read before the next turn, under the same
// trust rules: a new tool named like another origin's is refused, with a
// note; announcements without end make at most maxRelists listings.
func TestToolListChanges(t *testing.T) {
	c := connect(t, testServer("raw", "raw", map[string]string{"RAW_ONLY": "grow,flap,echo"}), Vars{}, Options{})
	reg := agent.NewRegistry()
	for _, tl := range c.Tools() {
		if err := reg.Add(tl); err != nil {
			t.Fatal(err)
		}
	}
	other := toolNamed(t, c, "raw__echo").(*Tool)
	clash := &Tool{spec: other.spec}
	clash.spec.Name, clash.spec.Origin = "raw__clash", "mcp:other"
	if err := reg.Add(clash); err != nil {
		t.Fatal(err)
	}
	refresh := Refresher([]*Conn{c})
	if ch := refresh(context.Background(), reg); ch != nil {
		t.Errorf("changes without an announcement: %+v", ch)
	}
	call(t, c, "raw__grow", nil)
	waitStale(t, c, 1)
	changes := refresh(context.Background(), reg)
	if len(changes) != 1 {
		t.Fatalf("changes %+v, want one", changes)
	}
	ch := changes[0]
	if ch.Origin != "mcp:raw" || !slices.Equal(ch.Added, []string{"raw__grown", "raw__clash"}) || len(ch.Removed)+len(ch.Changed) != 0 {
		t.Errorf("change %+v", ch)
	}
	if len(ch.Notes) != 1 || !strings.Contains(ch.Notes[0], `refused: tool "raw__clash" from mcp:raw collides with the tool of the same name from mcp:other`) {
		t.Errorf("notes %q", ch.Notes)
	}
	if s, ok := reg.Spec("raw__grown"); !ok || s.Origin != "mcp:raw" {
		t.Errorf("raw__grown not registered: %+v", s)
	}
	if s, _ := reg.Spec("raw__clash"); s.Origin != "mcp:other" {
		t.Errorf("raw__clash was taken over: %+v", s)
	}
	if res := call(t, c, "raw__grown", nil); !res.IsError || !strings.Contains(res.Text, "unknown tool grown") {
		// The raw server answers no call of its grown tools: the call
		// reached it, which is what counts here.
		t.Errorf("raw__grown: %+v", res)
	}

	// Announcements without end: one listing each time, at most maxRelists.
	notes := 0
	for i := range maxRelists + 3 {
		call(t, c, "raw__flap", nil)
		waitStale(t, c, int64(1+30*(i+1)))
		for _, ch := range refresh(context.Background(), reg) {
			notes += len(ch.Notes)
		}
	}
	if c.relists != maxRelists || notes < 1 {
		t.Errorf("%d listings, %d notes; want %d listings and a note that later changes are ignored", c.relists, notes, maxRelists)
	}
}
