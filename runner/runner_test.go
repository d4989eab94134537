package runner_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/internal/ollamatest"
	"github.com/benchhq/bench/internal/sandboxtest"
	"github.com/benchhq/bench/overhead"
	"github.com/benchhq/bench/results"
	"github.com/benchhq/bench/runner"
	"github.com/benchhq/bench/tasks"
)

const exampleSuite = "../tasks/suites/examples"

// fixture is a runner wired to a fake Ollama server and a fresh store.
type fixture struct {
	t      *testing.T
	server *ollamatest.Server
	store  *results.Store
	runner *runner.Runner
	db     string
}

func newFixture(t *testing.T, script ollamatest.Script, opts ...ollamatest.Option) *fixture {
	t.Helper()
	srv := ollamatest.New(script, opts...)
	t.Cleanup(srv.Close)
	db := filepath.Join(t.TempDir(), "bench.db")
	store, err := results.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	model, err := agent.NewOllama(srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, server: srv, store: store, db: db, runner: &runner.Runner{
		Model:   model,
		Store:   store,
		TempDir: t.TempDir(),
		Backoff: func(int) time.Duration { return time.Millisecond },
		// A failed model server is back at once: the tests of retries
		// do not wait out the default cooldown of 5s.
		Cooldown: func(int) time.Duration { return 20 * time.Millisecond },
		Sandbox:  sandboxtest.New(t),
	}}
}

func loadTask(t *testing.T, id string) *tasks.Suite {
	t.Helper()
	task, err := tasks.Load(filepath.Join(exampleSuite, id))
	if err != nil {
		t.Fatal(err)
	}
	return &tasks.Suite{Name: "examples", Dir: filepath.Dir(task.Dir), Tasks: []*tasks.Task{task}}
}

func call(name string, args map[string]any) ollamatest.Call {
	return ollamatest.Call{Name: name, Args: args}
}

// solveRecipe is a five-turn trajectory that fixes recipe-trailing-dot
// through the tools, the way a capable model would.
func solveRecipe(t *testing.T) ollamatest.Script {
	fixed, err := os.ReadFile(filepath.Join(exampleSuite, "recipe-trailing-dot/solution/recipe.py"))
	if err != nil {
		t.Fatal(err)
	}
	return ollamatest.Turns(
		ollamatest.Reply{Calls: []ollamatest.Call{call("list_dir", map[string]any{"path": "."})}},
		ollamatest.Reply{Calls: []ollamatest.Call{call("read_file", map[string]any{"path": "recipe.py"})}},
		ollamatest.Reply{Content: "I will rewrite the parser.", Calls: []ollamatest.Call{call("write_file", map[string]any{"path": "recipe.py", "content": string(fixed)})}},
		ollamatest.Reply{Calls: []ollamatest.Call{call("run_command", map[string]any{"command": "python3 -m unittest -q"})}},
		ollamatest.Reply{Content: "Fixed: ingredient items no longer keep their trailing period."},
	)
}

func (f *fixture) run(plan *runner.Plan, runID string) *runner.Outcome {
	f.t.Helper()
	out, err := f.runner.Run(context.Background(), plan, runID)
	if err != nil {
		f.t.Fatalf("run: %v", err)
	}
	return out
}

func (f *fixture) count(query string, args ...any) int {
	f.t.Helper()
	var n int
	if err := f.store.DB().QueryRowContext(context.Background(), query, args...).Scan(&n); err != nil {
		f.t.Fatalf("%s: %v", query, err)
	}
	return n
}

func TestScriptedModelSolvesTask(t *testing.T) {
	f := newFixture(t, solveRecipe(t))
	plan := &runner.Plan{Model: "fake", Suite: loadTask(t, "recipe-trailing-dot"), Attempts: 2, Concurrency: 2}
	out := f.run(plan, "r1")
	if out.Ran != 2 || out.InfraErrors != 0 {
		t.Fatalf("ran %d, infra errors %d; want 2, 0", out.Ran, out.InfraErrors)
	}
	if got := f.count(`SELECT count(*) FROM attempts WHERE run_id='r1' AND status='finished' AND reward=1 AND stop_reason='answered'`); got != 2 {
		t.Errorf("attempts with reward 1: %d, want 2", got)
	}
	if got := f.count(`SELECT count(*) FROM turns`); got != 10 {
		t.Errorf("turns stored: %d, want 10", got)
	}
	if got := f.count(`SELECT count(*) FROM tool_calls WHERE is_error=0 AND decision='allow'`); got != 8 {
		t.Errorf("successful tool calls stored: %d, want 8", got)
	}
	if got := f.count(`SELECT count(*) FROM tool_calls WHERE tool='run_command' AND class='exec' AND result LIKE '%OK%'`); got != 2 {
		t.Errorf("run_command calls whose output shows the visible tests passing: %d, want 2", got)
	}
	// system + user + 5 assistant + 4 tool messages per attempt
	if got := f.count(`SELECT count(*) FROM messages`); got != 22 {
		t.Errorf("messages stored: %d, want 22", got)
	}
	// recipe-trailing-dot is judged by golden cases: one run, no canary.
	if got := f.count(`SELECT count(*) FROM test_results WHERE passed=1 AND exit_code=0 AND output LIKE '%golden cases: 6 of 6 observations match%'`); got != 2 {
		t.Errorf("passing hidden-test results: %d, want 2", got)
	}
	if got := f.count(`SELECT count(*) FROM runs WHERE id='r1' AND status='finished'`); got != 1 {
		t.Errorf("run not marked finished")
	}
}

