package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/benchhq/bench/internal/ollamatest"
	"github.com/benchhq/bench/internal/rootfstest"
)

// BenchmarkHarborSuiteRun compares whole `bench run` processes on the same
// task written in Harbor's format (its environment an image, each attempt
// in a copy of it, scored by its verifier) and in bench's own (a workspace
// folder, hidden tests), with a scripted model that solves it at once:
// attempts per minute and the CPU of bench and all it ran, per attempt.
// Environments are prepared by a first run, not measured. CPU is the
// figure to read on a shared machine.
//
//	go test -run '^$' -bench HarborSuiteRun -benchtime 1x ./cmd/bench/
func BenchmarkHarborSuiteRun(b *testing.B) {
	if _, err := sandboxFor(b.Context(), "required"); err != nil {
		b.Skipf("no sandbox: %v", err)
	}
	bin, err := builtBench()
	if err != nil {
		b.Fatal(err)
	}
	srv := ollamatest.New(ollamatest.Turns(
		ollamatest.Reply{Calls: []ollamatest.Call{{Name: "run_command", Args: map[string]any{"command": "echo hello > out"}}}},
		ollamatest.Reply{Content: "Done."},
	))
	defer srv.Close()
	ref := rootfstest.Push(b, "bash", "cat")
	suites := map[string]map[string]string{
		"harbor": {
			"task.toml":              "[agent]\ntimeout_sec = 60\n",
			"instruction.md":         "Write hello to out.\n",
			"environment/Dockerfile": "FROM " + ref + "\nWORKDIR /app\n",
			"tests/test.sh":          "read l < /app/out; r=0; [ \"$l\" = hello ] && r=1; echo $r > /logs/verifier/reward.txt\n",
			"solution/solve.sh":      "echo hello > /app/out\n",
		},
		"bench": {
			"task.toml":         "format = 1\ninstruction = \"Write hello to out.\"\n[tests]\ncommand = \"test \\\"$(cat out)\\\" = hello\"\nresult = [\"out\"]\n",
			"workspace/.keep":   "",
			"solution/solve.sh": "echo hello > out\n",
		},
	}
	const attempts = 8
	for _, format := range []string{"bench", "harbor"} {
		b.Run(format, func(b *testing.B) {
			suite := b.TempDir()
			writeFiles(b, filepath.Join(suite, "hello"), suites[format])
			cache := b.TempDir()
			run := func() (time.Duration, time.Duration) {
				dir := b.TempDir()
				cmd := exec.Command(bin, "run", "--model", "fake", "--host", srv.URL, "--suite", suite, "--attempts", "8", "-j", "2",
					"--db", filepath.Join(dir, "bench.db"), "--no-progress", "--cache", filepath.Join(cache, "envs"))
				cmd.Env = append(os.Environ(), "TMPDIR="+dir)
				start := time.Now()
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("bench run: %v\n%s", err, out)
				}
				ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
				cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
				return time.Since(start), cpu
			}
			run() // prepares the environment
			b.ResetTimer()
			var wall, cpu time.Duration
			for range b.N {
				w, c := run()
				wall, cpu = wall+w, cpu+c
			}
			n := float64(b.N * attempts)
			b.ReportMetric(n/wall.Minutes(), "attempts/min")
			b.ReportMetric(cpu.Seconds()*1000/n, "cpu-ms/attempt")
		})
	}
}
