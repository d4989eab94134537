package main

// Runs with MCP servers attached, through real bench processes: a scripted
// model that needs the project's issue tracker to solve a task, and
// servers that crash, hang, print garbage or answer 50 MB, which must come
// back to the model as observations while the attempt goes on and is
// scored as the agent's work deserves.

import (
	"context"
	"fmt"
	"github.com/benchhq/bench/internal/sandboxtest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/benchhq/bench/internal/ollamatest"
	"github.com/benchhq/bench/results"
	"github.com/benchhq/bench/tasks"
)

// faultServerEnv makes this test binary serve as a misbehaving MCP server
// (see TestMain) instead of running tests.
const faultServerEnv = "BENCH_FAULT_SERVER"

// faultOnceEnv names the file that marks a fault done, for a server that
// fails once.
const faultOnceEnv = "BENCH_FAULT_ONCE"

func TestMain(m *testing.M) {
	if mode := os.Getenv(faultServerEnv); mode != "" {
		serveFaulty(mode)
		return
	}
	os.Exit(sandboxtest.RunWithCache(m))
}

type lookupArgs struct {
	ID int `json:"id" jsonschema:"the record to look up"`
}

// serveFaulty serves one tool, lookup, over stdio, misbehaving as mode
// says when it is called: crash, hang, garbage, huge or exit-after-answer.
func serveFaulty(mode string) {
	if mode == "fail-first-attempt-start" {
		// Fails to start once, for the first attempt to start it (its
		// workspace is a bench-attempt- folder), not for the preflight.
		if len(os.Args) > 1 && strings.Contains(os.Args[len(os.Args)-1], "bench-attempt-") {
			if f, err := os.OpenFile(os.Getenv(faultOnceEnv), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644); err == nil {
				f.Close()
				fmt.Fprintln(os.Stderr, "faulty: cannot open the index")
				os.Exit(5)
			}
		}
	}
	s := sdk.NewServer(&sdk.Implementation{Name: "faulty", Version: "1.0.0"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "lookup", Description: "Look up a record by id."},
		func(ctx context.Context, _ *sdk.CallToolRequest, a lookupArgs) (*sdk.CallToolResult, any, error) {
			switch mode {
			case "crash":
				fmt.Fprintln(os.Stderr, "faulty: crashing mid-call")
				os.Exit(3)
			case "hang":
				<-ctx.Done()
				select {}
			case "garbage":
				fmt.Fprintln(os.Stdout, "}}} this is not JSON-RPC {{{")
			case "huge":
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Repeat("x", 50<<20)}}}, nil, nil
			case "exit-after-answer":
				// Answers, then exits before the next call.
				time.AfterFunc(50*time.Millisecond, func() { os.Exit(4) })
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("record %d: ok", a.ID)}}}, nil, nil
		})
	if mode == "garbage" {
		fmt.Fprintln(os.Stdout, "hello from a server that writes logs to stdout")
	}
	if err := s.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "faulty:", err)
		os.Exit(1)
	}
}

