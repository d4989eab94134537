package results

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/benchhq/bench/evaluator"
	"github.com/benchhq/bench/evaluator/testreport"
	"github.com/benchhq/bench/tasks"
)

// A report reads a run's attempts through the covering index
// attempts_report alone, never their rows: the queries AttemptMetrics
// runs, with and without an upper bound of task ids, and the view's pages
// of attempts (ListAttempts, TaskAttempts).
// (attempts_metrics stopped covering the first when version 8 added the
// counts a report reads, and nothing said so.)
func TestAttemptMetricsUsesTheIndexes(t *testing.T) {
	s, _ := openTemp(t)
	for _, c := range []struct {
		name, query string
		args        []any
	}{
		{"a part with an upper bound", attemptsQuery(metricsColumns(), true), []any{"r", "arm", "a", "b"}},
		{"the last part", attemptsQuery(metricsColumns(), false), []any{"r", "arm", "a"}},
		{"a page of the attempts list", listQuery(" AND a.stop_reason IN (?)", true, false), []any{"r", "arm", "answered", "t", 3, 201, 0}},
		{"a page back", listQuery("", true, true), []any{"r", "arm", "t", 3, 201, 0}},
		{"the attempts of a page's tasks", taskQuery(2), []any{"r", "arm", "a", "b"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rows, err := s.DB().Query(`EXPLAIN QUERY PLAN `+c.query, c.args...)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var plan []string
			for rows.Next() {
				var id, parent, unused int
				var detail string
				if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
					t.Fatal(err)
				}
				plan = append(plan, detail)
			}
			if got := strings.Join(plan, "; "); !strings.Contains(got, "COVERING INDEX attempts_report (run_id=? AND arm=?") {
				t.Errorf("read by %q, want the covering index attempts_report, from a run's arm on", got)
			}
		})
	}
}

