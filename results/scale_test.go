package results_test

import (
	"context"
	"strings"
	"testing"

	"github.com/benchhq/bench/results"
)

// A report reads one row per attempt: the denials and truncated turns it
// shows are kept with each attempt, not counted from every tool call and
// turn of the run (at 100,000 attempts that took seconds).
func TestReportReadsOneRowPerAttempt(t *testing.T) {
	ctx := context.Background()
	s, run, _ := newFixture(t)
	before, err := s.Report(ctx, run.ID, results.ReportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if before.Total.Denials == 0 || before.Total.TruncatedTurns == 0 {
		t.Fatalf("the fixture has %d denials and %d truncated turns, want some of each", before.Total.Denials, before.Total.TruncatedTurns)
	}
	if _, err := s.DB().Exec(`DELETE FROM tool_calls; DELETE FROM turns`); err != nil {
		t.Fatal(err)
	}
	after, err := s.Report(ctx, run.ID, results.ReportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after.Total.Denials != before.Total.Denials || after.Total.TruncatedTurns != before.Total.TruncatedTurns {
		t.Errorf("denials %d, truncated turns %d once tool calls and turns are gone; want %d and %d, read from the attempts",
			after.Total.Denials, after.Total.TruncatedTurns, before.Total.Denials, before.Total.TruncatedTurns)
	}
}

// The counts `bench runs` shows are read from an index alone.
func TestRunCountsUseAnIndex(t *testing.T) {
	s, run, _ := newFixture(t)
	for _, status := range []string{"finished", "infra_error"} {
		rows, err := s.DB().Query(`EXPLAIN QUERY PLAN SELECT count(*) FROM attempts x WHERE x.run_id = ? AND x.status = ?`, run.ID, status)
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		if !strings.Contains(strings.Join(plan, "; "), "COVERING INDEX attempts_by_run_status") {
			t.Errorf("counting %s attempts of a run: plan %q, want the covering index attempts_by_run_status", status, plan)
		}
	}
}
