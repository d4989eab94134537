package runner_test

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/internal/cputime"
	"github.com/benchhq/bench/internal/ollamatest"
	"github.com/benchhq/bench/internal/sandboxtest"
	"github.com/benchhq/bench/results"
	"github.com/benchhq/bench/runner"
	"github.com/benchhq/bench/tasks"
)

// benchTask writes a small task whose hidden test is `true`, so that the
// test process costs as little as possible and is then subtracted.
func benchTask(b *testing.B) *tasks.Suite { return benchTaskTested(b, "true") }

// benchTaskTested is benchTask with another hidden test command.
func benchTaskTested(b *testing.B, test string) *tasks.Suite {
	b.Helper()
	return writeTask(b, "format = 1\ninstruction = \"Fix the greeting in hello.py.\"\n[tests]\ncommand = \""+test+"\"\n", map[string]string{
		"workspace/hello.py":   "def greet(name):\n    return 'Helo, ' + name\n",
		"workspace/README.md":  "A tiny project.\n",
		"workspace/lib/x.py":   "X = 1\n",
		"tests/test_hello.py":  "import hello\n",
		"solution/solve.sh":    "sed -i s/Helo/Hello/ hello.py\n",
		"workspace/lib/y.py":   "Y = 2\n",
		"workspace/data/a.txt": "alpha\n",
	})
}

// fiveTurns is a 5-turn trajectory: four tool calls, then an answer. Its
// prompt counts are given, so that the fake model does not count words of
// every request: its CPU, on the same cores, would delay the harness's.
var fiveTurns = ollamatest.Turns(
	ollamatest.Reply{PromptTokens: 1000, Calls: []ollamatest.Call{{Name: "list_dir", Args: map[string]any{"path": ".", "recursive": true}}}},
	ollamatest.Reply{PromptTokens: 1200, Calls: []ollamatest.Call{{Name: "read_file", Args: map[string]any{"path": "hello.py"}}}},
	ollamatest.Reply{PromptTokens: 1400, Calls: []ollamatest.Call{{Name: "edit_file", Args: map[string]any{"path": "hello.py", "old_string": "Helo", "new_string": "Hello"}}}},
	ollamatest.Reply{PromptTokens: 1600, Calls: []ollamatest.Call{{Name: "search", Args: map[string]any{"pattern": "Hello"}}}},
	ollamatest.Reply{PromptTokens: 1800, Content: "Fixed the greeting."},
)

// benchScripts are the fake model's scripts that a child process started
// by ollamatest.Spawn can serve.
var benchScripts = map[string]ollamatest.Script{
	"five-turns": fiveTurns,
}

// BenchmarkAttempt measures the harness's own cost per attempt: a 5-turn
// scripted trajectory against an instant fake model over real HTTP, the
// workspace copy, the tools, and the SQLite transaction. The fake model
// runs in a child process, so that its CPU time and allocations are not
// counted as the harness's. Sub-benchmarks at concurrency 1, 2, 4 report:
//
//   - cpu-ms/attempt: this process's CPU time (user + system, every
//     thread, the garbage collector included) per attempt; the hidden-test
//     process and the fake model are other processes and are not in it.
//     Target: under 10 ms.
//
//   - B/op: bytes allocated per attempt. Target: at most 2 MB.
//
//   - attempts/s.
//
//   - steal-%: the share of the processors a virtual machine's host took
//     meanwhile for its other guests (every benchmark here prints it).
//
//     go test -run '^$' -bench Attempt -benchtime 200x ./runner/
func BenchmarkAttempt(b *testing.B) {
	sb := sandboxtest.New(b)
	for _, conc := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("concurrency=%d", conc), func(b *testing.B) {
			b.ReportAllocs()
			srv := ollamatest.Spawn(b, "five-turns", ollamatest.SpawnOptions{})
			store, err := results.Open(context.Background(), filepath.Join(b.TempDir(), "bench.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer store.Close()
			model, _ := agent.NewOllama(srv.URL, nil)
			r := &runner.Runner{Model: model, Store: store, TempDir: b.TempDir(), Sandbox: sb}
			plan := &runner.Plan{Model: "fake", Suite: benchTask(b), Attempts: b.N, Concurrency: conc}
			b.ResetTimer()
			start, cpu0, m0 := time.Now(), cputime.Self(), cputime.ReadMachine()
			out, err := r.Run(context.Background(), plan, "bench")
			elapsed, cpu := time.Since(start), cputime.Self()-cpu0
			reportSteal(b, m0)
			b.StopTimer()
			if err != nil {
				b.Fatal(err)
			}
			if out.Ran != b.N {
				b.Fatalf("ran %d of %d", out.Ran, b.N)
			}
			var turns int
			if err := store.DB().QueryRowContext(context.Background(), `SELECT count(*) FROM turns`).Scan(&turns); err != nil {
				b.Fatal(err)
			}
			if turns != 5*b.N {
				b.Fatalf("turns stored %d, want %d", turns, 5*b.N)
			}
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "attempts/s")
			b.ReportMetric(cpu.Seconds()*1000/float64(b.N), "cpu-ms/attempt")
		})
	}
}

