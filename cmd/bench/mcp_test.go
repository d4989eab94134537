package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/benchhq/bench/servers/issuetracker"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

const mcpTestIssues = `{"issues": [
 {"id": 5, "title": "Parser loses the last token", "state": "open", "labels": ["parser"], "body": "x"},
 {"id": 6, "title": "Docs", "state": "closed", "labels": ["docs"], "body": "y"}]}`

// builtBench builds the bench command once per test binary: the MCP tests
// run it as a real stdio server (`bench mcp serve issues`).
var builtBench = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "bench-bin-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "bench")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		return "", &buildError{out: string(out), err: err}
	}
	return bin, nil
})

type buildError struct {
	out string
	err error
}

func (e *buildError) Error() string { return e.err.Error() + ": " + e.out }

func benchBinary(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to build bench with")
	}
	bin, err := builtBench()
	if err != nil {
		t.Fatalf("build bench: %v", err)
	}
	return bin
}

func issuesFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "issues.json")
	if err := os.WriteFile(path, []byte(mcpTestIssues), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// exampleTask is a task that declares the issue tracker.
var exampleTask = filepath.Join("..", "..", "tasks", "suites", "examples", "mcp-parser-issue")

func runMCP(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := cmdMCP(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestMCPUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{nil, "Usage:"},
		{[]string{"frob"}, `unknown subcommand "frob"`},
		{[]string{"inspect"}, "give a command after --"},
		{[]string{"inspect", "--url", "http://127.0.0.1:1/", "--", "x"}, "not both"},
		{[]string{"inspect", "--server", "a", "--", "x"}, "--server needs --task"},
		{[]string{"inspect", "--header", "A=b", "--", "x"}, "--header needs --url"},
		{[]string{"inspect", "--class", "nope", "--", "x"}, "expected KEY=VALUE"},
		{[]string{"inspect", "--name", "a__b", "--", "x"}, `--name "a__b"`},
		{[]string{"inspect", "--name", "a b", "--", "x"}, `--name "a b"`},
		{[]string{"inspect", "--name", "a/b", "--url", "http://127.0.0.1:1/"}, `--name "a/b"`},
		{[]string{"inspect", "--task", exampleTask, "--env", "FOO=1"}, "--env cannot be used with --task"},
		{[]string{"inspect", "--task", exampleTask, "--header", "A=b"}, "--header cannot be used with --task"},
		{[]string{"inspect", "--task", exampleTask, "--name", "zzz"}, "--name cannot be used with --task"},
		{[]string{"inspect", "--task", exampleTask, "--name", "server"}, "--name cannot be used with --task"},
		{[]string{"inspect", "--task", "/nonexistent/task"}, "no task.toml"},
		{[]string{"serve"}, "expected a server name: issues"},
		{[]string{"serve", "issues"}, "expected --file PATH"},
		{[]string{"serve", "issues", "--nope"}, "flag provided but not defined: -nope"},
	}
	for _, tt := range tests {
		code, _, stderr := runMCP(tt.args...)
		if code != 2 || !strings.Contains(stderr, tt.want) {
			t.Errorf("bench mcp %v: status %d, stderr %q; want 2 and %q", tt.args, code, stderr, tt.want)
		}
		if tt.args != nil && strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("bench mcp %v: more than one line: %q", tt.args, stderr)
		}
	}
}

func TestMCPInspectStdio(t *testing.T) {
	bin := benchBinary(t)
	code, out, stderr := runMCP("inspect", "--name", "issues", "--class", "list_issues=read", "--class", "nope=read",
		"--", bin, "mcp", "serve", "issues", "--file", issuesFile(t))
	if code != 0 {
		t.Fatalf("status %d: %s", code, stderr)
	}
	for _, w := range []string{
		"server      issues (stdio)\n",
		"protocol    2026-07-28\n",
		"implements  bench-issuetracker 1.0.0\n",
		"tools       3 listed: 3 offered\n",
		"\nissues__list_issues\n  class        read (from classes)\n",
		"\nissues__get_issue\n  class        (none: the policy denies every call)\n",
		"annotations  readOnlyHint=true destructiveHint=unset idempotentHint=true openWorldHint=false (recorded, never trusted)",
		"- tool-mention in inputSchema.properties.id.description: list_issues",
		`"enum": [`,
		`classes names "nope", which the server does not offer (it offers: get_issue, list_issues, search_issues) (a run would refuse this)`,
	} {
		if !strings.Contains(out, w) {
			t.Errorf("inspect output lacks %q:\n%s", w, out)
		}
	}
}

