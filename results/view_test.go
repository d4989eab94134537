package results

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// A report reads a run's attempts through the indexes of migration 3, and
// never their rows.
func TestAttemptMetricsUsesTheIndexes(t *testing.T) {
	s, _ := openTemp(t)
	var plan []string
	rows, err := s.DB().Query(`EXPLAIN QUERY PLAN SELECT id, arm, task_id, idx, status, stop_reason,
			reward, advantage, advantage_method, turns, tool_calls,
			prompt_tokens, completion_tokens, wall_ms
		FROM attempts WHERE run_id = ?`, "r")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	rows.Close()
	if got := strings.Join(plan, "; "); !strings.Contains(got, "COVERING INDEX attempts_metrics") {
		t.Errorf("the attempts of a report are read by %q, want the covering index attempts_metrics", got)
	}
}

// AttemptMetrics gives what the query with a subquery per attempt gave:
// the run's order, each attempt's denials and cut turns.
func TestAttemptMetricsOrderAndCounts(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	run := createRun(t, s)
	save := func(a *Attempt) {
		t.Helper()
		if _, err := s.SaveAttempt(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	// Saved out of order: strict before baseline, csv-sum before recipe.
	denied := finishedAttempt(run.ID, AttemptKey{Arm: "strict", Task: "csv-sum", Index: 1}, 0)
	denied.Trajectory.Calls[0].Decision, denied.Trajectory.Calls[1].Decision = "deny", "deny"
	denied.Trajectory.Turns[2].Truncated = true
	save(denied)
	save(finishedAttempt(run.ID, AttemptKey{Arm: "strict", Task: "csv-sum", Index: 0}, 1))
	save(finishedAttempt(run.ID, AttemptKey{Arm: "baseline", Task: "csv-sum", Index: 0}, 1))
	save(infraAttempt(run.ID, AttemptKey{Arm: "baseline", Task: "recipe-trailing-dot", Index: 0}))
	got, err := s.AttemptMetrics(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, a := range got {
		keys = append(keys, a.Key.String())
	}
	want := []string{"baseline/recipe-trailing-dot#0", "baseline/csv-sum#0", "strict/csv-sum#0", "strict/csv-sum#1"}
	if !reflect.DeepEqual(keys, want) {
		t.Errorf("order %v, want %v (the run's arm, task and index order)", keys, want)
	}
	if last := got[3]; last.Denials != 2 || last.TruncatedTurns != 1 {
		t.Errorf("denials %d, cut turns %d; want 2, 1", last.Denials, last.TruncatedTurns)
	}
	if got[2].Denials != 0 || got[2].TruncatedTurns != 0 {
		t.Errorf("an attempt without denials got %d, %d", got[2].Denials, got[2].TruncatedTurns)
	}
}

func TestLoadAttemptReadsBackWhatWasSaved(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	run := createRun(t, s)
	a := finishedAttempt(run.ID, AttemptKey{Arm: "strict", Task: "csv-sum", Index: 2}, 1)
	id, err := s.SaveAttempt(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.LoadAttempt(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if got.Key != a.Key || got.RunID != run.ID || got.Seed != a.Seed || *got.Reward != 1 {
		t.Errorf("attempt %+v", got.AttemptMetrics)
	}
	if !reflect.DeepEqual(got.ModelTurns, a.Trajectory.Turns) {
		t.Errorf("turns:\n got %+v\nwant %+v", got.ModelTurns, a.Trajectory.Turns)
	}
	if !reflect.DeepEqual(got.Calls, a.Trajectory.Calls) {
		t.Errorf("calls:\n got %+v\nwant %+v", got.Calls, a.Trajectory.Calls)
	}
	if !reflect.DeepEqual(got.Test, a.Test) {
		t.Errorf("test: got %+v, want %+v", got.Test, a.Test)
	}
	if len(got.Messages) != len(a.Trajectory.Messages) || got.Messages[2].ToolCalls[0].Function.Name != "read_file" {
		t.Errorf("messages: %+v", got.Messages)
	}
	if len(got.Servers) != 1 || got.Servers[0].Stderr != "started\n" || got.Servers[0].Catalog != "[]" {
		t.Errorf("servers: %+v", got.Servers)
	}
	if len(got.Extra) != 0 {
		t.Errorf("extra tables in a store of this version: %+v", got.Extra)
	}
	_, err = s.LoadAttempt(ctx, id+100)
	var na *NoAttemptError
	if !errors.As(err, &na) || na.ID != id+100 || !errors.Is(err, ErrNoAttempt) {
		t.Errorf("unknown attempt: %v", err)
	}
}

func TestRunListAndPassRate(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	run := createRun(t, s)
	for i, r := range []int{1, 0, 1} {
		if _, err := s.SaveAttempt(ctx, finishedAttempt(run.ID, AttemptKey{Arm: "baseline", Task: "csv-sum", Index: i}, r)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.FinishRun(ctx, run.ID, RunFinished); err != nil {
		t.Fatal(err)
	}
	list, err := s.RunList(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || !reflect.DeepEqual(list[0].ArmNames, []string{"baseline", "strict"}) || list[0].FinishedAt == nil {
		t.Fatalf("list %+v", list)
	}
	if r := list[0].PassRate(); r == nil || *r != 2.0/3 {
		t.Errorf("pass rate %v, want 2/3", r)
	}
}

// CompareSides on two arms of one run is the report's comparison.
func TestCompareSidesIsTheReportsComparison(t *testing.T) {
	run := &Run{ID: "r", Seed: 3, AttemptsPerTask: 4, Arms: []Arm{{Name: "a"}, {Name: "b", Index: 1}},
		Tasks: []TaskInfo{{ID: "t1"}, {ID: "t2"}}}
	var attempts []AttemptMetrics
	for arm, rewards := range map[string][]int{"a": {1, 1, 0, 0, 1, 1, 1, 0}, "b": {0, 0, 0, 0, 1, 0, 1, 0}} {
		for i, r := range rewards {
			attempts = append(attempts, AttemptMetrics{ID: int64(len(attempts) + 1), Status: StatusFinished, Reward: reward(r),
				Key: AttemptKey{Arm: arm, Task: run.Tasks[i/4].ID, Index: i % 4}})
		}
	}
	rep, err := BuildReport(run, attempts, ReportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := CompareSides(Side{Run: run, Attempts: attempts, Arm: "a", Label: "a"}, Side{Run: run, Attempts: attempts, Arm: "b", Label: "b"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c, rep.Comparisons[0]) {
		t.Errorf("CompareSides:\n%+v\nreport:\n%+v", c, rep.Comparisons[0])
	}
	if _, err := CompareSides(Side{Run: run, Attempts: attempts, Arm: "a"}, Side{Run: run, Attempts: attempts, Arm: "zz"}); !errors.Is(err, ErrNoArm) {
		t.Errorf("an unknown arm: %v", err)
	}
}