// recipeWithServer copies recipe-trailing-dot into a temp folder and
// attaches one more MCP server to it.
func recipeWithServer(t *testing.T, server string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "recipe-with-server")
	if err := tasks.CopyTree(recipeTask, dir); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(dir, "task.toml"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("\n" + server); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestFaultMCPServerMisbehaves(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	fixed, err := os.ReadFile(filepath.Join(recipeTask, "solution", "recipe.py"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		mode     string
		timeout  string
		isError  bool
		kind     string
		contains string
	}{
		{"crash", "10s", true, "transport", "exited without answering the call"},
		{"hang", "1s", true, "timeout", "did not answer within 1s"},
		{"garbage", "10s", false, "", "record 1: ok"},
		{"huge", "60s", false, "", "cut"},
		// The second call of each attempt finds the server gone: not said
		// to have exited during that call.
		{"exit-after-answer", "10s", true, "transport", "(exit status 4)"},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			task := recipeWithServer(t, fmt.Sprintf(`[[servers]]
name = "faulty"
command = %q
env = { %s = %q }
classes = { lookup = "read" }
call_timeout = %q
`, self, faultServerEnv, tt.mode, tt.timeout))
			srv := ollamatest.New(ollamatest.Turns(
				ollamatest.Reply{Calls: []ollamatest.Call{{Name: "faulty__lookup", Args: map[string]any{"id": 1}}}},
				// Slow enough for a server that exits after an answer to be gone.
				ollamatest.Reply{Calls: []ollamatest.Call{{Name: "faulty__lookup", Args: map[string]any{"id": 2}}}, Delay: 300 * time.Millisecond},
				ollamatest.Reply{Calls: []ollamatest.Call{{Name: "write_file", Args: map[string]any{"path": "recipe.py", "content": string(fixed)}}}},
				ollamatest.Reply{Content: "Fixed, without the lookup service."},
			))
			defer srv.Close()
			db := filepath.Join(t.TempDir(), "bench.db")
			start := time.Now()
			p := startBench(t, "run", "--host", srv.URL, "--model", "fake", "--task", task, "--attempts", "2", "-j", "2", "--db", db, "--name", "mcp", "--no-progress")
			if code := p.wait(t); code != 0 {
				t.Fatalf("exit %d: %s", code, p.stderr.String())
			}
			t.Logf("%s: run took %s", tt.mode, time.Since(start).Round(time.Millisecond))
			checkComplete4(t, db, "mcp", 2)
			calls := stored(db, `SELECT count(*) FROM tool_calls WHERE tool='faulty__lookup'`)
			if calls != 4 {
				t.Errorf("lookup calls stored: %d, want 4", calls)
			}
			q := fmt.Sprintf(`SELECT count(*) FROM tool_calls WHERE tool='faulty__lookup' AND is_error=%d AND error_kind=%q AND instr(result, %q) > 0 AND length(result) < 40000`,
				map[bool]int{false: 0, true: 1}[tt.isError], tt.kind, tt.contains)
			if got := stored(db, `SELECT count(*) FROM tool_calls WHERE instr(result, 'during the call') > 0`); got > 0 {
				t.Errorf("%d observations say the server exited during the call", got)
			}
			if got := stored(db, q); got < 2 {
				t.Errorf("lookup observations that say what happened (error %v, kind %q, containing %q): %d, want at least 2", tt.isError, tt.kind, tt.contains, got)
				dumpCalls(t, db)
			}
			if got := stored(db, `SELECT count(*) FROM attempt_servers WHERE name='faulty' AND server_name='faulty'`); got != 2 {
				t.Errorf("server records stored: %d, want one per attempt", got)
			}
		})
	}
}

// checkComplete4 is checkComplete for trajectories of four turns.
func checkComplete4(t *testing.T, db, run string, attempts int) {
	t.Helper()
	q := func(query string) int { return stored(db, strings.ReplaceAll(query, "RUN", run)) }
	if got := q(`SELECT count(DISTINCT idx) FROM attempts WHERE run_id='RUN' AND status='finished' AND reward=1`); got != attempts {
		t.Errorf("attempts finished and scored 1: %d, want %d", got, attempts)
		dumpCalls(t, db)
	}
}

func dumpCalls(t *testing.T, db string) {
	t.Helper()
	s, err := results.OpenReadOnly(context.Background(), db)
	if err != nil {
		return
	}
	defer s.Close()
	rows, err := s.DB().Query(`SELECT tool, is_error, error_kind, substr(result, 1, 200) FROM tool_calls ORDER BY attempt_id, idx`)
	if err != nil {
		return
	}
	defer rows.Close()
	for rows.Next() {
		var tool, kind, res string
		var isErr bool
		_ = rows.Scan(&tool, &isErr, &kind, &res)
		t.Logf("  %s error=%v kind=%q %q", tool, isErr, kind, res)
	}
}