func TestMCPInspectJSONAndFailure(t *testing.T) {
	bin := benchBinary(t)
	code, out, stderr := runMCP("inspect", "--json", "--default-class", "read", "--", bin, "mcp", "serve", "issues", "--file", issuesFile(t))
	if code != 0 {
		t.Fatalf("status %d: %s", code, stderr)
	}
	var r struct {
		Info struct {
			ProtocolVersion string `json:"protocol_version"`
		}
		Tools []struct {
			Name        string
			Class       string
			ClassSource string `json:"class_source"`
			Offered     bool
			InputSchema json.RawMessage `json:"input_schema"`
		}
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if r.Info.ProtocolVersion != "2026-07-28" || len(r.Tools) != 3 || r.Tools[0].Class != "read" || r.Tools[0].ClassSource != "default class" || len(r.Tools[0].InputSchema) == 0 {
		t.Errorf("report = %+v", r)
	}

	code, _, stderr = runMCP("inspect", "--", bin, "mcp", "serve", "issues", "--file", "/nonexistent/issues.json")
	if code != 1 || !strings.Contains(stderr, `mcp server "server": connect:`) || !strings.Contains(stderr, "load issues") {
		t.Errorf("inspect of a failing server: status %d, stderr %q", code, stderr)
	}
}

func TestMCPInspectURL(t *testing.T) {
	tr, err := issuetracker.Parse([]byte(mcpTestIssues))
	if err != nil {
		t.Fatal(err)
	}
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return issuetracker.NewServer(tr) }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer k" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	code, out, stderr := runMCP("inspect", "--url", ts.URL, "--header", "Authorization=Bearer k")
	if code != 0 || !strings.Contains(out, "server      server (http)") || !strings.Contains(out, "server__search_issues") {
		t.Errorf("status %d\n%s\n%s", code, out, stderr)
	}
}

// TestMCPInspectTask inspects the example task's server exactly as the task
// declares it: command = "{bench}" runs this bench build.
func TestMCPInspectTask(t *testing.T) {
	bin := benchBinary(t)
	for _, task := range []string{"mcp-parser-issue", "mcp-timeout-issues"} {
		cmd := exec.Command(bin, "mcp", "inspect", "--task", filepath.Join("..", "..", "tasks", "suites", "examples", task))
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: %v\n%s", task, err, errb.String())
		}
		for _, w := range []string{"server      issues (stdio)", "implements  bench-issuetracker 1.0.0", "issues__get_issue\n  class        read (from"} {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%s: inspect lacks %q:\n%s", task, w, out.String())
			}
		}
	}
}

// TestMCPInspectTaskWarnings inspects a declaration that does not match
// the server: inspect shows every mismatch as a warning (a run fails at
// the first) and the tools as they would be.
func TestMCPInspectTaskWarnings(t *testing.T) {
	bin := benchBinary(t)
	dir := t.TempDir()
	for _, sub := range []string{"workspace", "tests", "data"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "data", "issues.json"), []byte(mcpTestIssues), 0o644); err != nil {
		t.Fatal(err)
	}
	toml := fmt.Sprintf(`format = 1
instruction = "Fix it."

[tests]
command = "true"

[[servers]]
name = "issues"
command = %q
args = ["mcp", "serve", "issues", "--file", "{data}/issues.json"]
tools = ["get_issue", "nope"]
default_class = "read"
classes = { ghost = "exec", get_issue = "network" }
`, bin)
	if err := os.WriteFile(filepath.Join(dir, "task.toml"), []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runMCP("inspect", "--task", dir)
	if code != 0 {
		t.Fatalf("status %d: %s", code, stderr)
	}
	for _, w := range []string{
		"tools       3 listed: 1 offered, 2 left out by the allow-list\n",
		"\nissues__get_issue\n  class        network (from classes)\n",
		"\nissues__list_issues  [NOT OFFERED]\n  why          not in the server's tools allow-list\n  class        read (from default class)\n",
		"\nwarnings:\n",
		`  tools allow-list names "nope", which the server does not offer (it offers: get_issue, list_issues, search_issues) (a run would refuse this)`,
		`  classes names "ghost", which the server does not offer`,
	} {
		if !strings.Contains(out, w) {
			t.Errorf("inspect output lacks %q:\n%s", w, out)
		}
	}
}

func TestMCPServeIssuesAnswers(t *testing.T) {
	bin := benchBinary(t)
	ctx := context.Background()
	cmd := exec.Command(bin, "mcp", "serve", "issues", "--file", issuesFile(t))
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "0"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "list_issues", Arguments: map[string]any{"label": "parser"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Content[0].(*sdk.TextContent).Text; got != "#5 [open] Parser loses the last token (labels: parser), 0 comments" {
		t.Errorf("list_issues = %q", got)
	}
}

// `bench mcp serve issues --http` serves the tracker over Streamable HTTP
// on the address given, says where on stderr, and refuses a request that
// names another host.
func TestMCPServeIssuesOverHTTP(t *testing.T) {
	bin := benchBinary(t)
	cmd := exec.Command(bin, "mcp", "serve", "issues", "--file", issuesFile(t), "--http", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	line, err := bufio.NewReader(stderr).ReadString('\n')
	if err != nil {
		t.Fatalf("no line on stderr: %v", err)
	}
	i := strings.Index(line, "http://")
	if i < 0 || !strings.Contains(line, "over Streamable HTTP at") {
		t.Fatalf("stderr says %q", line)
	}
	endpoint := strings.TrimSpace(line[i:])
	ctx := context.Background()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "0"}, nil).Connect(ctx, &sdk.StreamableClientTransport{Endpoint: endpoint}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "list_issues", Arguments: map[string]any{"label": "parser"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Content[0].(*sdk.TextContent).Text; got != "#5 [open] Parser loses the last token (labels: parser), 0 comments" {
		t.Errorf("list_issues over HTTP = %q", got)
	}
	req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(`{}`))
	req.Host = "rebound.example"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("a request for another host: %d, want 403", resp.StatusCode)
	}
}
