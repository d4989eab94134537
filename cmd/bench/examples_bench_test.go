package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/benchhq/bench/internal/ollamatest"
)

// BenchmarkExampleSuiteRun times the README's first command, `bench run`
// over the example suite with its defaults (G = 4, one attempt at a time),
// against a model that answers at once: what the harness, the task
// environments and the hidden tests cost. "cold" starts from an empty
// environment cache (each task's environment is prepared first), "warm"
// reuses it, as a second run on the same machine does. Target: under 2
// minutes.
//
//	go test -run '^$' -bench ExampleSuiteRun -benchtime 1x ./cmd/bench/
func BenchmarkExampleSuiteRun(b *testing.B) {
	bin, err := builtBench()
	if err != nil {
		b.Fatal(err)
	}
	srv := ollamatest.New(ollamatest.Turns(ollamatest.Reply{Content: "I cannot do that."}))
	defer srv.Close()
	cache := b.TempDir()
	suite, _ := filepath.Abs(filepath.Join("..", "..", "tasks", "suites", "examples"))
	run := func(b *testing.B) time.Duration {
		dir := b.TempDir()
		cmd := exec.Command(bin, "run", "--model", "fake", "--host", srv.URL, "--suite", suite, "--db", filepath.Join(dir, "bench.db"), "--no-progress")
		cmd.Env = append(os.Environ(), "BENCH_CACHE="+cache, "TMPDIR="+dir)
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("bench run: %v\n%s", err, out)
		}
		return time.Since(start)
	}
	for _, phase := range []string{"cold", "warm"} {
		b.Run(phase, func(b *testing.B) {
			var total time.Duration
			for range b.N {
				if phase == "cold" {
					os.RemoveAll(cache)
				}
				total += run(b)
			}
			b.ReportMetric(total.Seconds()/float64(b.N), "s/run")
		})
	}
}
