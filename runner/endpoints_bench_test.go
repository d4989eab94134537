package runner_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/benchhq/bench/internal/ollamatest"
	"github.com/benchhq/bench/internal/sandboxtest"
	"github.com/benchhq/bench/results"
	"github.com/benchhq/bench/runner"
)

// fixedLatency is a two-turn trajectory whose every attempt request takes
// latency on the server (the tool-overhead probes answer at once).
func fixedLatency(latency time.Duration) ollamatest.Script {
	turns := ollamatest.Turns(
		ollamatest.Reply{Calls: []ollamatest.Call{call("list_dir", map[string]any{"path": "."})}, Delay: latency},
		ollamatest.Reply{Content: "Nothing to do.", Delay: latency},
	)
	return func(req *api.ChatRequest) ollamatest.Reply {
		if len(req.Messages) < 2 {
			return ollamatest.Reply{Content: "ok"}
		}
		return turns(req)
	}
}

// endpointRun runs attempts attempts against servers, each a fake Ollama
// answering slots requests at once in latency each, with slots per
// endpoint and concurrency the sum; kill, when set, is called once the
// run is under way. It returns the wall time of the whole run (start
// included), the span from the first attempt's start to the last one's
// end, and the store.
func endpointRun(b *testing.B, servers []*ollamatest.Server, slots, attempts int, kill func()) (time.Duration, time.Duration, *results.Store) {
	b.Helper()
	pool := poolOf(b, slots, servers...)
	pool.Log = func(format string, args ...any) { b.Logf(format, args...) }
	store, err := results.Open(context.Background(), filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { store.Close() })
	r := &runner.Runner{Endpoints: pool, Store: store, TempDir: b.TempDir(), Sandbox: sandboxtest.New(b), Backoff: func(int) time.Duration { return 50 * time.Millisecond }}
	plan := &runner.Plan{Model: "fake", Suite: benchTask(b), Attempts: attempts, Concurrency: slots * len(servers), MaxTries: 5}
	if kill != nil {
		go kill()
	}
	start := time.Now()
	if _, err := r.Run(context.Background(), plan, "bench"); err != nil {
		b.Fatal(err)
	}
	whole := time.Since(start)
	var secs float64
	if err := store.DB().Get(&secs, `SELECT (julianday(max(finished_at)) - julianday(min(started_at))) * 86400 FROM attempts`); err != nil {
		b.Fatal(err)
	}
	return whole, time.Duration(secs * float64(time.Second)), store
}

func countRows(b *testing.B, s *results.Store, query string) int {
	b.Helper()
	var n int
	if err := s.DB().Get(&n, query); err != nil {
		b.Fatal(err)
	}
	return n
}

// BenchmarkEndpoints measures what a second model server buys: fake
// Ollama servers that answer 2 requests at once (OLLAMA_NUM_PARALLEL=2)
// in a fixed second each, attempts of two turns, 2 slots per endpoint and
// the concurrency their sum. It reports the throughput of a whole run
// (its start included) against one endpoint and against two, in the same
// benchmark, and their ratio (target: at least 1.9). The "killed"
// sub-benchmark stops one of two endpoints a third of the way through and
// reports the attempts lost (target 0: they are retried on the other
// endpoint) and those that needed a retry.
//
//	go test -run '^$' -bench Endpoints -benchtime 1x ./runner/
func BenchmarkEndpoints(b *testing.B) {
	const latency, slots, attempts = time.Second, 2, 24
	newServer := func() *ollamatest.Server {
		s := ollamatest.New(fixedLatency(latency), ollamatest.WithParallel(slots), ollamatest.WithDigest("fake", "d1"))
		b.Cleanup(s.Close)
		return s
	}
	b.Run("throughput", func(b *testing.B) {
		for b.Loop() {
			one, oneSpan, _ := endpointRun(b, []*ollamatest.Server{newServer()}, slots, attempts, nil)
			two, twoSpan, store := endpointRun(b, []*ollamatest.Server{newServer(), newServer()}, slots, attempts, nil)
			perOne, perTwo := attempts/one.Seconds(), attempts/two.Seconds()
			b.ReportMetric(perOne, "attempts/s-1-endpoint")
			b.ReportMetric(perTwo, "attempts/s-2-endpoints")
			b.ReportMetric(perTwo/perOne, "speedup")
			b.ReportMetric(oneSpan.Seconds()/twoSpan.Seconds(), "speedup-attempts-only")
			ideal := float64(slots) / (2 * latency.Seconds())
			b.ReportMetric(perOne/ideal, "share-of-ideal-1")
			b.ReportMetric(perTwo/(2*ideal), "share-of-ideal-2")
			// A stall (a slow machine, a queue) shows as one slow attempt.
			var slowest float64
			if err := store.DB().Get(&slowest, `SELECT max(julianday(finished_at) - julianday(started_at)) * 86400 FROM attempts`); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(slowest, "slowest-attempt-s-2")
		}
	})
	b.Run("killed", func(b *testing.B) {
		for b.Loop() {
			a, victim := newServer(), newServer()
			kill := func() {
				for len(victim.Requests()) < attempts/3 {
					time.Sleep(5 * time.Millisecond)
				}
				victim.Stop()
			}
			_, _, store := endpointRun(b, []*ollamatest.Server{a, victim}, slots, attempts, kill)
			finished := countRows(b, store, `SELECT count(*) FROM attempts WHERE status = 'finished'`)
			b.ReportMetric(float64(attempts-finished), "attempts-lost")
			b.ReportMetric(float64(countRows(b, store, `SELECT count(*) FROM attempts WHERE tries > 1`)), "attempts-retried")
			b.ReportMetric(float64(countRows(b, store, `SELECT count(*) FROM attempts WHERE status = 'infra_error'`)), "infra-errors")
			if finished != attempts {
				b.Errorf("%d of %d attempts finished", finished, attempts)
			}
		}
	})
}
