package results

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func testOverhead(arm string) *Overhead {
	return &Overhead{
		Arm: arm, Model: "qwen3:4b", NumCtx: 8192, MeasuredAt: t0,
		BaselineTokens: 18, PromptTokens: 718, Tokens: 700, SumOfTools: 900,
		Items: []OverheadItem{
			{Kind: OverheadSet, Name: "builtin", Set: "builtin", PromptTokens: 518, Tokens: 500},
			{Kind: OverheadTool, Name: "read_file", Set: "builtin", PromptTokens: 218, Tokens: 200},
			{Kind: OverheadTool, Name: "run_command", Set: "builtin", PromptTokens: 418, Tokens: 400},
			{Kind: OverheadSet, Name: "issues", Set: "issues", PromptTokens: 318, Tokens: 300, Truncated: true},
			{Kind: OverheadTool, Name: "issues__list", Set: "issues", PromptTokens: 318, Tokens: 300},
		},
	}
}

func TestOverheadRoundTrip(t *testing.T) {
	ctx := context.Background()
	s, path := openTemp(t)
	run := createRun(t, s)

	got, err := s.Overhead(ctx, run.ID)
	if err != nil || len(got) != 0 {
		t.Fatalf("before any measurement: %v, %v", got, err)
	}
	// Saved out of arm order: read back in arm order.
	strict := testOverhead("strict")
	strict.Items = strict.Items[:3]
	strict.Truncated = true
	base := testOverhead("baseline")
	for _, o := range []*Overhead{strict, base} {
		if err := s.SaveOverhead(ctx, run.ID, o); err != nil {
			t.Fatal(err)
		}
	}
	got, err = s.Overhead(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := []Overhead{*base, *strict}; !reflect.DeepEqual(got, want) {
		t.Errorf("Overhead:\n got %+v\nwant %+v", got, want)
	}

	// Measuring an arm again replaces it whole.
	again := testOverhead("baseline")
	again.Tokens, again.Items = 650, again.Items[:1]
	if err := s.SaveOverhead(ctx, run.ID, again); err != nil {
		t.Fatal(err)
	}
	got, _ = s.Overhead(ctx, run.ID)
	if len(got) != 2 || got[0].Tokens != 650 || len(got[0].Items) != 1 {
		t.Errorf("after a new measurement: %+v", got)
	}

	// sqlite3 users see plain columns.
	var tokens, truncated int
	if err := rawDB(t, path).QueryRow(`SELECT tokens, truncated FROM overhead WHERE run_id = ? AND arm = 'strict'`, run.ID).Scan(&tokens, &truncated); err != nil {
		t.Fatal(err)
	}
	if tokens != 700 || truncated != 1 {
		t.Errorf("raw row: tokens %d truncated %d", tokens, truncated)
	}

	// Deleting the run deletes its measurements.
	db := rawDB(t, path)
	if _, err := db.Exec(`PRAGMA foreign_keys = ON`); err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `PRAGMA foreign_keys = ON`); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, `DELETE FROM attempts; DELETE FROM runs`); err != nil {
		t.Fatal(err)
	}
	var left int
	if err := conn.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM overhead) + (SELECT count(*) FROM overhead_items)`).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Errorf("%d overhead rows left after deleting the run", left)
	}
}

func TestSaveOverheadRejects(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	run := createRun(t, s)
	tests := []struct {
		name   string
		runID  string
		change func(o *Overhead)
		want   string
	}{
		{"no arm", run.ID, func(o *Overhead) { o.Arm = "" }, "arm: empty"},
		{"unknown arm", run.ID, func(o *Overhead) { o.Arm = "nope" }, `arm "nope" is not an arm of the run`},
		{"unknown run", "run-9", func(o *Overhead) {}, "no such run"},
		{"no model", run.ID, func(o *Overhead) { o.Model = "" }, "model: empty"},
		{"no num_ctx", run.ID, func(o *Overhead) { o.NumCtx = 0 }, "num_ctx"},
		{"bad kind", run.ID, func(o *Overhead) { o.Items[0].Kind = "server" }, `kind "server"`},
		{"item without set", run.ID, func(o *Overhead) { o.Items[1].Set = "" }, "empty set"},
		{"item without name", run.ID, func(o *Overhead) { o.Items[1].Name = "" }, "empty name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := testOverhead("baseline")
			tt.change(o)
			err := s.SaveOverhead(ctx, tt.runID, o)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one saying %q", err, tt.want)
			}
		})
	}
	if _, err := s.Overhead(ctx, "run-9"); !errors.Is(err, ErrNoRun) {
		t.Errorf("Overhead of a missing run: %v, want ErrNoRun", err)
	}
	if err := s.SaveOverhead(ctx, run.ID, testOverhead("nope")); !errors.Is(err, ErrNoArm) {
		t.Errorf("SaveOverhead of a missing arm: %v, want ErrNoArm", err)
	}
	var noRun *NoRunError
	if err := s.SaveOverhead(ctx, "run-9", testOverhead("baseline")); !errors.As(err, &noRun) || noRun.ID != "run-9" {
		t.Errorf("SaveOverhead of a missing run: %v, want a *NoRunError for run-9", err)
	}
}

// TestAttemptMetricsTruncatedTurns counts, per arm, the turns whose prompt
// was probably cut at num_ctx, over every stored attempt whatever its status.
func TestAttemptMetricsTruncatedTurns(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	run := createRun(t, s)
	perArm := func() map[string]int {
		t.Helper()
		ms, err := s.AttemptMetrics(ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int{"baseline": 0, "strict": 0}
		for _, m := range ms {
			got[m.Key.Arm] += m.TruncatedTurns
		}
		return got
	}
	if got, want := perArm(), map[string]int{"baseline": 0, "strict": 0}; !reflect.DeepEqual(got, want) {
		t.Errorf("empty run: %v, want %v", got, want)
	}
	cut := func(key AttemptKey, turns ...int) {
		a := finishedAttempt(run.ID, key, 0)
		for _, i := range turns {
			a.Trajectory.Turns[i].Truncated = true
		}
		if _, err := s.SaveAttempt(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	cut(AttemptKey{Arm: "baseline", Task: "csv-sum", Index: 0}, 1, 2)
	cut(AttemptKey{Arm: "baseline", Task: "csv-sum", Index: 1}, 2)
	cut(AttemptKey{Arm: "baseline", Task: "recipe-trailing-dot", Index: 0})
	cut(AttemptKey{Arm: "strict", Task: "csv-sum", Index: 0})
	infra := infraAttempt(run.ID, AttemptKey{Arm: "strict", Task: "csv-sum", Index: 1})
	infra.Trajectory.Turns[1].Truncated = true
	if _, err := s.SaveAttempt(ctx, infra); err != nil {
		t.Fatal(err)
	}
	if got, want := perArm(), map[string]int{"baseline": 3, "strict": 1}; !reflect.DeepEqual(got, want) {
		t.Errorf("truncated turns per arm = %v, want %v", got, want)
	}
}

// A file at schema version 1 gains the overhead tables when opened.
func TestMigrateVersion1ToOverhead(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "bench.db")
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	db := rawDB(t, path)
	// A version-1 file, as the first bench wrote it, with a run.
	if _, err := db.Exec(ms[0].sql + fmt.Sprintf(`; PRAGMA user_version = 1; PRAGMA application_id = %d;
		INSERT INTO runs (id, created_at, model, seed, attempts_per_task, status)
			VALUES ('run-1', '2025-03-01T12:00:00.000Z', 'qwen3:4b', 1, 2, 'finished');
		INSERT INTO arms (run_id, name, idx) VALUES ('run-1', 'baseline', 0);`, ApplicationID)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	run := &Run{ID: "run-1"}
	s2, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if err := s2.SaveOverhead(ctx, run.ID, testOverhead("baseline")); err != nil {
		t.Fatalf("after migrating: %v", err)
	}
	if got, err := s2.GetRun(ctx, run.ID); err != nil || got.ID != run.ID {
		t.Errorf("the run did not survive the migration: %v", err)
	}
}
