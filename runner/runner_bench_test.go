package runner_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/internal/ollamatest"
	"github.com/benchhq/bench/internal/sandboxtest"
	"github.com/benchhq/bench/results"
	"github.com/benchhq/bench/runner"
	"github.com/benchhq/bench/tasks"
)

// benchTask writes a small task whose hidden test is `true`, so that the
// test process costs as little as possible and is then subtracted.
func benchTask(b *testing.B) *tasks.Suite {
	b.Helper()
	dir := filepath.Join(b.TempDir(), "bench-task")
	files := map[string]string{
		"task.toml":            "format = 1\ninstruction = \"Fix the greeting in hello.py.\"\n[tests]\ncommand = \"true\"\n",
		"workspace/hello.py":   "def greet(name):\n    return 'Helo, ' + name\n",
		"workspace/README.md":  "A tiny project.\n",
		"workspace/lib/x.py":   "X = 1\n",
		"tests/test_hello.py":  "import hello\n",
		"solution/solve.sh":    "sed -i s/Helo/Hello/ hello.py\n",
		"workspace/lib/y.py":   "Y = 2\n",
		"workspace/data/a.txt": "alpha\n",
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	t, err := tasks.Load(dir)
	if err != nil {
		b.Fatal(err)
	}
	return &tasks.Suite{Name: "bench", Dir: filepath.Dir(dir), Tasks: []*tasks.Task{t}}
}

// fiveTurns is a 5-turn trajectory: four tool calls, then an answer.
var fiveTurns = ollamatest.Turns(
	ollamatest.Reply{Calls: []ollamatest.Call{{Name: "list_dir", Args: map[string]any{"path": ".", "recursive": true}}}},
	ollamatest.Reply{Calls: []ollamatest.Call{{Name: "read_file", Args: map[string]any{"path": "hello.py"}}}},
	ollamatest.Reply{Calls: []ollamatest.Call{{Name: "edit_file", Args: map[string]any{"path": "hello.py", "old_string": "Helo", "new_string": "Hello"}}}},
	ollamatest.Reply{Calls: []ollamatest.Call{{Name: "search", Args: map[string]any{"pattern": "Hello"}}}},
	ollamatest.Reply{Content: "Fixed the greeting."},
)

// BenchmarkAttempt measures the harness's own time per attempt: a 5-turn
// scripted trajectory against an instant fake model over real HTTP, the
// workspace copy, the tools, and the SQLite transaction, with the hidden
// test process's time subtracted. Reported as harness-ms/attempt; the
// target is under 20 ms on 2 cores. Sub-benchmarks at concurrency 1, 2, 4
// also report attempts/s.
//
//	go test -run '^$' -bench Attempt -benchtime 200x ./runner/
func BenchmarkAttempt(b *testing.B) {
	sb := sandboxtest.New(b)
	for _, conc := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("concurrency=%d", conc), func(b *testing.B) {
			srv := ollamatest.New(fiveTurns)
			defer srv.Close()
			store, err := results.Open(context.Background(), filepath.Join(b.TempDir(), "bench.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer store.Close()
			model, _ := agent.NewOllama(srv.URL, nil)
			r := &runner.Runner{Model: model, Store: store, TempDir: b.TempDir(), Sandbox: sb}
			plan := &runner.Plan{Model: "fake", Suite: benchTask(b), Attempts: b.N, Concurrency: conc}
			b.ResetTimer()
			start := time.Now()
			out, err := r.Run(context.Background(), plan, "bench")
			elapsed := time.Since(start)
			b.StopTimer()
			if err != nil {
				b.Fatal(err)
			}
			if out.Ran != b.N {
				b.Fatalf("ran %d of %d", out.Ran, b.N)
			}
			var testMS float64
			if err := store.DB().QueryRowContext(context.Background(), `SELECT coalesce(sum(duration_ms), 0) FROM test_results`).Scan(&testMS); err != nil {
				b.Fatal(err)
			}
			var turns int
			if err := store.DB().QueryRowContext(context.Background(), `SELECT count(*) FROM turns`).Scan(&turns); err != nil {
				b.Fatal(err)
			}
			if turns != 5*b.N {
				b.Fatalf("turns stored %d, want %d", turns, 5*b.N)
			}
			if conc == 1 {
				harness := elapsed.Seconds()*1000 - testMS
				b.ReportMetric(harness/float64(b.N), "harness-ms/attempt")
			}
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "attempts/s")
		})
	}
}
