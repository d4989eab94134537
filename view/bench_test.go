package view

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/evaluator"
	"github.com/benchhq/bench/evaluator/testreport"
	"github.com/benchhq/bench/results"
	"github.com/benchhq/bench/runner"
	"github.com/benchhq/bench/tasks"
)

// The benchmarks render the pages of a big store: the runs page, a run
// page and an attempt page, through the handler, queries included. The
// store is written by bigStore through the store's own write path; its
// size is BENCH_VIEW_ATTEMPTS (default 2000, so that CI stays quick; the
// targets are for 100000):
//
//	BENCH_VIEW_ATTEMPTS=100000 go test -run '^$' -bench . -benchtime 5x ./view/
//
// The file is kept in BENCH_VIEW_DB_DIR (default the system's temporary
// folder) and reused by later runs of the same size and schema version.

// bigRun is the run bigStore writes.
const bigRun = "big"

// bigStore returns a results file holding one finished run of n attempts
// (2 arms, G = 16, n/32 tasks), each of 10 turns and 9 tool calls with
// realistic sizes, with stored advantages and tool-token measurements.
func bigStore(tb testing.TB) (path string, n int) {
	tb.Helper()
	n = 2000
	if v := os.Getenv("BENCH_VIEW_ATTEMPTS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 32 {
			tb.Fatalf("BENCH_VIEW_ATTEMPTS=%q: expected a number, 32 or more", v)
		}
	}
	dir := os.Getenv("BENCH_VIEW_DB_DIR")
	if dir == "" {
		dir = os.TempDir()
	}
	// Named by the schema version and the revision of its content too: a
	// store of another version, or written by an older bigStore, is not
	// reused.
	path = filepath.Join(dir, fmt.Sprintf("bench-view-big-%d-v%d-r2.db", n, results.SchemaVersion))
	if _, err := os.Stat(path + ".done"); err == nil {
		return path, n
	}
	os.Remove(path)
	start := time.Now()
	if err := writeBigStore(context.Background(), path, n); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path+".done", nil, 0o644); err != nil {
		tb.Fatal(err)
	}
	tb.Logf("wrote %s (%d attempts) in %s", path, n, time.Since(start).Round(time.Second))
	return path, n
}

func writeBigStore(ctx context.Context, path string, n int) error {
	const arms, g = 2, 16
	nTasks := n / (arms * g)
	store, err := results.Open(ctx, path)
	if err != nil {
		return err
	}
	defer store.Close()
	run := &results.Run{ID: bigRun, Model: "qwen3:0.6b", Seed: 1, AttemptsPerTask: g, Suite: "big",
		Options: map[string]any{"num_ctx": 8192, "temperature": 0.6}, BenchVersion: "bench"}
	for i := range arms {
		run.Arms = append(run.Arms, results.Arm{Name: fmt.Sprintf("arm-%d", i), Index: i})
	}
	for i := range nTasks {
		run.Tasks = append(run.Tasks, results.TaskInfo{ID: fmt.Sprintf("task-%04d", i), Instruction: strings.Repeat("Fix the parser. ", 25)})
	}
	if err := store.CreateRun(ctx, run); err != nil {
		return err
	}
	tools := bigTools()
	for ai, arm := range run.Arms {
		o := &results.Overhead{Arm: arm.Name, Model: run.Model, NumCtx: 8192, BaselineTokens: 20, PromptTokens: 2930 + 500*ai,
			Tokens: 2910 + 500*ai, SumOfTools: 2812 + 500*ai}
		o.Items = append(o.Items, results.OverheadItem{Kind: results.OverheadSet, Name: "builtin", Set: "builtin", Tokens: 2812})
		for _, t := range tools {
			o.Items = append(o.Items, results.OverheadItem{Kind: results.OverheadTool, Name: t.Function.Name, Set: "builtin", Tokens: 470})
		}
		if ai > 0 {
			o.Items = append(o.Items, results.OverheadItem{Kind: results.OverheadSet, Name: "issues", Set: "issues", Tokens: 500})
		}
		if err := store.SaveOverhead(ctx, run.ID, o); err != nil {
			return err
		}
	}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	k := 0
	for _, arm := range run.Arms {
		for ti, task := range run.Tasks {
			for i := range g {
				a := bigAttempt(run.ID, arm.Name, task, i, tools, k, ti)
				a.StartedAt = t0.Add(time.Duration(k) * time.Second)
				a.FinishedAt = a.StartedAt.Add(30 * time.Second)
				if _, err := store.SaveAttempt(ctx, a); err != nil {
					return err
				}
				k++
			}
		}
	}
	if _, err := runner.StoreAdvantages(ctx, store, run.ID, evaluator.GRPO); err != nil {
		return err
	}
	return store.FinishRun(ctx, run.ID, results.RunFinished)
}

