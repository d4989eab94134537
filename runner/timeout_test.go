package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchhq/bench/internal/ollamatest"
	"github.com/benchhq/bench/results"
	"github.com/benchhq/bench/runner"
	"github.com/benchhq/bench/tasks"
)

// slowTask is a task whose hidden tests sleep past their 2 s timeout when
// the scored workspace holds slow.txt (sleep 600), and, once its
// environment is prepared, when it holds the reference's solved.txt too
// (sleep 601) if overloaded: the two hidden-test runs of the preparation
// count themselves in the scoring HOME, and a third run finds the count.
func slowTask(t *testing.T, overloaded bool) *runner.Plan {
	slowRef := "true"
	if overloaded {
		slowRef = `n=$(cat "$HOME/.runs" 2>/dev/null || echo 0); { echo $((n+1)) > "$HOME/.runs"; } 2>/dev/null; [ "$n" -lt 2 ] || sleep 601`
	}
	cmd := `if [ -f slow.txt ]; then sleep 600; fi; if [ -f solved.txt ]; then ` + slowRef + `; fi; true`
	suite := writeTask(t, "format = 1\ninstruction = \"x\"\n[tests]\ncommand = '''"+cmd+"'''\ntimeout = \"2s\"\n",
		map[string]string{"workspace/a.txt": "a", "solution/solve.sh": "touch solved.txt\n"})
	return &runner.Plan{Model: "fake", Suite: suite, Attempts: 1, MaxTries: 2}
}

// writeSlow is an agent that writes slow.txt and stops.
func writeSlow() ollamatest.Script {
	return ollamatest.Turns(
		ollamatest.Reply{Calls: []ollamatest.Call{call("write_file", map[string]any{"path": "slow.txt", "content": "x"})}},
		ollamatest.Reply{Content: "done"},
	)
}

// TestTimeoutIsJudgedAgainstTheReference: hidden tests that time out score
// 0 when the reference solution's tests, run right after in the same
// environment, are quick (their time is stored); when those time out too
// the machine is overloaded, and the attempt is an infrastructure failure,
// not a 0.
func TestTimeoutIsJudgedAgainstTheReference(t *testing.T) {
	for _, tc := range []struct {
		overloaded bool
		status     results.AttemptStatus
	}{
		{false, results.StatusFinished},
		{true, results.StatusInfraError},
	} {
		t.Run(map[bool]string{false: "the agent's", true: "the machine's"}[tc.overloaded], func(t *testing.T) {
			f := newFixture(t, writeSlow())
			f.run(slowTask(t, tc.overloaded), "r1")
			var a struct {
				Status results.AttemptStatus `db:"status"`
				Reward *float64              `db:"reward"`
				Error  string                `db:"error"`
				Ref    *float64              `db:"ref_duration_ms"`
				Timed  bool                  `db:"timed_out"`
			}
			if err := f.store.DB().Get(&a, `SELECT a.status, a.reward, coalesce(a.error, '') AS error, r.ref_duration_ms, r.timed_out
				FROM attempts a JOIN test_results r ON r.attempt_id = a.id`); err != nil {
				t.Fatal(err)
			}
			if a.Status != tc.status || !a.Timed {
				t.Fatalf("status %s (timed out %v, error %q), want %s after a timeout", a.Status, a.Timed, a.Error, tc.status)
			}
			switch {
			case !tc.overloaded && (a.Reward == nil || *a.Reward != 0 || a.Ref == nil || *a.Ref <= 0 || *a.Ref >= 2000):
				t.Errorf("reward %v, reference %v ms: want 0 and the reference's quick run", a.Reward, a.Ref)
			case tc.overloaded && (a.Reward != nil || !strings.Contains(a.Error, "overloaded")):
				t.Errorf("reward %v, error %q: want none, and why", a.Reward, a.Error)
			}
		})
	}
}

// TestCtrlCDuringTheReferenceRun: stopped while the reference solution's
// tests run after a timeout, the attempt is canceled (not stored, run
// again on resume), neither rewarded 0 nor an infrastructure failure.
func TestCtrlCDuringTheReferenceRun(t *testing.T) {
	f := newFixture(t, writeSlow())
	plan := slowTask(t, true)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// The reference's tests are the only "sleep 601".
		for ctx.Err() == nil {
			if len(processes("sleep 601")) > 0 {
				cancel()
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	f.runner.Run(ctx, plan, "r1")
	if ctx.Err() == nil {
		t.Fatal("the run ended before the reference's tests started")
	}
	if n := f.count(`SELECT count(*) FROM attempts`); n != 0 {
		t.Errorf("%d attempts stored, want none: the interrupted one is not scored, and runs again on resume", n)
	}
}

// processes lists the processes whose command line is s (not the shells
// whose script holds it).
func processes(s string) []string {
	var out []string
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err == nil && strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " ")) == s {
			out = append(out, p)
		}
	}
	return out
}

// TestCanaryRunTimeoutIsJudgedAgainstTheReferencesCanaryRun: a timeout of
// the canary run (the hidden tests instrumented, after they passed) is
// compared with the reference solution's canary run, not with its plain
// run: where the instrumented tests are slow for any solution, the
// machine, not the agent, is to blame; where only the agent's are, 0.
func TestCanaryRunTimeoutIsJudgedAgainstTheReferencesCanaryRun(t *testing.T) {
	test := `import os, time, unittest


class T(unittest.TestCase):
    def test_answer(self):
        answer = open("answer.txt").read()
        if "_bench_" + "instrument_" in open(__file__).read() and (EVERYONE or "slow" in answer):
            time.sleep(600)
        self.assertIn("42", answer)
`
	for _, tc := range []struct {
		name     string
		everyone bool
		status   results.AttemptStatus
	}{
		{"the agent's", false, results.StatusFinished},
		{"the machine's", true, results.StatusInfraError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.Replace(test, "EVERYONE", map[bool]string{false: "False", true: "True"}[tc.everyone], 1)
			suite := writeTask(t, "format = 1\ninstruction = \"x\"\n[tests]\ncommand = \"python3 -m unittest -v test_answer\"\nreport = \"unittest\"\ntimeout = \"3s\"\nresult = [\"answer.txt\"]\n",
				map[string]string{"workspace/answer.txt": "?\n", "tests/test_answer.py": src, "solution/solve.sh": "echo 42 > answer.txt\n"})
			if err := suite.Tasks[0].WriteRecord(&tasks.Record{FailToPass: []string{"test_answer.T.test_answer"}}); err != nil {
				t.Fatal(err)
			}
			f := newFixture(t, ollamatest.Turns(
				ollamatest.Reply{Calls: []ollamatest.Call{call("write_file", map[string]any{"path": "answer.txt", "content": "42 slow\n"})}},
				ollamatest.Reply{Content: "done"},
			))
			f.run(&runner.Plan{Model: "fake", Suite: suite, Attempts: 1, MaxTries: 1}, "r1")
			var a struct {
				Status results.AttemptStatus `db:"status"`
				Reward *float64              `db:"reward"`
				Error  string                `db:"error"`
			}
			if err := f.store.DB().Get(&a, `SELECT status, reward, coalesce(error, '') AS error FROM attempts`); err != nil {
				t.Fatal(err)
			}
			if a.Status != tc.status {
				t.Fatalf("status %s (reward %v, error %q), want %s", a.Status, a.Reward, a.Error, tc.status)
			}
			if tc.status == results.StatusFinished && (a.Reward == nil || *a.Reward != 0) {
				t.Errorf("reward %v, want 0", a.Reward)
			}
		})
	}
}