func TestModelThatGivesUpGetsZero(t *testing.T) {
	f := newFixture(t, ollamatest.Turns(ollamatest.Reply{Content: "I cannot do this."}))
	out := f.run(&runner.Plan{Model: "fake", Suite: loadTask(t, "recipe-trailing-dot"), Attempts: 3}, "r1")
	if out.Ran != 3 {
		t.Fatalf("ran %d, want 3", out.Ran)
	}
	if got := f.count(`SELECT count(*) FROM attempts WHERE status='finished' AND reward=0`); got != 3 {
		t.Errorf("attempts with reward 0: %d, want 3", got)
	}
	if got := f.count(`SELECT count(*) FROM test_results WHERE passed=0 AND output != ''`); got != 3 {
		t.Errorf("failing test results with output: %d, want 3", got)
	}
}

func TestEscapesAreRefused(t *testing.T) {
	task := loadTask(t, "recipe-trailing-dot")
	hidden := filepath.Join(task.Tasks[0].Dir, "tests", "test_recipe_hidden.py")
	outside := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(outside, []byte("s3cret"), 0o600); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, ollamatest.Turns(
		ollamatest.Reply{Calls: []ollamatest.Call{
			call("read_file", map[string]any{"path": "../tests/test_recipe_hidden.py"}),
			call("read_file", map[string]any{"path": hidden}),
			call("read_file", map[string]any{"path": outside}),
			call("list_dir", map[string]any{"path": "/"}),
			call("write_file", map[string]any{"path": "../escaped.txt", "content": "x"}),
		}},
		ollamatest.Reply{Calls: []ollamatest.Call{
			call("run_command", map[string]any{"command": "ln -s " + filepath.Dir(outside) + " out && ln -s " + filepath.Dir(hidden) + " hidden"}),
		}},
		ollamatest.Reply{Calls: []ollamatest.Call{
			call("read_file", map[string]any{"path": "out/secret.txt"}),
			call("read_file", map[string]any{"path": "hidden/test_recipe_hidden.py"}),
			call("write_file", map[string]any{"path": "out/planted.txt", "content": "x"}),
			call("search", map[string]any{"pattern": "s3cret", "path": "out"}),
		}},
		ollamatest.Reply{Content: "done"},
	))
	f.run(&runner.Plan{Model: "fake", Suite: task, Attempts: 1}, "r1")

	rows, err := f.store.DB().QueryContext(context.Background(), `SELECT tool, arguments_json, result, is_error FROM tool_calls ORDER BY idx`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var tool, args, result string
		var isErr bool
		if err := rows.Scan(&tool, &args, &result, &isErr); err != nil {
			t.Fatal(err)
		}
		n++
		if tool == "run_command" {
			continue // making the links is allowed; using them is not
		}
		if !isErr || !strings.Contains(result, "outside the workspace") {
			t.Errorf("%s %s: got %q (error %v), want a refusal naming the workspace", tool, args, result, isErr)
		}
		if strings.Contains(result, "s3cret") || strings.Contains(result, "unittest") {
			t.Errorf("%s %s leaked content: %q", tool, args, result)
		}
	}
	if n != 10 {
		t.Errorf("tool calls stored: %d, want 10", n)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(outside), "planted.txt")); err == nil {
		t.Error("a write through a symlink reached outside the workspace")
	}
}

