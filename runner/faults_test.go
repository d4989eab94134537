package runner_test

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/benchhq/bench/internal/ollamatest"
	"github.com/benchhq/bench/internal/sandboxtest"
	"github.com/benchhq/bench/runner"
	"github.com/benchhq/bench/tasks"
)

// TestModelServerRestartMidRun kills the model server in the middle of a
// run and brings it back: no attempt is lost, none is duplicated, and none
// is scored as if the agent had failed.
func TestModelServerRestartMidRun(t *testing.T) {
	f := newFixture(t, solveRecipe(t))
	f.runner.Backoff = func(int) time.Duration { return 150 * time.Millisecond }
	done := make(chan struct{})
	go func() {
		defer close(done)
		for attemptRequests(f.server.Requests()) < 6 {
			time.Sleep(5 * time.Millisecond)
		}
		f.server.Stop()
		time.Sleep(400 * time.Millisecond)
		if err := f.server.Start(); err != nil {
			t.Error(err)
		}
	}()
	out := f.run(&runner.Plan{Model: "fake", Suite: loadTask(t, "recipe-trailing-dot"), Attempts: 4, Concurrency: 2, MaxTries: 10}, "r1")
	<-done
	if out.Ran != 4 || out.InfraErrors != 0 {
		t.Fatalf("ran %d, infra errors %d; want 4 and 0", out.Ran, out.InfraErrors)
	}
	if got := f.count(`SELECT count(DISTINCT idx) FROM attempts WHERE status='finished' AND reward=1`); got != 4 {
		t.Errorf("distinct attempts scored 1: %d, want 4", got)
	}
	if got := f.count(`SELECT count(*) FROM attempts`); got != 4 {
		t.Errorf("attempt rows: %d, want 4 (no duplicates)", got)
	}
	if got := f.count(`SELECT count(*) FROM attempts WHERE tries > 1`); got == 0 {
		t.Error("no attempt was retried: the server was not down during the run")
	}
}

// writeTask makes a one-task suite in a temp folder.
func writeTask(t testing.TB, toml string, files map[string]string) *tasks.Suite {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "task")
	files["task.toml"] = toml
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	task, err := tasks.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return &tasks.Suite{Name: "t", Dir: filepath.Dir(dir), Tasks: []*tasks.Task{task}}
}

// TestHangingHiddenTestIsKilled: a hidden test that never ends, with a
// child holding its output, is killed at its timeout and scores 0.
func TestHangingHiddenTestIsKilled(t *testing.T) {
	suite := writeTask(t, "format = 1\ninstruction = \"x\"\n[tests]\ncommand = \"sleep 600 & sleep 600\"\ntimeout = \"1s\"\n",
		map[string]string{"workspace/a.txt": "a"})
	f := newFixture(t, giveUp)
	start := time.Now()
	f.run(&runner.Plan{Model: "fake", Suite: suite, Attempts: 1}, "r1")
	if got := f.count(`SELECT count(*) FROM attempts a JOIN test_results r ON r.attempt_id = a.id WHERE a.reward = 0 AND r.timed_out = 1`); got != 1 {
		t.Errorf("timed-out attempts scored 0: %d, want 1", got)
	}
	if el := time.Since(start); el > 5*time.Minute {
		t.Errorf("the run took %s: the hanging test was not killed", el)
	}
}

// TestTaskFolderUntouchedAndTempRemoved: a run never modifies the task
// folder, and removes every attempt folder (and the run's scratch folder
// they are made in) unless asked to keep them.
func TestTaskFolderUntouchedAndTempRemoved(t *testing.T) {
	suite := loadTask(t, "recipe-trailing-dot")
	before := suite.Tasks[0].Hash
	for _, keep := range []bool{false, true} {
		f := newFixture(t, solveRecipe(t))
		f.run(&runner.Plan{Model: "fake", Suite: suite, Attempts: 2, KeepWorkspaces: keep}, "r1")
		again, err := tasks.Load(suite.Tasks[0].Dir)
		if err != nil {
			t.Fatal(err)
		}
		if again.Hash != before {
			t.Errorf("keep=%v: the task folder changed during the run", keep)
		}
		// Kept, the attempt folders stay in the run's scratch folder;
		// else that goes too.
		left, _ := filepath.Glob(filepath.Join(f.runner.TempDir, "*"))
		attempts, _ := filepath.Glob(filepath.Join(f.runner.TempDir, "bench-run-*", "bench-attempt-*"))
		switch {
		case !keep && len(left) != 0:
			t.Errorf("keep=false: %v left in the temp dir, want nothing", left)
		case keep && (len(left) != 1 || len(attempts) != 2):
			t.Errorf("keep=true: %v left in the temp dir, with attempt folders %v; want the run's scratch folder with 2", left, attempts)
		}
	}
}