// AttemptMetrics puts the attempts in the run's order whatever the plan
// says of them: attempts of an index the run's G leaves out (a file whose
// attempts_per_task was changed), and places of the plan not filled.
func TestAttemptMetricsOrderOutsideThePlan(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	run := createRun(t, s)
	// Saved out of order; no csv-sum#1 under strict.
	keys := []AttemptKey{{"strict", "csv-sum", 3}, {"strict", "csv-sum", 0}, {"baseline", "csv-sum", 2},
		{"baseline", "recipe-trailing-dot", 1}, {"baseline", "csv-sum", 0}, {"strict", "recipe-trailing-dot", 0},
		{"baseline", "recipe-trailing-dot", 0}, {"strict", "csv-sum", 2}}
	for _, k := range keys {
		if _, err := s.SaveAttempt(ctx, finishedAttempt(run.ID, k, 1)); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"baseline/recipe-trailing-dot#0", "baseline/recipe-trailing-dot#1", "baseline/csv-sum#0",
		"baseline/csv-sum#2", "strict/recipe-trailing-dot#0", "strict/csv-sum#0", "strict/csv-sum#2", "strict/csv-sum#3"}
	for _, tt := range []struct {
		name string
		g    int
	}{
		{"every index in the plan", 4},
		{"indexes 2 and 3 outside it", 2},
		{"only index 0 in it", 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := s.DB().Exec(`UPDATE runs SET attempts_per_task = ? WHERE id = ?`, tt.g, run.ID); err != nil {
				t.Fatal(err)
			}
			got, err := s.AttemptMetrics(ctx, run.ID)
			if err != nil {
				t.Fatal(err)
			}
			var order []string
			for _, a := range got {
				order = append(order, a.Key.String())
			}
			if !reflect.DeepEqual(order, want) {
				t.Errorf("order %v, want %v", order, want)
			}
		})
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

// scoredAttempt is an attempt whose hidden tests gave a per-test report
// against the task's record, ran past their timeout, and left a change.
func scoredAttempt(runID string, key AttemptKey) *Attempt {
	a := finishedAttempt(runID, key, 0)
	a.Test = &evaluator.TestResult{Command: "python3 -m unittest -v test_hidden", ExitCode: -1, TimedOut: true,
		Output: "test_a ... ok\n", Duration: 60 * time.Second, RefDuration: 1250 * time.Millisecond, Basis: evaluator.BasisTests,
		Cases: []testreport.Case{
			{ID: "t.A.test_a", Outcome: testreport.Pass, Duration: 3 * time.Millisecond},
			{ID: "t.A.test_b", Outcome: testreport.Fail, Message: "AssertionError: '2 eggs.' != '2 eggs'"},
			{ID: "t.A.test_extra", Outcome: testreport.Skip},
		},
		Failed: []string{"t.A.test_b", "t.A.test_c"},
		Record: &tasks.Record{FailToPass: []string{"t.A.test_b", "t.A.test_c"}, PassToPass: []string{"t.A.test_a"}},
		Change: &evaluator.Change{
			Carried:     []evaluator.FileChange{{Path: "recipe.py", Kind: "modified", Size: 2297}, {Path: "notes.py", Kind: "added", Size: 12}},
			Diff:        "--- a/recipe.py\n+++ b/recipe.py\n@@ -1 +1 @@\n-x\n+y\n",
			DiffCut:     17,
			LeftOut:     []evaluator.LeftOut{{Path: "__pycache__/", Reason: tasks.LeftOutCache}},
			LeftOutMore: 3,
		},
	}
	return a
}

// saveAndLoad saves a and reads it back.
func saveAndLoad(t *testing.T, s *Store, a *Attempt) *StoredAttempt {
	t.Helper()
	id, err := s.SaveAttempt(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.LoadAttempt(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestLoadAttemptReadsBackWhatWasSaved(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	run := createRun(t, s)
	a := scoredAttempt(run.ID, AttemptKey{Arm: "strict", Task: "csv-sum", Index: 2})
	got := saveAndLoad(t, s, a)
	id := got.ID
	if got.Key != a.Key || got.RunID != run.ID || got.Seed != a.Seed || *got.Reward != 0 {
		t.Errorf("attempt %+v", got.AttemptMetrics)
	}
	if got.Times != a.Times() || got.Times.Tests != 60*time.Second+1250*time.Millisecond {
		t.Errorf("times: got %+v, want %+v", got.Times, a.Times())
	}
	if !reflect.DeepEqual(got.ModelTurns, a.Trajectory.Turns) {
		t.Errorf("turns:\n got %+v\nwant %+v", got.ModelTurns, a.Trajectory.Turns)
	}
	if !reflect.DeepEqual(got.Calls, a.Trajectory.Calls) {
		t.Errorf("calls:\n got %+v\nwant %+v", got.Calls, a.Trajectory.Calls)
	}
	// The test result's row; its cases and change are read apart.
	want := *a.Test
	want.Cases, want.Failed, want.Change, want.Record = nil, nil, nil, nil
	if !reflect.DeepEqual(got.Test, &want) {
		t.Errorf("test:\n got %+v\nwant %+v", got.Test, &want)
	}
	if got.TestsTotal == nil || got.TestsPassed == nil || *got.TestsTotal != 3 || *got.TestsPassed != 1 {
		t.Errorf("tests total %v, passed %v; want 3 recorded tests, 1 passed", got.TestsTotal, got.TestsPassed)
	}
	wantCases := []TestCase{
		{Test: "t.A.test_a", Outcome: testreport.Pass, Recorded: "pass_to_pass", Duration: 3 * time.Millisecond},
		{Test: "t.A.test_b", Outcome: testreport.Fail, Recorded: "fail_to_pass", Message: "AssertionError: '2 eggs.' != '2 eggs'"},
		{Test: "t.A.test_c", Outcome: CaseMissing, Recorded: "fail_to_pass"},
		{Test: "t.A.test_extra", Outcome: testreport.Skip},
	}
	if !reflect.DeepEqual(got.Cases, wantCases) {
		t.Errorf("cases:\n got %+v\nwant %+v", got.Cases, wantCases)
	}
	if !reflect.DeepEqual(got.Change, a.Test.Change) {
		t.Errorf("change:\n got %+v\nwant %+v", got.Change, a.Test.Change)
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
	_, err := s.LoadAttempt(ctx, id+100)
	var na *NoAttemptError
	if !errors.Is(err, ErrNoAttempt) || !errors.As(err, &na) || na.ID != id+100 {
		t.Errorf("unknown attempt: %v", err)
	}
}

// An attempt scored on the exit status alone, and one whose tests did not
// run, have no counts, no cases and no change.
func TestLoadAttemptWithoutAReport(t *testing.T) {
	s, _ := openTemp(t)
	run := createRun(t, s)
	for _, a := range []*Attempt{
		finishedAttempt(run.ID, AttemptKey{Arm: "strict", Task: "csv-sum", Index: 0}, 1),
		infraAttempt(run.ID, AttemptKey{Arm: "strict", Task: "csv-sum", Index: 1}),
	} {
		got := saveAndLoad(t, s, a)
		if got.TestsTotal != nil || got.TestsPassed != nil || len(got.Cases) != 0 || got.Change != nil {
			t.Errorf("%s: total %v, passed %v, cases %+v, change %+v; want none", a.Key, got.TestsTotal, got.TestsPassed, got.Cases, got.Change)
		}
		if a.Test != nil && got.Test.Basis != evaluator.BasisExitStatus {
			t.Errorf("%s: basis %q, want %q", a.Key, got.Test.Basis, evaluator.BasisExitStatus)
		}
		if a.Test == nil && got.Test != nil {
			t.Errorf("%s: a test result for tests that did not run: %+v", a.Key, got.Test)
		}
	}
}

// saveScored saves scoredAttempt #index of run's strict/csv-sum group.
func saveScored(t *testing.T, s *Store, run string, index int) int64 {
	t.Helper()
	id, err := s.SaveAttempt(context.Background(), scoredAttempt(run, AttemptKey{Arm: "strict", Task: "csv-sum", Index: index}))
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// A change whose stored lists are not JSON is an error naming the column,
// not an empty change.
func TestLoadAttemptNamesABrokenChange(t *testing.T) {
	ctx := context.Background()
	s, path := openTemp(t)
	id := saveScored(t, s, createRun(t, s).ID, 0)
	for _, col := range []string{"carried_json", "left_out_json"} {
		db := rawDB(t, path)
		if _, err := db.Exec(`UPDATE attempt_changes SET `+col+` = 'recipe.py' WHERE attempt_id = ?`, id); err != nil {
			t.Fatal(err)
		}
		_, err := s.LoadAttempt(ctx, id)
		if err == nil || !strings.Contains(err.Error(), "attempt_changes."+col) {
			t.Errorf("%s not JSON: %v", col, err)
		}
		if _, err := db.Exec(`UPDATE attempt_changes SET `+col+` = '[]' WHERE attempt_id = ?`, id); err != nil {
			t.Fatal(err)
		}
	}
}

// What a later schema adds (a table keyed by attempt_id, a column of
// attempts or test_results) is read back as it is, and nothing else.
func TestLoadAttemptShowsWhatALaterSchemaAdds(t *testing.T) {
	ctx := context.Background()
	s, path := openTemp(t)
	run := createRun(t, s)
	id, other := saveScored(t, s, run.ID, 0), saveScored(t, s, run.ID, 1)
	db := rawDB(t, path)
	for _, q := range []string{
		`CREATE TABLE attempt_lint (attempt_id INTEGER, idx INTEGER, rule TEXT, score REAL)`,
		fmt.Sprintf(`INSERT INTO attempt_lint VALUES (%d, 0, 'E501', 0.5), (%d, 1, 'W291', NULL), (%d, 0, 'other', 1)`, id, id, other),
		`ALTER TABLE attempts ADD COLUMN gpu TEXT`,
		fmt.Sprintf(`UPDATE attempts SET gpu = 'A100' WHERE id = %d`, id),
		`ALTER TABLE test_results ADD COLUMN coverage REAL`,
		fmt.Sprintf(`UPDATE test_results SET coverage = 0.75 WHERE attempt_id = %d`, id),
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	got, err := s.LoadAttempt(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	want := []ExtraTable{
		{Name: "attempt_lint", Columns: []string{"attempt_id", "idx", "rule", "score"},
			Rows: [][]string{{strconv.FormatInt(id, 10), "0", "E501", "0.5"}, {strconv.FormatInt(id, 10), "1", "W291", ""}}},
		{Name: "attempts", Columns: []string{"gpu"}, Rows: [][]string{{"A100"}}},
		{Name: "test_results", Columns: []string{"coverage"}, Rows: [][]string{{"0.75"}}},
	}
	if !reflect.DeepEqual(got.Extra, want) {
		t.Errorf("extra:\n got %+v\nwant %+v", got.Extra, want)
	}
	// The known tables are still read as themselves.
	if len(got.Cases) != 4 || got.Change == nil || got.Change.DiffCut != 17 {
		t.Errorf("cases %d, change %+v", len(got.Cases), got.Change)
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

// TestCarriedFilesAreListedUpToABound: an attempt that changed more files
// than the store lists keeps the first MaxStoredCarried, and their count.
func TestCarriedFilesAreListedUpToABound(t *testing.T) {
	s, _ := openTemp(t)
	run := createRun(t, s)
	a := scoredAttempt(run.ID, AttemptKey{Arm: "strict", Task: "csv-sum", Index: 0})
	n := evaluator.MaxStoredCarried + 500
	a.Test.Change.Carried = make([]evaluator.FileChange, n)
	for i := range a.Test.Change.Carried {
		a.Test.Change.Carried[i] = evaluator.FileChange{Path: fmt.Sprintf("f%05d.txt", i), Kind: "added", Size: 1}
	}
	got := saveAndLoad(t, s, a)
	if c := got.Change; len(c.Carried) != evaluator.MaxStoredCarried || c.CarriedMore != 500 || c.Carried[0].Path != "f00000.txt" {
		t.Errorf("stored %d carried files and %d more, first %q; want %d, 500, the first", len(c.Carried), c.CarriedMore, c.Carried[0].Path, evaluator.MaxStoredCarried)
	}
}
