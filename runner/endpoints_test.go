package runner_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/benchhq/bench/endpoint"
	"github.com/benchhq/bench/internal/ollamatest"
	"github.com/benchhq/bench/internal/openaitest"
	"github.com/benchhq/bench/results"
	"github.com/benchhq/bench/runner"
	"github.com/benchhq/bench/tasks"
)

// quickTask is a one-task suite whose hidden test always passes.
func quickTask(t *testing.T) *tasks.Suite {
	return writeTask(t, "format = 1\ninstruction = \"Look around.\"\n[tests]\ncommand = \"true\"\n",
		map[string]string{"workspace/a.txt": "a\n"})
}

// lookAround is a two-turn trajectory, each answer held back by d.
func lookAround(d time.Duration) ollamatest.Script {
	return ollamatest.Turns(
		ollamatest.Reply{Calls: []ollamatest.Call{call("list_dir", map[string]any{"path": "."})}, Delay: d},
		ollamatest.Reply{Content: "Nothing to do.", Delay: d},
	)
}

// poolOf makes the endpoint pool of fake Ollama servers, each with slots.
func poolOf(t testing.TB, slots int, srvs ...*ollamatest.Server) *endpoint.Pool {
	t.Helper()
	var eps []*endpoint.Endpoint
	for _, s := range srvs {
		e, err := endpoint.New(endpoint.Ollama, endpoint.Spec{URL: s.URL, Slots: slots}, nil)
		if err != nil {
			t.Fatal(err)
		}
		eps = append(eps, e)
	}
	p, err := endpoint.NewPool(eps...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// poolFixture is a fixture whose runner talks to the endpoints of pool.
func poolFixture(t *testing.T, pool *endpoint.Pool) *fixture {
	f := newFixture(t, giveUp)
	f.runner.Endpoints = pool
	return f
}

// probes counts the tool-overhead measuring requests a server received
// (one user message, no system prompt).
func probes(reqs []api.ChatRequest) int {
	n := 0
	for _, r := range reqs {
		if len(r.Messages) == 1 && r.Messages[0].Content == "Hello" {
			n++
		}
	}
	return n
}

// TestTwoEndpointsShareTheAttempts: attempts go to both endpoints, every
// turn records the endpoint that answered it, and the tool overhead is
// measured once, on one endpoint.
func TestTwoEndpointsShareTheAttempts(t *testing.T) {
	a := ollamatest.New(lookAround(10*time.Millisecond), ollamatest.WithDigest("fake", "d1"))
	b := ollamatest.New(lookAround(10*time.Millisecond), ollamatest.WithDigest("fake", "d1"))
	defer a.Close()
	defer b.Close()
	f := poolFixture(t, poolOf(t, 2, a, b))
	out := f.run(&runner.Plan{Model: "fake", Suite: quickTask(t), Attempts: 8, Concurrency: 4}, "r1")
	if out.Ran != 8 || out.InfraErrors != 0 {
		t.Fatalf("ran %d, infra %d; want 8 and 0", out.Ran, out.InfraErrors)
	}
	for _, s := range []*ollamatest.Server{a, b} {
		got := f.count(`SELECT count(DISTINCT attempt_id) FROM turns WHERE endpoint = ?`, s.URL)
		if got == 0 || got == 8 {
			t.Errorf("endpoint %s served %d of 8 attempts: want both endpoints used", s.URL, got)
		}
	}
	if got := f.count(`SELECT count(*) FROM turns WHERE endpoint = ''`); got != 0 {
		t.Errorf("%d turns without an endpoint", got)
	}
	if got := f.count(`SELECT count(*) FROM (SELECT attempt_id FROM turns GROUP BY attempt_id HAVING count(DISTINCT endpoint) > 1)`); got != 0 {
		t.Errorf("%d attempts moved endpoints between turns", got)
	}
	pa, pb := probes(a.Requests()), probes(b.Requests())
	if pa == 0 || pb != 0 {
		t.Errorf("overhead requests: %d on the first endpoint, %d on the second; want all on one, measured once per model", pa, pb)
	}
	run, err := f.store.GetRun(context.Background(), "r1")
	if err != nil || run.ModelDigest != "d1" {
		t.Errorf("stored digest %q (%v), want d1", run.ModelDigest, err)
	}
}

// TestEndpointKilledMidRunLosesNoAttempt: one of two endpoints dies in
// the middle of a run and never comes back. Its attempts in flight are
// retried on the other one as infrastructure failures: every attempt
// finishes, none is scored as the agent's failure, none is run twice.
func TestEndpointKilledMidRunLosesNoAttempt(t *testing.T) {
	a := ollamatest.New(lookAround(20 * time.Millisecond))
	b := ollamatest.New(lookAround(20 * time.Millisecond))
	defer a.Close()
	pool := poolOf(t, 2, a, b)
	var mu sync.Mutex
	var logs []string
	pool.Log = func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		logs = append(logs, format)
	}
	f := poolFixture(t, pool)
	f.runner.Backoff = func(int) time.Duration { return time.Hour } // a retry must not wait: another endpoint is up
	killed := make(chan struct{})
	go func() {
		defer close(killed)
		for attemptRequests(b.Requests()) < 3 {
			time.Sleep(2 * time.Millisecond)
		}
		b.Stop()
	}()
	const n = 12
	out := f.run(&runner.Plan{Model: "fake", Suite: quickTask(t), Attempts: n, Concurrency: 4, MaxTries: 3}, "r1")
	<-killed
	if out.Ran != n || out.InfraErrors != 0 {
		t.Fatalf("ran %d, infra errors %d; want %d and 0", out.Ran, out.InfraErrors, n)
	}
	if got := f.count(`SELECT count(*) FROM attempts WHERE status = 'finished' AND reward = 1`); got != n {
		t.Errorf("finished attempts scored 1: %d, want %d", got, n)
	}
	if got := f.count(`SELECT count(*) FROM attempts`); got != n {
		t.Errorf("attempt rows %d, want %d (none twice)", got, n)
	}
	if got := f.count(`SELECT count(*) FROM attempts WHERE tries > 1`); got == 0 {
		t.Error("no attempt was retried: the endpoint died with none in flight")
	}
	if got := f.count(`SELECT count(*) FROM turns WHERE endpoint = ?`, a.URL); got == 0 {
		t.Error("the endpoint that stayed up served nothing")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(logs) == 0 || !strings.Contains(logs[0], "out of service") {
		t.Errorf("log %q: want the endpoint taken out said", logs)
	}
}

// TestEndpointsServingOtherWeightsAreRefused: two endpoints whose
// digests differ under one model name stop the run before anything is
// stored, unless allowed; a resumed run refuses other weights too.
func TestEndpointsServingOtherWeightsAreRefused(t *testing.T) {
	a := ollamatest.New(lookAround(0), ollamatest.WithDigest("fake", "aaaa"))
	b := ollamatest.New(lookAround(0), ollamatest.WithDigest("fake", "bbbb"))
	defer a.Close()
	defer b.Close()
	f := poolFixture(t, poolOf(t, 1, a, b))
	plan := func() *runner.Plan {
		return &runner.Plan{Model: "fake", Suite: quickTask(t), Attempts: 2, Concurrency: 2}
	}
	_, err := f.runner.Run(context.Background(), plan(), "r1")
	if !errors.Is(err, runner.ErrPreflight) || !strings.Contains(err.Error(), "different models") {
		t.Fatalf("run: %v; want a preflight refusal", err)
	}
	if got := f.count(`SELECT count(*) FROM runs`); got != 0 {
		t.Errorf("runs stored: %d, want 0", got)
	}
	if len(a.Requests())+len(b.Requests()) != 0 {
		t.Errorf("chat requests were sent before the refusal")
	}
	f.runner.AllowMixedModels = true
	f.run(plan(), "r1")
	run, _ := f.store.GetRun(context.Background(), "r1")
	if run.ModelDigest != "aaaa | bbbb" {
		t.Errorf("stored digest %q, want both", run.ModelDigest)
	}

	// Resumed on one endpoint with yet other weights.
	c := ollamatest.New(lookAround(0), ollamatest.WithDigest("fake", "cccc"))
	defer c.Close()
	g := poolFixture(t, poolOf(t, 1, a))
	g.run(&runner.Plan{Model: "fake", Suite: quickTask(t), Attempts: 2}, "r2")
	g.runner.Endpoints = poolOf(t, 1, c)
	_, err = g.runner.Run(context.Background(), &runner.Plan{Model: "fake", Suite: quickTask(t), Attempts: 2}, "r2")
	if !errors.Is(err, runner.ErrPreflight) || !strings.Contains(err.Error(), "aaaa") || !strings.Contains(err.Error(), "cccc") {
		t.Errorf("resume on other weights: %v; want a refusal naming both", err)
	}
}

// TestShardsPartitionThePlan: every attempt is in exactly one shard, the
// shards differ in size by one unit at most, the arms of one task and
// index stay in one shard, and seeds do not depend on the shards.
func TestShardsPartitionThePlan(t *testing.T) {
	suite := loadTask(t, "recipe-trailing-dot")
	suite.Tasks = append(suite.Tasks, loadTask(t, "phonebook-sort").Tasks...)
	for _, n := range []int{1, 2, 3, 5, 14, 20} {
		owner := map[int]int{}
		pair := map[string]int{}
		sizes := make([]int, n)
		var jobs []runner.Job
		for i := range n {
			plan := &runner.Plan{Model: "m", Suite: suite, Attempts: 7, Arms: []runner.Arm{{Name: "a"}, {Name: "b"}}, Shard: runner.Shard{Index: i, Count: n}}
			if err := plan.Normalize(); err != nil {
				t.Fatal(err)
			}
			jobs = plan.Jobs()
			for pos, j := range jobs {
				if !plan.InShard(pos) {
					continue
				}
				if prev, ok := owner[pos]; ok {
					t.Fatalf("N=%d: job %d in shards %d and %d", n, pos, prev, i)
				}
				owner[pos] = i
				sizes[i]++
				key := fmt.Sprintf("%s#%d", j.Task.ID, j.Index)
				if prev, ok := pair[key]; ok && prev != i {
					t.Fatalf("N=%d: the arms of %s are in shards %d and %d", n, key, prev, i)
				}
				pair[key] = i
			}
		}
		if len(owner) != len(jobs) {
			t.Fatalf("N=%d: %d of %d jobs in a shard", n, len(owner), len(jobs))
		}
		lo, hi := sizes[0], sizes[0]
		for _, s := range sizes {
			lo, hi = min(lo, s), max(hi, s)
		}
		if hi-lo > 2 {
			t.Errorf("N=%d: shard sizes %v, want within one unit (2 arms)", n, sizes)
		}
	}
	for _, bad := range []string{"4/4", "-1/4", "1/0", "1", "a/b"} {
		if _, err := runner.ParseShard(bad); err == nil {
			t.Errorf("ParseShard(%q) accepted", bad)
		}
	}
	if sh, err := runner.ParseShard("2/4"); err != nil || sh != (runner.Shard{Index: 2, Count: 4}) || sh.String() != "2/4" {
		t.Errorf("ParseShard(2/4) = %v, %v", sh, err)
	}
}

// TestShardRunsItsSliceOnly: a shard stores its attempts only, with the
// plan's seeds, stores no advantages (its groups are partial), says it is
// a shard, and refuses to be continued as another shard.
func TestShardRunsItsSliceOnly(t *testing.T) {
	f := newFixture(t, giveUp)
	plan := func(sh runner.Shard) *runner.Plan {
		return &runner.Plan{Model: "fake", Suite: quickTask(t), Attempts: 5, Shard: sh}
	}
	out := f.run(plan(runner.Shard{Index: 1, Count: 2}), "r1")
	if out.Ran != 2 {
		t.Fatalf("shard 1/2 of 5 attempts ran %d, want 2 (indices 1 and 3)", out.Ran)
	}
	if got := f.count(`SELECT count(*) FROM attempts WHERE idx IN (1, 3)`); got != 2 {
		t.Errorf("attempts 1 and 3 stored: %d", got)
	}
	if got := f.count(`SELECT count(*) FROM attempts WHERE advantage IS NOT NULL`); got != 0 {
		t.Errorf("a shard stored %d advantages over partial groups", got)
	}
	run, _ := f.store.GetRun(context.Background(), "r1")
	if run.Shard != "1/2" || run.Status != results.RunFinished {
		t.Errorf("run shard %q status %s, want 1/2 finished", run.Shard, run.Status)
	}
	var seed int64
	if err := f.store.DB().Get(&seed, `SELECT seed FROM attempts WHERE idx = 3`); err != nil {
		t.Fatal(err)
	}
	if want := runner.AttemptSeed(run.Seed, run.Tasks[0].ID, 3); seed != want {
		t.Errorf("seed of attempt 3 = %d, want the plan's %d", seed, want)
	}
	rep, err := f.store.Report(context.Background(), "r1", results.ReportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := rep.Write(&b, results.FormatTable); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "shard 1/2 of the plan") || rep.Run.Shard != "1/2" {
		t.Errorf("a shard's report does not say it is one:\n%s", b.String())
	}
	_, err = f.runner.Run(context.Background(), plan(runner.Shard{Index: 0, Count: 2}), "r1")
	if err == nil || !strings.Contains(err.Error(), "shard 1/2") {
		t.Errorf("continuing shard 1/2 as 0/2: %v; want a refusal", err)
	}
	back, err := runner.PlanFromRun(run)
	if err != nil || back.Shard != (runner.Shard{Index: 1, Count: 2}) {
		t.Errorf("plan of a stored shard: %+v, %v", back, err)
	}
}

// TestOpenAIEndpointRunsTheTask: a whole run against an OpenAI-compatible
// server: the task is solved, scored, and its turns carry the server's
// usage counts and URL.
func TestOpenAIEndpointRunsTheTask(t *testing.T) {
	srv := openaitest.New(solveRecipe(t), openaitest.WithModels("qwen"), openaitest.WithContext(100000))
	defer srv.Close()
	e, err := endpoint.New(endpoint.OpenAI, endpoint.Spec{URL: srv.URL + "/v1", Slots: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	pool, _ := endpoint.NewPool(e)
	defer pool.Close()
	f := poolFixture(t, pool)
	out := f.run(&runner.Plan{Model: "qwen", API: "openai", Suite: loadTask(t, "recipe-trailing-dot"), Attempts: 2, Concurrency: 2}, "r1")
	if out.Ran != 2 || out.InfraErrors != 0 {
		t.Fatalf("ran %d, infra %d", out.Ran, out.InfraErrors)
	}
	if got := f.count(`SELECT count(*) FROM attempts WHERE reward = 1`); got != 2 {
		t.Errorf("attempts scored 1: %d, want 2", got)
	}
	if got := f.count(`SELECT count(*) FROM turns WHERE endpoint = ? AND prompt_tokens > 0 AND completion_tokens > 0`, srv.URL); got != 10 {
		t.Errorf("turns with the server's URL and usage counts: %d, want 10", got)
	}
	run, _ := f.store.GetRun(context.Background(), "r1")
	if run.ModelDigest != "root=/models/qwen max_model_len=100000" {
		t.Errorf("stored identity %q", run.ModelDigest)
	}
	bad := &runner.Plan{Model: "qwen", API: "openai", Suite: quickTask(t), Options: map[string]any{"num_gpu": 1}}
	if err := bad.Normalize(); err == nil || !strings.Contains(err.Error(), "num_gpu") {
		t.Errorf("an Ollama-only option with the OpenAI API: %v", err)
	}
}

// TestOpenAIPromptsAreNotTakenForCut: an OpenAI-compatible server refuses
// a prompt past its context rather than cutting it, and takes no num_ctx:
// a prompt past the num_ctx the plan keeps is no truncated turn.
func TestOpenAIPromptsAreNotTakenForCut(t *testing.T) {
	srv := openaitest.New(ollamatest.Turns(
		ollamatest.Reply{PromptTokens: 20000, Calls: []ollamatest.Call{call("list_dir", map[string]any{"path": "."})}},
		ollamatest.Reply{PromptTokens: 20100, Content: "done"},
	), openaitest.WithModels("qwen"), openaitest.WithContext(100000))
	defer srv.Close()
	e, err := endpoint.New(endpoint.OpenAI, endpoint.Spec{URL: srv.URL + "/v1", Slots: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	pool, _ := endpoint.NewPool(e)
	defer pool.Close()
	f := poolFixture(t, pool)
	plan := &runner.Plan{Model: "qwen", API: "openai", Suite: quickTask(t), Attempts: 1}
	f.run(plan, "r1")
	if got := f.count(`SELECT count(*) FROM turns WHERE prompt_tokens >= 20000`); got != 2 {
		t.Fatalf("turns with the long prompts: %d, want 2", got)
	}
	if got := f.count(`SELECT count(*) FROM turns WHERE truncated = 1`); got != 0 {
		t.Errorf("%d turns taken for cut on a server that cuts nothing", got)
	}
}