// bigTools are six tool definitions of realistic size (about 3.9 KB).
func bigTools() []api.Tool {
	var tools []api.Tool
	for _, name := range []string{"read_file", "write_file", "edit_file", "list_dir", "search", "run_command"} {
		js := fmt.Sprintf(`{"type":"function","function":{"name":%q,"description":%q,"parameters":{"type":"object","required":["path"],"properties":{"path":{"type":"string","description":%q},"content":{"type":"string","description":"The text."}}}}}`,
			name, strings.Repeat("Reads or changes files of the workspace. ", 10), strings.Repeat("A path relative to the workspace. ", 4))
		var t api.Tool
		if err := json.Unmarshal([]byte(js), &t); err != nil {
			panic(err)
		}
		tools = append(tools, t)
	}
	return tools
}

// bigAttempt is one attempt of 10 turns: 9 tool calls (one denied in a
// few) and an answer; about a third pass, a few are infrastructure
// failures.
func bigAttempt(runID, arm string, task results.TaskInfo, index int, tools []api.Tool, k, ti int) *results.Attempt {
	tr := &agent.Trajectory{Tools: tools, Stop: agent.StopAnswered, Wall: 28 * time.Second}
	tr.Messages = []api.Message{{Role: "system", Content: strings.Repeat("You are a careful engineer. ", 12)},
		{Role: "user", Content: task.Instruction}}
	prompt := 3000
	for turn := range 10 {
		prompt += 350
		u := agent.Turn{Index: turn, PromptTokens: prompt, CompletionTokens: 60 + turn, TotalDuration: 2 * time.Second,
			PromptDuration: 500 * time.Millisecond, EvalDuration: 1400 * time.Millisecond, Wall: 2 * time.Second, DoneReason: "stop"}
		if turn == 9 {
			tr.Turns = append(tr.Turns, u)
			tr.Messages = append(tr.Messages, api.Message{Role: "assistant", Content: "Fixed the parser; the tests pass."})
			break
		}
		u.ToolCalls = 1
		tr.Turns = append(tr.Turns, u)
		args := api.NewToolCallFunctionArguments()
		args.Set("path", fmt.Sprintf("src/file%d.py", turn))
		call := api.ToolCall{ID: fmt.Sprintf("call_%d", turn), Function: api.ToolCallFunction{Name: tools[turn%len(tools)].Function.Name, Arguments: args}}
		tr.Messages = append(tr.Messages, api.Message{Role: "assistant", Content: "Let me look at the next file.", ToolCalls: []api.ToolCall{call}})
		result := strings.Repeat(fmt.Sprintf("line %d of the file\n", turn), 50)
		rec := agent.CallRecord{Turn: turn, Index: turn, Tool: call.Function.Name, Origin: "builtin", Class: agent.ClassRead,
			Decision: agent.Allow, Rule: "class read", Arguments: args.String(), Result: result, Duration: 3 * time.Millisecond}
		if turn == 4 && k%5 == 0 {
			rec.Decision, rec.IsError, rec.ErrorKind, rec.Result = agent.Deny, true, "denied", "denied by policy"
		}
		tr.Calls = append(tr.Calls, rec)
		tr.Messages = append(tr.Messages, api.Message{Role: "tool", Content: rec.Result, ToolName: rec.Tool, ToolCallID: call.ID})
	}
	a := &results.Attempt{RunID: runID, Key: results.AttemptKey{Arm: arm, Task: task.ID, Index: index},
		Seed: int64(k), Status: results.StatusFinished, Trajectory: tr, Tries: 1}
	if k%97 == 13 {
		a.Status, a.Error, tr.Stop = results.StatusInfraError, "model server: 500 model runner crashed", agent.StopInfraError
		return a
	}
	reward := 0
	if (ti*7+index*3+k%2)%3 == 0 {
		reward = 1
	}
	a.Reward = &reward
	a.Test = &evaluator.TestResult{Command: "python3 -m unittest -v", ExitCode: 1 - reward, Passed: reward == 1,
		Output: strings.Repeat("test output line\n", 40), Duration: 800 * time.Millisecond, Basis: evaluator.BasisTests,
		Record: &tasks.Record{}}
	// A per-test report of 12 recorded tests, and a change of two files
	// with a diff of about 60 lines.
	for i := range 12 {
		id := fmt.Sprintf("test_hidden.HiddenTest.test_%02d", i)
		c := testreport.Case{ID: id, Outcome: testreport.Pass, Duration: time.Duration(i+1) * time.Millisecond}
		if reward == 0 && i < 3 {
			c.Outcome, c.Message = testreport.Fail, "AssertionError: '2 eggs.' != '2 eggs'"
			a.Test.Failed = append(a.Test.Failed, id)
		}
		a.Test.Cases = append(a.Test.Cases, c)
		if i < 8 {
			a.Test.Record.FailToPass = append(a.Test.Record.FailToPass, id)
		} else {
			a.Test.Record.PassToPass = append(a.Test.Record.PassToPass, id)
		}
	}
	var diff strings.Builder
	for _, f := range []string{"src/file1.py", "src/file2.py"} {
		fmt.Fprintf(&diff, "--- a/%s\n+++ b/%s\n@@ -10,12 +10,14 @@\n", f, f)
		for i := range 26 {
			switch i % 6 {
			case 2:
				fmt.Fprintf(&diff, "-    value = parts[%d].strip()\n", i)
			case 3:
				fmt.Fprintf(&diff, "+    key, sep, value = line.partition(%q)\n", "=")
			default:
				fmt.Fprintf(&diff, "     line %d of the file\n", i)
			}
		}
	}
	a.Test.Change = &evaluator.Change{Diff: diff.String(),
		Carried: []evaluator.FileChange{{Path: "src/file1.py", Kind: "modified", Size: 2400}, {Path: "src/file2.py", Kind: "modified", Size: 1800}},
		LeftOut: []evaluator.LeftOut{{Path: "__pycache__/", Reason: "a cache or bytecode"}, {Path: ".cache/", Reason: "a dot-file or dot-folder"}}}
	return a
}