func TestScriptedModelSolvesMCPTask(t *testing.T) {
	const task = "../../tasks/suites/examples/mcp-parser-issue"
	fixed, err := os.ReadFile(filepath.Join(task, "solution", "config.py"))
	if err != nil {
		t.Fatal(err)
	}
	srv := ollamatest.New(ollamatest.Turns(
		ollamatest.Reply{Calls: []ollamatest.Call{{Name: "issues__list_issues", Args: map[string]any{"state": "open", "label": "parser"}}}},
		ollamatest.Reply{Calls: []ollamatest.Call{{Name: "issues__get_issue", Args: map[string]any{"id": 17}}}},
		ollamatest.Reply{Calls: []ollamatest.Call{{Name: "write_file", Args: map[string]any{"path": "config.py", "content": string(fixed)}}}},
		ollamatest.Reply{Content: "Fixed issue #17."},
	))
	defer srv.Close()
	db := filepath.Join(t.TempDir(), "bench.db")
	p := startBench(t, "run", "--host", srv.URL, "--model", "fake", "--task", task, "--attempts", "2", "--db", db, "--name", "mcp", "--no-progress")
	if code := p.wait(t); code != 0 {
		t.Fatalf("exit %d: %s", code, p.stderr.String())
	}
	checkComplete4(t, db, "mcp", 2)
	if got := stored(db, `SELECT count(*) FROM tool_calls WHERE tool='issues__get_issue' AND is_error=0 AND origin='mcp:issues' AND class='read' AND instr(result, 'Values that contain') > 0`); got != 2 {
		t.Errorf("get_issue calls that returned the issue: %d, want 2", got)
		dumpCalls(t, db)
	}
	if got := stored(db, `SELECT count(*) FROM attempt_servers WHERE name='issues' AND protocol_version != '' AND server_version != ''
		AND instr(catalog_json, '"name":"issues__get_issue"') > 0 AND instr(catalog_json, '"readOnlyHint":true') > 0`); got != 2 {
		t.Errorf("negotiated server records: %d, want 2", got)
	}
	if got := stored(db, `SELECT count(*) FROM overhead_items WHERE kind='tool'`); got == 0 {
		t.Errorf("no tool overhead measured at the start of the run")
	}
}

// A task's MCP server that passed the preflight and then fails to start
// for one attempt: that attempt is an infrastructure failure, retried, and
// the run ends with every attempt scored as its agent deserves.
func TestFaultMCPServerFailsAtAnAttemptsStart(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	once := filepath.Join(t.TempDir(), "failed-once")
	task := recipeWithServer(t, fmt.Sprintf(`[[servers]]
name = "faulty"
command = %q
args = ["{workspace}"]
env = { %s = "fail-first-attempt-start", %s = %q }
classes = { lookup = "read" }
`, self, faultServerEnv, faultOnceEnv, once))
	srv := ollamatest.New(solveRecipeScript(t, 0))
	defer srv.Close()
	db := filepath.Join(t.TempDir(), "bench.db")
	sent := time.Now()
	p := startBench(t, "run", "--host", srv.URL, "--model", "fake", "--task", task, "--attempts", "2", "-j", "2", "--db", db, "--name", "mcp", "--no-progress")
	code := p.wait(t)
	t.Logf("exit %d after %s\n%s", code, time.Since(sent).Round(time.Millisecond), p.stderr.String())
	if code != exitOK {
		t.Fatalf("exit %d, want 0", code)
	}
	if _, err := os.Stat(once); err != nil {
		t.Fatalf("the server never failed: the test tests nothing (%v)", err)
	}
	checkComplete(t, db, "mcp", 2)
	if got := stored(db, `SELECT count(*) FROM attempts WHERE tries = 2`); got != 1 {
		t.Errorf("attempts retried: %d, want 1", got)
	}
}
