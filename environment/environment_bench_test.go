package environment_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/benchhq/bench/environment"
	"github.com/benchhq/bench/evaluator"
	"github.com/benchhq/bench/internal/sandboxtest"
	"github.com/benchhq/bench/tasks"
)

// BenchmarkSemverHiddenTests measures, side by side in one run, the hidden
// tests of the example task semver-compare, in its in-process form
// (tasks/testdata/in-process: go test), on its reference solution: in
// the task's prepared environment (a scoring run: fresh scoring folder, a
// view of the environment as HOME, the sandbox, a fresh user) and as a
// developer would run them on the host, `go test -count=1 ./...` with a
// warm build cache. The target is a ratio of at most 3.
//
//	go test -run '^$' -bench SemverHiddenTests -benchtime 10x ./environment/
func BenchmarkSemverHiddenTests(b *testing.B) {
	if _, err := exec.LookPath("go"); err != nil {
		b.Skip("no go command")
	}
	ctx := context.Background()
	task, err := tasks.Load(filepath.Join("..", "tasks", "testdata", "in-process", "semver-compare"))
	if err != nil {
		b.Fatal(err)
	}
	sb := sandboxtest.New(b)
	cache := &environment.Cache{Dir: b.TempDir(), Sandbox: sb, TempDir: b.TempDir()}
	start := time.Now()
	env, err := cache.Prepare(ctx, task)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("environment prepared in %s (%d files, %d bytes)", time.Since(start).Round(time.Millisecond), env.Meta.Files, env.Meta.Bytes)
	scratch := b.TempDir()
	change, ok, err := environment.Solution(ctx, task, scratch)
	if err != nil || !ok {
		b.Fatalf("solution: %v (ok %v)", err, ok)
	}
	scorer := &evaluator.Scorer{Sandbox: sb, TempDir: b.TempDir(),
		Home: func(context.Context, *tasks.Task) (string, func(), error) { return env.ScoringView() }}

	// The host: the solved workspace with the hidden tests, a warm cache.
	host := filepath.Join(b.TempDir(), "work")
	if err := os.Mkdir(host, 0o755); err != nil {
		b.Fatal(err)
	}
	if err := task.CopyWorkspace(host); err != nil {
		b.Fatal(err)
	}
	if err := change.Apply(host); err != nil {
		b.Fatal(err)
	}
	if err := task.CopyTests(host); err != nil {
		b.Fatal(err)
	}
	gocache := b.TempDir()
	goTest := func() {
		cmd := exec.Command("go", "test", "-count=1", "./...")
		cmd.Dir = host
		cmd.Env = append(os.Environ(), "GOCACHE="+gocache, "GOFLAGS=")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("go test on the host: %v\n%s", err, out)
		}
	}
	goTest() // warms the host's cache
	var prepared, onHost time.Duration
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		res, err := scorer.Run(ctx, task, change)
		if err != nil || !res.Passed {
			b.Fatalf("scoring the solution: %v, %+v", err, res)
		}
		prepared += time.Since(t0)
		t0 = time.Now()
		goTest()
		onHost += time.Since(t0)
	}
	b.StopTimer()
	b.ReportMetric(prepared.Seconds()/float64(b.N), "prepared-s/op")
	b.ReportMetric(onHost.Seconds()/float64(b.N), "host-s/op")
	b.ReportMetric(float64(prepared)/float64(onHost), "ratio")
}