func TestModelServerDyingIsAnInfraError(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	script := func(req *api.ChatRequest) ollamatest.Reply {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls == 1 {
			return ollamatest.Reply{Content: "pong"} // preflight
		}
		if len(req.Messages) > 2 {
			return ollamatest.Reply{Hangup: true}
		}
		return ollamatest.Reply{Calls: []ollamatest.Call{call("list_dir", map[string]any{})}}
	}
	f := newFixture(t, script)
	out := f.run(&runner.Plan{Model: "fake", Suite: loadTask(t, "recipe-trailing-dot"), Attempts: 2, MaxTries: 2}, "r1")
	if out.InfraErrors != 2 {
		t.Fatalf("infra errors: %d, want 2", out.InfraErrors)
	}
	if got := f.count(`SELECT count(*) FROM attempts WHERE status='infra_error' AND reward IS NULL AND tries=2 AND stop_reason='infra_error'`); got != 2 {
		t.Errorf("attempts stored as unscored infra errors after 2 tries: %d, want 2", got)
	}
	if got := f.count(`SELECT count(*) FROM test_results`); got != 0 {
		t.Errorf("hidden tests ran for an infra error: %d results", got)
	}
}

func TestInfraErrorIsRetriedAndThenScored(t *testing.T) {
	var mu sync.Mutex
	failed := false
	script := func(req *api.ChatRequest) ollamatest.Reply {
		mu.Lock()
		defer mu.Unlock()
		if len(req.Tools) > 0 && len(req.Messages) == 2 && !failed && req.Options["seed"] != nil {
			failed = true
			return ollamatest.Reply{Status: 500, Error: "llama runner process has terminated"}
		}
		return ollamatest.Reply{Content: "giving up"}
	}
	f := newFixture(t, script)
	out := f.run(&runner.Plan{Model: "fake", Suite: loadTask(t, "recipe-trailing-dot"), Attempts: 1}, "r1")
	if out.InfraErrors != 0 || out.Ran != 1 {
		t.Fatalf("ran %d, infra errors %d; want 1, 0", out.Ran, out.InfraErrors)
	}
	if got := f.count(`SELECT count(*) FROM attempts WHERE status='finished' AND tries=2 AND reward=0`); got != 1 {
		t.Errorf("attempt scored after one retry: %d, want 1", got)
	}
}

func TestPreflightStopsBeforeFirstAttempt(t *testing.T) {
	closed := ollamatest.New(ollamatest.Turns())
	closedURL := closed.URL
	closed.Close()
	tests := []struct {
		name  string
		opts  []ollamatest.Option
		model string
		url   string
		want  string
	}{
		{"not pulled", []ollamatest.Option{ollamatest.WithModels("qwen3:0.6b")}, "nope", "", "ollama pull nope"},
		{"no tool support", []ollamatest.Option{ollamatest.WithoutTools("gemma:2b")}, "gemma:2b", "", "tool support"},
		// Only the measurement's request with tools tells.
		{"no tool support, capabilities unlisted", []ollamatest.Option{ollamatest.WithoutTools("gemma:2b"), ollamatest.WithoutCapabilities()}, "gemma:2b", "", "tool support"},
		{"unreachable", nil, "qwen3:0.6b", closedURL, "ollama serve"},
	}
	for _, tt := range tests {
		// With more slots than the measurement of the tools' overhead has
		// requests, the first attempts start beside it: when it fails, they
		// are stopped and nothing of them is stored either.
		for _, conc := range []int{1, 16} {
			t.Run(fmt.Sprintf("%s/concurrency=%d", tt.name, conc), func(t *testing.T) {
				f := newFixture(t, ollamatest.Turns(), tt.opts...)
				if tt.url != "" {
					m, _ := agent.NewOllama(tt.url, nil)
					f.runner.Model = m
				}
				_, err := f.runner.Run(context.Background(), &runner.Plan{Model: tt.model, Suite: loadTask(t, "recipe-trailing-dot"), Attempts: 2 * conc, Concurrency: conc}, "r1")
				if !errors.Is(err, runner.ErrPreflight) {
					t.Fatalf("err = %v, want a preflight error", err)
				}
				if !strings.Contains(err.Error(), tt.want) {
					t.Errorf("err = %q, want it to say %q", err, tt.want)
				}
				for _, table := range []string{"runs", "attempts", "overhead"} {
					if got := f.count(`SELECT count(*) FROM ` + table); got != 0 {
						t.Errorf("%s stored after a failed preflight: %d", table, got)
					}
				}
				if conc == 1 && tt.url == "" && attemptRequests(f.server.Requests()) != 0 {
					t.Errorf("attempt requests sent: %d, want none: the measurement holds the one slot", attemptRequests(f.server.Requests()))
				}
			})
		}
	}
}