// reportSteal reports the share of the machine's processors that a
// virtual machine's host took for its other guests since m0 (steal-%):
// the figures beside it are this machine's only when it is near 0.
func reportSteal(b *testing.B, m0 cputime.Machine) {
	if p, ok := cputime.ReadMachine().StealSince(m0); ok {
		b.ReportMetric(p, "steal-%")
	}
}

// latency is the fake model's fixed latency in BenchmarkThroughput.
var latency = flag.Duration("latency", 200*time.Millisecond, "BenchmarkThroughput: the fake model's latency per request")

// BenchmarkThroughput measures a whole run (the tool-token measurements
// before the first attempt included) against a fake model that holds every
// reply for a fixed latency L and counts the requests in flight, with N =
// --concurrency parallel slots: 4N attempts of 5 turns each, whose hidden
// test is `true`; at N = 8 also with hidden tests that take as long as an
// attempt's turns (tests=5L: `sleep`), which are scored while the next
// attempts take their slots; and at N = 16 also a run four times as long
// (attempts=256), where what a run pays once (its start, the measuring
// requests, the scoring of its last attempts) weighs a quarter as much.
// The ideal is N/L requests per second, every slot busy from start to
// end; reported:
//
//   - of-ideal: model requests per second over the whole run (the
//     measuring requests counted, as the model server must answer them
//     too) divided by N/L. Target: at least 0.95.
//
//   - of-bound: the shortest run possible over the run's wall time. A
//     slot serves one request at a time, each held for L, so the busiest
//     serves at least ceil(R/N) of the R requests one after another: a
//     run lasts at least ceil(R/N) × L. When the measuring requests do
//     not fill every slot once (N = 16: 8 of them), of-ideal cannot
//     reach 1, whatever the harness does; of-bound can.
//
//   - turns-of-ideal: the attempts' turns alone per second over N/L.
//
//   - busy: the fake model's request-seconds over N × the run's wall time.
//
//   - model-ms: how long the fake model held a request on average, from
//     its arrival to the end of the answer: L, and what the fake's own
//     work and timers add to it (which no harness can win back).
//
//   - max-in-flight: the most requests the model had at once; more than N
//     fails the benchmark (bench must not ask for more slots than it has).
//
//   - first-ms, last-ms: from the start of the run to the first request's
//     arrival, and from the last answer to the run's end (the run's start
//     and end, which no slot is busy for).
//
//   - cpu-ms/attempt, sandbox-ms/attempt, fake-ms/req: what took the cores
//     that the harness shares with its sandboxes and the fake model: this
//     process's CPU time per attempt, its children's (bwrap and what it
//     ran, for the hidden tests, and the run's toolchain probe, `go env`
//     and `python3 --version`), and the fake model's per request.
//
//     go test -run '^$' -bench Throughput -benchtime 1x ./runner/ [-latency 200ms]
func BenchmarkThroughput(b *testing.B) {
	lat := *latency
	sb := sandboxtest.New(b)
	// A task's environment is prepared (its reference solution checked
	// against its hidden tests) by a first run, untimed: a run on a
	// prepared environment, as every run after the first is, is measured.
	warm := ollamatest.Spawn(b, "five-turns", ollamatest.SpawnOptions{})
	warmModel, _ := agent.NewOllama(warm.URL, nil)
	prepared := func(b *testing.B, suite *tasks.Suite) *tasks.Suite {
		b.Helper()
		store, err := results.Open(context.Background(), filepath.Join(b.TempDir(), "warm.db"))
		if err != nil {
			b.Fatal(err)
		}
		defer store.Close()
		r := &runner.Runner{Model: warmModel, Store: store, TempDir: b.TempDir(), Sandbox: sb}
		if _, err := r.Run(context.Background(), &runner.Plan{Model: "fake", Suite: suite, Attempts: 1, Concurrency: 1}, "warm"); err != nil {
			b.Fatal(err)
		}
		return suite
	}
	for _, c := range []struct {
		n       int
		tests   time.Duration // how long the hidden tests take (0: `true`)
		perSlot int           // attempts per slot (0: 4)
	}{{1, 0, 0}, {2, 0, 0}, {4, 0, 0}, {8, 0, 0}, {16, 0, 0}, {8, 5 * lat, 0}, {16, 0, 16}} {
		n, name := c.n, fmt.Sprintf("N=%d", c.n)
		test := "true"
		if c.tests > 0 {
			name += fmt.Sprintf("/tests=%s", c.tests)
			test = fmt.Sprintf("sleep %.3f", c.tests.Seconds())
		}
		attempts := 4 * n
		if c.perSlot > 0 {
			attempts = c.perSlot * n
			name += fmt.Sprintf("/attempts=%d", attempts)
		}
		b.Run(name, func(b *testing.B) {
			suite := prepared(b, benchTaskTested(b, test)) // before b.Loop: untimed
			srv := ollamatest.Spawn(b, "five-turns", ollamatest.SpawnOptions{Delay: lat})
			model, _ := agent.NewOllama(srv.URL, nil)
			var wall, shortest, toFirst, afterLast time.Duration
			var requests, turns int64
			var busy, fakeCPU float64
			var selfCPU, childCPU time.Duration
			maxInFlight := int64(0)
			m0 := cputime.ReadMachine()
			for i := 0; b.Loop(); i++ {
				store, err := results.Open(context.Background(), filepath.Join(b.TempDir(), "bench.db"))
				if err != nil {
					b.Fatal(err)
				}
				r := &runner.Runner{Model: model, Store: store, TempDir: b.TempDir(), Sandbox: sb}
				plan := &runner.Plan{Model: "fake", Suite: suite, Attempts: attempts, Concurrency: n}
				before, err := srv.Stats()
				if err != nil {
					b.Fatal(err)
				}
				start, self0, child0 := time.Now(), cputime.Self(), cputime.Children()
				out, err := r.Run(context.Background(), plan, "bench")
				end := time.Now()
				wall += end.Sub(start)
				selfCPU += cputime.Self() - self0
				childCPU += cputime.Children() - child0
				if err != nil {
					b.Fatal(err)
				}
				after, err := srv.Stats()
				if err != nil {
					b.Fatal(err)
				}
				if out.Ran != attempts {
					b.Fatalf("ran %d of %d", out.Ran, attempts)
				}
				var t int64
				if err := store.DB().QueryRowContext(context.Background(), `SELECT count(*) FROM turns`).Scan(&t); err != nil {
					b.Fatal(err)
				}
				store.Close()
				toFirst += after.FirstArrival.Sub(start)
				afterLast += end.Sub(after.LastDone)
				served := after.Requests - before.Requests
				requests += served
				shortest += time.Duration((served+int64(n)-1)/int64(n)) * lat
				busy += after.BusySeconds - before.BusySeconds
				fakeCPU += after.CPUSeconds - before.CPUSeconds
				turns += t
				maxInFlight = max(maxInFlight, after.MaxInFlight)
			}
			reportSteal(b, m0)
			if maxInFlight > int64(n) {
				b.Fatalf("the model had %d requests in flight at once, with %d slots", maxInFlight, n)
			}
			ideal := float64(n) / lat.Seconds()
			b.ReportMetric(float64(requests)/wall.Seconds()/ideal, "of-ideal")
			b.ReportMetric(shortest.Seconds()/wall.Seconds(), "of-bound")
			b.ReportMetric(float64(turns)/wall.Seconds()/ideal, "turns-of-ideal")
			b.ReportMetric(busy/(float64(n)*wall.Seconds()), "busy")
			b.ReportMetric(busy*1000/float64(requests), "model-ms")
			b.ReportMetric(float64(maxInFlight), "max-in-flight")
			b.ReportMetric(toFirst.Seconds()*1000/float64(b.N), "first-ms")
			b.ReportMetric(afterLast.Seconds()*1000/float64(b.N), "last-ms")
			b.ReportMetric(float64(requests)/wall.Seconds(), "req/s")
			ran := float64(attempts * b.N)
			b.ReportMetric(selfCPU.Seconds()*1000/ran, "cpu-ms/attempt")
			b.ReportMetric(childCPU.Seconds()*1000/ran, "sandbox-ms/attempt")
			b.ReportMetric(fakeCPU*1000/float64(requests), "fake-ms/req")
		})
	}
}
