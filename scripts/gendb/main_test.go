package main

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/benchhq/bench/results"
)

func generate(t *testing.T, seed uint64) (*results.Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "scale.db")
	if err := Generate(context.Background(), path, Shape{Attempts: 64, Seed: seed, Batch: 10}, nil); err != nil {
		t.Fatal(err)
	}
	s, err := results.OpenReadOnly(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

func export(t *testing.T, s *results.Store) []byte {
	t.Helper()
	var b bytes.Buffer
	if _, err := s.Export(context.Background(), &b, results.ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// The generator writes the run it says, through the store's write path:
// 2 arms, G = 16, ten turns and nine tool calls an attempt, two tool lists.
func TestGenerateShape(t *testing.T) {
	s, _ := generate(t, 1)
	count := func(q string) int {
		var n int
		if err := s.DB().QueryRow(q).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	for q, want := range map[string]int{
		`SELECT count(*) FROM attempts`:   64,
		`SELECT count(*) FROM tasks`:      2,
		`SELECT count(*) FROM arms`:       2,
		`SELECT count(*) FROM turns`:      640,
		`SELECT count(*) FROM tool_calls`: 576,
		`SELECT count(*) FROM messages`:   64 * 21,
		`SELECT count(*) FROM tool_lists`: 2,
		// every tool result stored once, in tool_calls.result
		`SELECT count(*) FROM messages WHERE role = 'tool' AND tool_call_idx IS NULL`:   0,
		`SELECT count(*) FROM attempts WHERE status = 'finished' AND advantage IS NULL`: 0,
	} {
		if got := count(q); got != want {
			t.Errorf("%s = %d, want %d", q, got, want)
		}
	}
	if n := count(`SELECT count(*) FROM attempts WHERE denials > 0`); n == 0 {
		t.Error("no attempt has a denied call: the no-exec arm's run_command calls are denied")
	}
	rep, err := s.Report(context.Background(), RunID, results.ReportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Comparisons) != 1 || rep.Total.Finished == 0 {
		t.Errorf("report: %d comparisons, %d finished", len(rep.Comparisons), rep.Total.Finished)
	}
}

// The same seed gives the same database (what an export shows of it); another seed another one.
func TestGenerateIsReproducible(t *testing.T) {
	a, _ := generate(t, 1)
	b, _ := generate(t, 1)
	c, _ := generate(t, 2)
	if !bytes.Equal(export(t, a), export(t, b)) {
		t.Error("two databases generated with seed 1 differ")
	}
	if bytes.Equal(export(t, a), export(t, c)) {
		t.Error("seeds 1 and 2 gave the same database")
	}
}
