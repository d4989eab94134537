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