func TestResumeKeepsFinishedAttempts(t *testing.T) {
	f := newFixture(t, ollamatest.Turns(ollamatest.Reply{Content: "no"}))
	suite := loadTask(t, "recipe-trailing-dot")
	f.run(&runner.Plan{Model: "fake", Suite: suite, Attempts: 2}, "r1")
	before := attemptRequests(f.server.Requests())
	out := f.run(&runner.Plan{Model: "fake", Suite: suite, Attempts: 2}, "r1")
	if out.Ran != 0 || out.Skipped != 2 {
		t.Errorf("resume ran %d and skipped %d; want 0 and 2", out.Ran, out.Skipped)
	}
	if got := attemptRequests(f.server.Requests()) - before; got != 0 {
		t.Errorf("attempt requests on resume: %d, want none", got)
	}
	if _, err := f.runner.Run(context.Background(), &runner.Plan{Model: "other", Suite: suite, Attempts: 2}, "r1"); err == nil || !strings.Contains(err.Error(), "model") {
		t.Errorf("resume with another model: err = %v, want a refusal naming the model", err)
	}
	// Anything that shapes an attempt must match too; what paces the run may change.
	refused := []struct {
		name string
		plan runner.Plan
		want string
	}{
		{"profile", runner.Plan{Model: "fake", Suite: suite, Attempts: 2, Arms: []runner.Arm{{Name: "default", Profile: "read-only"}}}, "arms"},
		{"tools", runner.Plan{Model: "fake", Suite: suite, Attempts: 2, Arms: []runner.Arm{{Name: "default", Tools: []string{"read_file"}}}}, "arms"},
		{"temperature", runner.Plan{Model: "fake", Suite: suite, Attempts: 2, Options: map[string]any{"temperature": 1.5}}, "options"},
		{"system prompt", runner.Plan{Model: "fake", Suite: suite, Attempts: 2, System: "Be brief."}, "system prompt"},
		{"limits", runner.Plan{Model: "fake", Suite: suite, Attempts: 2, Limits: tasks.Limits{MaxTurns: 3}}, "limits"},
		{"other tasks", runner.Plan{Model: "fake", Suite: &tasks.Suite{Name: "none", Tasks: append(suite.Tasks, loadTask(t, "phonebook-sort").Tasks...)}, Attempts: 2}, "tasks"},
	}
	for _, tt := range refused {
		if _, err := f.runner.Run(context.Background(), &tt.plan, "r1"); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("resume with another %s: err = %v, want a refusal naming %q", tt.name, err, tt.want)
		}
	}
	if out := f.run(&runner.Plan{Model: "fake", Suite: suite, Attempts: 2, Concurrency: 3, MaxTries: 7}, "r1"); out.Skipped != 2 {
		t.Errorf("resume with another concurrency and tries: skipped %d, want 2", out.Skipped)
	}
}

func TestSeedsAndOptionsReachTheModel(t *testing.T) {
	f := newFixture(t, ollamatest.Turns(ollamatest.Reply{Content: "no"}))
	plan := &runner.Plan{
		Model:   "fake",
		Suite:   loadTask(t, "recipe-trailing-dot"),
		Seed:    42,
		Options: map[string]any{"temperature": 0},
		Arms:    []runner.Arm{{Name: "a"}, {Name: "b", Tools: []string{"read_file"}}},
	}
	f.run(plan, "r1")
	seeds := map[string][]float64{}
	for _, req := range f.server.Requests() {
		if req.Options["seed"] == nil {
			continue // the preflight and the overhead measurement
		}
		temp, ok := req.Options["temperature"]
		if !ok || temp != float64(0) {
			t.Errorf("temperature 0 was not sent: options %v", req.Options)
		}
		if req.Options["num_ctx"] != float64(runner.DefaultNumCtx) {
			t.Errorf("num_ctx not set: options %v", req.Options)
		}
		arm := "a"
		if len(req.Tools) == 1 {
			arm = "b"
		}
		seeds[arm] = append(seeds[arm], req.Options["seed"].(float64))
	}
	want := map[float64]bool{}
	for i := range 4 {
		want[float64(runner.AttemptSeed(42, "recipe-trailing-dot", i))] = true
	}
	for arm, got := range seeds {
		if len(got) != 4 {
			t.Errorf("arm %s: %d requests, want 4", arm, len(got))
		}
		for _, s := range got {
			if !want[s] {
				t.Errorf("arm %s: seed %v is not derived from the run seed", arm, s)
			}
		}
	}
}