// attemptRequests counts the requests of attempts (they carry a seed),
// leaving out the preflight and the overhead measurement.
func attemptRequests(reqs []api.ChatRequest) int {
	n := 0
	for _, r := range reqs {
		if r.Options["seed"] != nil {
			n++
		}
	}
	return n
}

// TestHiddenTestsRunInTheSandbox: the hidden tests execute the agent's
// code, so they run in the sandbox the agent's commands ran in: not as
// root, without the operator's environment or its other processes.
func TestHiddenTestsRunInTheSandbox(t *testing.T) {
	sb := sandboxtest.Isolated(t)
	t.Setenv("BENCH_SECRET", "hunter2")
	check := `test -z "$BENCH_SECRET" && test "$HOME" = /home/bench && test -z "$(ls -A "$HOME")" && ! grep -qs hunter2 /proc/[0-9]*/environ`
	if os.Geteuid() == 0 {
		check += ` && test "$(id -u)" != 0`
	}
	suite := writeTask(t, "format = 1\ninstruction = \"x\"\n[tests]\ncommand = '"+check+"'\n", map[string]string{"workspace/a.txt": "a"})
	f := newFixture(t, giveUp)
	f.runner.Sandbox = sb
	f.run(&runner.Plan{Model: "fake", Suite: suite, Attempts: 1}, "r1")
	if got := f.count(`SELECT count(*) FROM attempts WHERE reward = 1`); got != 1 {
		var out string
		_ = f.store.DB().QueryRow(`SELECT output FROM test_results`).Scan(&out)
		t.Errorf("the hidden test did not see a sandbox (output %q)", out)
	}
}

// TestWaitToBeScoredIsNoPartOfTheAttempt: attempts whose hidden tests
// must wait for others' to end (at concurrency 1, two are scored at
// once) do not count the wait as the harness's time, as the wait for a
// model slot is not.
func TestWaitToBeScoredIsNoPartOfTheAttempt(t *testing.T) {
	suite := writeTask(t, "format = 1\ninstruction = \"x\"\n[tests]\ncommand = \"sleep 1\"\n",
		map[string]string{"workspace/a.txt": "a"})
	f := newFixture(t, giveUp)
	f.run(&runner.Plan{Model: "fake", Suite: suite, Attempts: 6, Concurrency: 1}, "r1")
	if got := f.count(`SELECT count(*) FROM attempts WHERE reward IS NOT NULL`); got != 6 {
		t.Fatalf("scored attempts: %d, want 6", got)
	}
	// An attempt of an instant model spends tens of ms of its own; one
	// that counted its wait would count most of another's 1 s test.
	if n := f.count(`SELECT count(*) FROM attempts WHERE harness_ms >= 500`); n > 0 {
		t.Errorf("%d attempts count 500 ms or more of harness time: the wait to be scored is in it", n)
	}
}

// TestAttemptsStartWhileOthersAreScored: an attempt past its loop frees
// its place for a new one while its hidden tests run (stages). At
// concurrency 1 with one spare, four attempts of an instant model all
// reach it before the first attempt's `sleep 2` can have ended; were
// attempts held from set-up to score, the third would wait for the
// first to be scored, two seconds after its first request.
func TestAttemptsStartWhileOthersAreScored(t *testing.T) {
	var mu sync.Mutex
	var first time.Time
	early := map[any]bool{}
	f := newFixture(t, func(req *api.ChatRequest) ollamatest.Reply {
		mu.Lock()
		defer mu.Unlock()
		if first.IsZero() {
			first = time.Now()
		}
		if s, ok := req.Options["seed"]; ok && time.Since(first) < 2*time.Second {
			early[s] = true
		}
		return ollamatest.Reply{Content: "done"}
	})
	suite := writeTask(t, "format = 1\ninstruction = \"x\"\n[tests]\ncommand = \"sleep 2\"\n", map[string]string{"workspace/a.txt": "a"})
	f.run(&runner.Plan{Model: "fake", Suite: suite, Attempts: 4, Concurrency: 1}, "r1")
	if len(early) != 4 {
		t.Errorf("%d of 4 attempts reached the model before the first attempt's hidden tests could end", len(early))
	}
}
