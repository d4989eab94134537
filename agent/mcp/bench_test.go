package mcp

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/benchhq/bench/tasks"
)

// The benchmarks talk to the project's issue tracker over stdio, run as
// `bench mcp serve issues --file ...` (this test binary, whose TestMain
// serves those arguments, stands in for bench). Run them with:
//
//	go test -run '^$' -bench . -benchtime 2000x ./agent/mcp/

func benchServer(b *testing.B) (tasks.Server, Vars) {
	b.Helper()
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "issues.json"), []byte(testIssues), 0o644); err != nil {
		b.Fatal(err)
	}
	// As a task declares it, with the test binary in place of {bench}.
	srv := tasks.Server{Name: "issues", Command: testBinary(), Args: []string{"mcp", "serve", "issues", "--file", "{data}/issues.json"}, DefaultClass: "read"}
	return srv, Vars{Data: dir, Workspace: dir}
}

// reportPercentiles reports the 50th and 99th percentiles of d in ms.
func reportPercentiles(b *testing.B, d []time.Duration) {
	if len(d) == 0 {
		return
	}
	slices.Sort(d)
	at := func(p float64) float64 {
		i := min(int(p*float64(len(d))), len(d)-1)
		return float64(d[i].Microseconds()) / 1000
	}
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.99), "p99-ms")
}

// BenchmarkCallRoundTrip: one get_issue call through the adapter to a
// server kept for the whole attempt.
func BenchmarkCallRoundTrip(b *testing.B) {
	srv, vars := benchServer(b)
	c := connect(b, srv, vars, Options{})
	tool := toolNamed(b, c, "issues__get_issue")
	args := map[string]any{"id": 11}
	ctx := context.Background()
	d := make([]time.Duration, 0, b.N)
	for b.Loop() {
		start := time.Now()
		res, err := tool.Call(ctx, args)
		d = append(d, time.Since(start))
		if err != nil || res.IsError {
			b.Fatalf("call: %v %+v", err, res)
		}
	}
	reportPercentiles(b, d)
}

// BenchmarkStartAndDiscover: what each attempt pays to start the server,
// negotiate, list and prepare its tools, and shut it down.
func BenchmarkStartAndDiscover(b *testing.B) {
	srv, vars := benchServer(b)
	ctx := context.Background()
	d := make([]time.Duration, 0, b.N)
	for b.Loop() {
		start := time.Now()
		c, err := Connect(ctx, srv, vars, Options{})
		if err != nil {
			b.Fatal(err)
		}
		c.Close()
		d = append(d, time.Since(start))
	}
	reportPercentiles(b, d)
}

// BenchmarkRelaunchPerCall: the same call as BenchmarkCallRoundTrip, done by
// starting the server afresh for the call (what the harness does not do).
func BenchmarkRelaunchPerCall(b *testing.B) {
	srv, vars := benchServer(b)
	ctx := context.Background()
	args := map[string]any{"id": 11}
	d := make([]time.Duration, 0, b.N)
	for b.Loop() {
		start := time.Now()
		c, err := Connect(ctx, srv, vars, Options{})
		if err != nil {
			b.Fatal(err)
		}
		res, err := toolNamed(b, c, "issues__get_issue").Call(ctx, args)
		if err != nil || res.IsError {
			b.Fatalf("call: %v %+v", err, res)
		}
		c.Close()
		d = append(d, time.Since(start))
	}
	reportPercentiles(b, d)
}
