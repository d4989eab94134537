package evaluator_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/benchhq/bench/evaluator"
	"github.com/benchhq/bench/internal/cputime"
	"github.com/benchhq/bench/internal/sandboxtest"
	"github.com/benchhq/bench/sandbox"
	"github.com/benchhq/bench/tasks"
)

// BenchmarkScoringCost measures what scoring adds to an attempt beside the
// hidden tests themselves, on the example task recipe-trailing-dot with
// its reference solution in the attempt's workspace: collecting the
// agent's change (walk, compare, diff), making the scoring folder (a
// workspace copy, the change, tests/), and the sandbox around a test
// command that does nothing (its PID namespace ends its processes).
// Reported per attempt: collect-ms, and score-ms, all of scoring with an
// empty test command, collect-ms included; sandbox-cpu-ms is the CPU time
// of the processes the test command's sandbox took (bwrap, setpriv and the
// shell), which bench's own CPU time does not show. With no per-test report there
// is no canary run: a passing attempt of a go-test-json or unittest task
// pays a second scoring run beside this (about score-ms again, plus its
// tests' own time).
//
//	go test -run '^$' -bench ScoringCost -benchtime 50x ./evaluator/
func BenchmarkScoringCost(b *testing.B) {
	task, err := tasks.Load(filepath.Join("..", "tasks", "testdata", "in-process", "recipe-trailing-dot"))
	if err != nil {
		b.Fatal(err)
	}
	task.Tests.Command, task.Tests.Report = "true", "" // the tests' own time is not scoring's cost
	ws := b.TempDir()
	if err := task.CopyWorkspace(ws); err != nil {
		b.Fatal(err)
	}
	fixed, err := os.ReadFile(filepath.Join(task.SolutionDir(), "recipe.py"))
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "recipe.py"), fixed, 0o644); err != nil {
		b.Fatal(err)
	}
	os.MkdirAll(filepath.Join(ws, "__pycache__"), 0o755) // left out, as an agent's run leaves it
	scorer := &evaluator.Scorer{Sandbox: sandboxtest.New(b), TempDir: b.TempDir()}
	ctx := context.Background()
	var collect, total time.Duration
	b.ResetTimer()
	children := cputime.Children()
	for range b.N {
		t0 := time.Now()
		if _, err := evaluator.CollectChange(task, ws); err != nil {
			b.Fatal(err)
		}
		collect += time.Since(t0)
		t0 = time.Now()
		res, err := scorer.Score(ctx, task, ws)
		if err != nil || !res.Passed {
			b.Fatalf("score: %v %+v", err, res)
		}
		total += time.Since(t0)
	}
	b.ReportMetric(float64(collect.Microseconds())/1000/float64(b.N), "collect-ms")
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "score-ms")
	b.ReportMetric((cputime.Children()-children).Seconds()*1000/float64(b.N), "sandbox-cpu-ms")
}

// BenchmarkGoldenAgainstBare measures scoring a passing attempt of the
// golden example task recipe-trailing-dot (its observation command, then
// bench's comparison) beside bare-golden, the same observation command
// alone in the sandbox on a folder made once: what scoring costs beyond
// the command itself is bench's (the scoring folder, the cases, reading
// and comparing the observations). Wall ms and the CPU of the sandboxes'
// processes per attempt. BenchmarkScoringByVerdict compares the kinds of
// verdict.
//
//	go test -run '^$' -bench GoldenAgainstBare -benchtime 10x ./evaluator/
func BenchmarkGoldenAgainstBare(b *testing.B) {
	sb := sandboxtest.New(b)
	ctx := context.Background()
	task, err := tasks.Load(filepath.Join("..", "tasks", "suites", "examples", "recipe-trailing-dot"))
	if err != nil {
		b.Fatal(err)
	}
	ws := b.TempDir()
	if err := task.CopyWorkspace(ws); err != nil {
		b.Fatal(err)
	}
	fixed, err := os.ReadFile(filepath.Join(task.SolutionDir(), "recipe.py"))
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "recipe.py"), fixed, 0o644); err != nil {
		b.Fatal(err)
	}
	report := func(b *testing.B, took, children time.Duration) {
		b.ReportMetric(float64(took.Microseconds())/1000/float64(b.N), "ms/attempt")
		b.ReportMetric(children.Seconds()*1000/float64(b.N), "sandbox-cpu-ms/attempt")
	}
	b.Run("golden", func(b *testing.B) {
		scorer := &evaluator.Scorer{Sandbox: sb, TempDir: b.TempDir()}
		children := cputime.Children()
		t0 := time.Now()
		for range b.N {
			res, err := scorer.Score(ctx, task, ws)
			if err != nil || !res.Passed {
				b.Fatalf("score: %v %+v", err, res)
			}
		}
		report(b, time.Since(t0), cputime.Children()-children)
	})
	b.Run("bare-golden", func(b *testing.B) {
		dir := b.TempDir()
		if err := tasks.CopyTree(ws, dir); err != nil {
			b.Fatal(err)
		}
		if err := task.CopyTests(dir); err != nil {
			b.Fatal(err)
		}
		cases, obs := filepath.Join(dir, "cases"), filepath.Join(dir, "obs")
		if err := tasks.CopyTree(task.CasesDir(), cases); err != nil {
			b.Fatal(err)
		}
		os.Mkdir(obs, 0o755)
		command := task.Golden.Command
		if task.Golden.Each != "" {
			command = `for c in "$BENCH_CASES"/*; do ` + task.Golden.Each + ` < "$c" > "$BENCH_OBSERVATIONS/${c##*/}"; done`
		}
		env := []string{"PATH=/usr/bin:/bin", "BENCH_CASES=" + cases, "BENCH_OBSERVATIONS=" + obs}
		user := sb.NewUser()
		children := cputime.Children()
		t0 := time.Now()
		for range b.N {
			cmd, err := sb.Command(ctx, sandbox.Spec{Dir: dir, User: user}, []string{"/bin/sh", "-c", command}, env)
			if err != nil {
				b.Fatal(err)
			}
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("%v: %s", err, out)
			}
		}
		report(b, time.Since(t0), cputime.Children()-children)
	})
}