func TestLimitsStopTheLoop(t *testing.T) {
	loop := func(*api.ChatRequest) ollamatest.Reply {
		return ollamatest.Reply{Calls: []ollamatest.Call{call("list_dir", map[string]any{})}, PromptTokens: 100, CompletionTokens: 10}
	}
	// The agent's own time runs out: a command that takes longer than
	// the attempt may.
	slowTool := func(*api.ChatRequest) ollamatest.Reply {
		return ollamatest.Reply{Calls: []ollamatest.Call{call("run_command", map[string]any{"command": "sleep 30"})}}
	}
	tests := []struct {
		name   string
		script ollamatest.Script
		limits tasks.Limits
		want   agent.StopReason
	}{
		{"turns", loop, tasks.Limits{MaxTurns: 3}, agent.StopMaxTurns},
		{"tokens", loop, tasks.Limits{MaxTokens: 250}, agent.StopMaxTokens},
		{"wall time", slowTool, tasks.Limits{WallTime: tasks.Duration{Duration: time.Second}}, agent.StopWallTime},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, tt.script)
			f.run(&runner.Plan{Model: "fake", Suite: loadTask(t, "recipe-trailing-dot"), Attempts: 1, Limits: tt.limits}, "r1")
			if got := f.count(`SELECT count(*) FROM attempts WHERE stop_reason=? AND status='finished' AND reward=0`, string(tt.want)); got != 1 {
				t.Errorf("attempts stopped by %s and scored 0: %d, want 1", tt.want, got)
			}
		})
	}
}

// TestSilentModelIsNotTheAgentsWallTime: a model that has not answered when
// the attempt's wall time runs out is an infrastructure failure, retried
// and never scored, even when --request-timeout is longer than the wall
// time (the real case: both 10 minutes).
func TestSilentModelIsNotTheAgentsWallTime(t *testing.T) {
	silent := func(req *api.ChatRequest) ollamatest.Reply {
		if req.Options["seed"] == nil {
			return ollamatest.Reply{Content: "ok"} // overhead measurement
		}
		return ollamatest.Reply{Delay: time.Minute}
	}
	f := newFixture(t, silent)
	f.run(&runner.Plan{Model: "fake", Suite: loadTask(t, "recipe-trailing-dot"), Attempts: 1, MaxTries: 2, RequestTimeout: time.Hour,
		Limits: tasks.Limits{WallTime: tasks.Duration{Duration: 300 * time.Millisecond}}}, "r1")
	if got := f.count(`SELECT count(*) FROM attempts WHERE status = 'infra_error' AND reward IS NULL AND tries = 2 AND error LIKE '%had not answered%'`); got != 1 {
		t.Errorf("attempts stored as infrastructure failures after 2 tries: %d, want 1", got)
	}
	if got := f.count(`SELECT count(*) FROM attempts WHERE reward IS NOT NULL`); got != 0 {
		t.Errorf("%d attempts scored, want none", got)
	}
}

// giveUp is a model that answers at once without trying.
var giveUp = ollamatest.Turns(ollamatest.Reply{Content: "I cannot do this."})

// The measurement of the tools' overhead holds only the slots it needs:
// the first attempts run on the others meanwhile (its requests wait here
// until an attempt's request has come), and the two together never have
// more requests in flight than the plan's concurrency.
func TestOverheadMeasuredBesideFirstAttempts(t *testing.T) {
	attemptCame := make(chan struct{})
	var once sync.Once
	var waited atomic.Bool
	script := func(req *api.ChatRequest) ollamatest.Reply {
		if len(req.Messages) == 1 && req.Messages[0].Content == overhead.Probe {
			select {
			case <-attemptCame:
			case <-time.After(20 * time.Second):
				waited.Store(true) // no attempt came: they waited for the measurement
			}
			return ollamatest.Reply{Content: "hi"}
		}
		once.Do(func() { close(attemptCame) })
		// Held a while, so that the attempts' requests overlap each other
		// and the measurement's.
		return ollamatest.Reply{Content: "done", Delay: 300 * time.Millisecond}
	}
	const conc = 16 // more than the measurement's requests, fewer than both
	f := newFixture(t, script)
	out := f.run(&runner.Plan{Model: "fake", Suite: loadTask(t, "recipe-trailing-dot"), Attempts: conc, Concurrency: conc}, "r1")
	if waited.Load() {
		t.Error("the measurement's requests were answered before any attempt's: the attempts waited for it")
	}
	if out.Ran != conc {
		t.Errorf("ran %d attempts, want %d", out.Ran, conc)
	}
	if got := f.count(`SELECT count(*) FROM overhead`); got != 1 {
		t.Errorf("overhead measurements stored: %d, want 1", got)
	}
	if st := f.server.Stats(); st.MaxInFlight > conc {
		t.Errorf("%d requests in flight at once, with %d slots", st.MaxInFlight, conc)
	}
}