// benchPage renders path on the big store b.N times: cold, each time
// without the reports the server keeps (as the first view of a run), or
// warm, as a researcher browsing a run that does not change.
func benchPage(b *testing.B, cold bool, path func(db string, n int) string) {
	db, n := bigStore(b)
	s, err := New(context.Background(), db, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	h := s.Handler()
	p := path(db, n)
	var size int
	b.ResetTimer()
	if !cold {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, p, nil))
	}
	cpu0 := cpuTime()
	for b.Loop() {
		if cold {
			s.reports.clear()
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, p, nil))
		if rec.Code != http.StatusOK {
			b.Fatalf("GET %s: %d\n%.2000s", p, rec.Code, rec.Body.String())
		}
		size = rec.Body.Len()
	}
	// The process's CPU time per page, beside the wall time: on a shared
	// machine the wall time also counts the waits for a core.
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(n), "attempts")
	b.ReportMetric(float64(size)/1024, "page-KB")
}

func BenchmarkRunsPage(b *testing.B) {
	benchPage(b, true, func(string, int) string { return "/" })
}

// BenchmarkRunPage is the first view of a run: its report computed.
func BenchmarkRunPage(b *testing.B) {
	benchPage(b, true, func(string, int) string { return "/runs/" + bigRun })
}

// BenchmarkRunPageWarm is the run page again, its report kept.
func BenchmarkRunPageWarm(b *testing.B) {
	benchPage(b, false, func(string, int) string { return "/runs/" + bigRun })
}

func BenchmarkRunPageFilteredWarm(b *testing.B) {
	benchPage(b, false, func(string, int) string { return "/runs/" + bigRun + "?arm=arm-1&outcome=fail&page=2" })
}

func BenchmarkAttemptsPageWarm(b *testing.B) {
	benchPage(b, false, func(string, int) string { return "/runs/" + bigRun + "/attempts?outcome=pass" })
}

func BenchmarkAttemptPage(b *testing.B) {
	// An attempt in the middle of the file.
	benchPage(b, true, func(_ string, n int) string { return fmt.Sprintf("/attempts/%d", n/2) })
}

// cpuTime is the CPU time (user and system) the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
