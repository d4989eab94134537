package results

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// summaryRun stores a run of both arms, both tasks and G = 4 with passes,
// failures and an infrastructure failure, and returns it.
func summaryRun(t *testing.T, s *Store) *Run {
	t.Helper()
	ctx := context.Background()
	run := createRun(t, s)
	for _, arm := range []string{"baseline", "strict"} {
		for _, task := range []string{"recipe-trailing-dot", "csv-sum"} {
			for i := range 4 {
				key := AttemptKey{Arm: arm, Task: task, Index: i}
				a := finishedAttempt(run.ID, key, (i+len(arm))%2)
				if arm == "strict" && task == "csv-sum" && i == 3 {
					a = infraAttempt(run.ID, key)
				}
				if _, err := s.SaveAttempt(ctx, a); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	return run
}

// A stopped run's summary is kept at FinishRun and read back whole; it
// is the report less its per-task rows, and any change of what the
// report reads (an attempt, the run's row, a task) makes it stale until
// it is saved again.
func TestRunSummaryKeptAndStale(t *testing.T) {
	ctx := context.Background()
	s, path := openTemp(t)
	run := summaryRun(t, s)
	if sum, _, err := s.StoredRunSummary(ctx, run.ID); err != nil || sum != nil {
		t.Fatalf("a running run's summary: %v, %v; want none", sum, err)
	}
	if err := s.FinishRun(ctx, run.ID, RunFinished); err != nil {
		t.Fatal(err)
	}
	sum, _, err := s.StoredRunSummary(ctx, run.ID)
	if err != nil || sum == nil {
		t.Fatalf("the summary after FinishRun: %v, %v", sum, err)
	}
	rr, err := s.ReportWithAttempts(ctx, run.ID, ReportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := Summarize(rr)
	got, _ := json.Marshal(sum)
	wantJSON, _ := json.Marshal(want)
	if string(got) != string(wantJSON) {
		t.Errorf("stored summary\n%s\nwant\n%s", got, wantJSON)
	}
	if len(sum.Report.Tasks) != 0 || len(sum.Report.Arms) != 2 || len(sum.Report.Comparisons) != 1 || len(sum.Report.Comparisons[0].Diffs) != 0 {
		t.Errorf("summary's report: %d tasks, %d arms, %d comparisons: want the arms and comparison without per-task rows",
			len(sum.Report.Tasks), len(sum.Report.Arms), len(sum.Report.Comparisons))
	}
	if sum.Stored != 16 {
		t.Errorf("Stored %d, want 16", sum.Stored)
	}
	n, infra := 0, 0
	for _, c := range sum.Counts {
		n += c.N
		if c.Status == StatusInfraError {
			infra += c.N
		}
	}
	if n != 16 || infra != 1 {
		t.Errorf("counts add up to %d (%d infra), want 16 (1)", n, infra)
	}
	if h, ok := sum.Histogram("turns"); !ok || h.N != 15 || len(h.Counts) != 2 {
		t.Errorf("turns histogram %+v, want 15 values in 2 series", h)
	}
	if got := sum.StopReasons(); !slices.Equal(got, []string{"answered", "infra_error"}) {
		t.Errorf("StopReasons %v", got)
	}

	stale := func(what string) {
		t.Helper()
		if sum, _, err := s.StoredRunSummary(ctx, run.ID); err != nil || sum != nil {
			t.Errorf("after %s: summary %v, %v; want none (stale)", what, sum != nil, err)
		}
		if err := s.SaveRunSummary(ctx, run.ID); err != nil {
			t.Fatal(err)
		}
		if sum, _, err := s.StoredRunSummary(ctx, run.ID); err != nil || sum == nil {
			t.Fatalf("after %s and SaveRunSummary: %v, %v", what, sum, err)
		}
	}
	if _, err := s.SaveAttempt(ctx, finishedAttempt(run.ID, AttemptKey{Arm: "strict", Task: "csv-sum", Index: 3}, 1)); err != nil {
		t.Fatal(err)
	}
	stale("an attempt replaced")
	db := rawDB(t, path)
	defer db.Close()
	for _, q := range []string{
		`UPDATE attempts SET advantage = 0.5 WHERE id = (SELECT min(id) FROM attempts)`,
		`UPDATE runs SET isolation = 'none'`,
		`UPDATE tasks SET report = 'junit:x.xml'`,
		`DELETE FROM attempts WHERE id = (SELECT max(id) FROM attempts)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
		stale(q)
	}
}

// TaskAttempts gives the attempts of the tasks named as AttemptMetrics
// gives them, in the run's order.
func TestTaskAttempts(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	run := summaryRun(t, s)
	all, err := s.AttemptMetrics(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, tasks := range [][]string{{"csv-sum"}, {"recipe-trailing-dot"}, {"csv-sum", "recipe-trailing-dot"}, {"nope"}} {
		got, err := s.TaskAttempts(ctx, run, tasks)
		if err != nil {
			t.Fatal(err)
		}
		var want []AttemptMetrics
		for _, a := range all {
			if slices.Contains(tasks, a.Key.Task) {
				want = append(want, a)
			}
		}
		if fmt.Sprint(keysOf(got)) != fmt.Sprint(keysOf(want)) {
			t.Errorf("tasks %v: %v, want %v", tasks, keysOf(got), keysOf(want))
		}
		for i := range min(len(got), len(want)) {
			g, w := got[i], want[i]
			if g.ID != w.ID || g.Status != w.Status || g.Passed() != w.Passed() || g.Turns != w.Turns || g.Denials != w.Denials {
				t.Errorf("tasks %v: attempt %d: %+v, want %+v", tasks, i, g, w)
			}
		}
	}
}

func keysOf(as []AttemptMetrics) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.Key.String()
	}
	return out
}

// ListAttempts pages through the attempts a filter keeps, forwards from
// each page's last attempt, backwards from its first, or by offset, all
// giving the same pages; CountAttempts counts them.
func TestListAttemptsAndCount(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	run := summaryRun(t, s)
	all, err := s.AttemptMetrics(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		f    AttemptFilter
	}{
		{"everything", AttemptFilter{}},
		{"one arm", AttemptFilter{Arms: []string{"strict"}}},
		{"passes", AttemptFilter{Outcomes: []string{OutcomePass}}},
		{"failures and infra", AttemptFilter{Outcomes: []string{OutcomeFail, OutcomeInfra}}},
		{"a task", AttemptFilter{Tasks: []string{"csv-sum"}}},
		{"a stop reason", AttemptFilter{StopReasons: []string{"infra_error"}}},
		{"nothing", AttemptFilter{Arms: []string{"baseline"}, Outcomes: []string{OutcomeInfra}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// The run's arm order, then task id and index.
			var want []string
			for _, arm := range []string{"baseline", "strict"} {
				var part []AttemptMetrics
				for _, a := range all {
					f := tt.f
					if a.Key.Arm == arm && (len(f.Arms) == 0 || slices.Contains(f.Arms, arm)) &&
						(len(f.Tasks) == 0 || slices.Contains(f.Tasks, a.Key.Task)) &&
						(len(f.Outcomes) == 0 || slices.Contains(f.Outcomes, Outcome(a.Status, a.Reward))) &&
						(len(f.StopReasons) == 0 || slices.Contains(f.StopReasons, a.StopReason)) {
						part = append(part, a)
					}
				}
				slices.SortFunc(part, func(a, b AttemptMetrics) int {
					if c := strings.Compare(a.Key.Task, b.Key.Task); c != 0 {
						return c
					}
					return a.Key.Index - b.Key.Index
				})
				want = append(want, keysOf(part)...)
			}
			n, err := s.CountAttempts(ctx, run, tt.f)
			if err != nil || n != len(want) {
				t.Errorf("CountAttempts %d, %v; want %d", n, err, len(want))
			}
			const per = 3
			var got []string
			var pages []AttemptPage
			var after int64
			for {
				p, err := s.ListAttempts(ctx, run, tt.f, after, 0, 0, per)
				if err != nil {
					t.Fatal(err)
				}
				pages = append(pages, p)
				got = append(got, keysOf(p.Attempts)...)
				if !p.More {
					break
				}
				after = p.Attempts[len(p.Attempts)-1].ID
			}
			if !slices.Equal(got, want) {
				t.Fatalf("pages forward %v, want %v", got, want)
			}
			for i, p := range pages {
				byOffset, err := s.ListAttempts(ctx, run, tt.f, 0, 0, i*per, per)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(keysOf(byOffset.Attempts), keysOf(p.Attempts)) {
					t.Errorf("page %d by offset %v, want %v", i, keysOf(byOffset.Attempts), keysOf(p.Attempts))
				}
				if i == 0 {
					continue
				}
				back, err := s.ListAttempts(ctx, run, tt.f, 0, p.Attempts[0].ID, 0, per)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(keysOf(back.Attempts), keysOf(pages[i-1].Attempts)) || !back.More == (i > 1) {
					t.Errorf("page before %d: %v (more %v), want %v", i, keysOf(back.Attempts), back.More, keysOf(pages[i-1].Attempts))
				}
			}
		})
	}
	if _, err := s.ListAttempts(ctx, run, AttemptFilter{}, 99999, 0, 0, 3); err == nil || !strings.Contains(err.Error(), "no attempt 99999") {
		t.Errorf("a cursor the run lacks: %v", err)
	}
}

func TestNewHistogram(t *testing.T) {
	for _, tt := range []struct {
		name   string
		series [][]float64
		edges  int
		n      int
	}{
		{"none", [][]float64{nil, {}}, 0, 0},
		{"integers over a short range: a bin each", [][]float64{{1, 2, 2, 10}, {3}}, 11, 5},
		{"one value", [][]float64{{0.5, 0.5}}, 2, 2},
		{"a wide range: 24 bins", [][]float64{{0, 1000, 500.5}, {999}}, 25, 4},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := NewHistogram("m", tt.series)
			if len(h.Edges) != tt.edges || h.N != tt.n || len(h.Counts) != len(tt.series) {
				t.Fatalf("%d edges, n %d, %d series; want %d, %d, %d", len(h.Edges), h.N, len(h.Counts), tt.edges, tt.n, len(tt.series))
			}
			total := 0
			for i, c := range h.Counts {
				sum := 0
				for _, x := range c {
					sum += x
				}
				if sum != len(tt.series[i]) {
					t.Errorf("series %d: %d counted, want %d", i, sum, len(tt.series[i]))
				}
				total += sum
			}
			if total != tt.n {
				t.Errorf("%d counted, want %d", total, tt.n)
			}
		})
	}
}

// TaskRows gives, for some of a run's tasks, the report's rows of those
// tasks and its comparisons' differences, number for number.
func TestTaskRowsAreTheReports(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	run := summaryRun(t, s)
	rep, err := s.Report(ctx, run.ID, ReportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range []string{"csv-sum", "recipe-trailing-dot"} {
		attempts, err := s.TaskAttempts(ctx, run, []string{task})
		if err != nil {
			t.Fatal(err)
		}
		sub := *run
		sub.Tasks = slices.DeleteFunc(slices.Clone(run.Tasks), func(ti TaskInfo) bool { return ti.ID != task })
		rows, diffs, err := TaskRows(&sub, attempts, rep.Ks)
		if err != nil {
			t.Fatal(err)
		}
		var wantRows []Metrics
		for _, m := range rep.Tasks {
			if m.Task == task {
				wantRows = append(wantRows, m)
			}
		}
		var wantDiffs []TaskDiff
		for _, d := range rep.Comparisons[0].Diffs {
			if d.Task == task {
				wantDiffs = append(wantDiffs, d)
			}
		}
		got, _ := json.Marshal([]any{rows, diffs["strict"]})
		want, _ := json.Marshal([]any{wantRows, wantDiffs})
		if string(got) != string(want) {
			t.Errorf("%s:\n%s\nwant\n%s", task, got, want)
		}
	}
}

// A stopped run's report, from its summary and packed attempts, is the
// one computed from its attempts, byte for byte in every format.
func TestStoredReportIsTheComputedOne(t *testing.T) {
	ctx := context.Background()
	s, path := openTemp(t)
	run := summaryRun(t, s)
	db := rawDB(t, path)
	defer db.Close()
	// Flags, a verdict and advantages, so that every packed column counts.
	if _, err := db.Exec(`UPDATE attempts SET flags = 'hidden-tests-touched,skip-marker', verdict = 'golden' WHERE idx = 1`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE attempts SET advantage = (idx - 1.5) / 3, advantage_method = 'grpo' WHERE status = 'finished'`); err != nil {
		t.Fatal(err)
	}
	if err := s.FinishRun(ctx, run.ID, RunFinished); err != nil {
		t.Fatal(err)
	}
	stored, err := s.storedReport(ctx, run.ID)
	if err != nil || stored == nil {
		t.Fatalf("storedReport: %v, %v", stored, err)
	}
	rr, err := s.ReportWithAttempts(ctx, run.ID, ReportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range Formats() {
		var a, b strings.Builder
		if err := stored.Write(&a, f); err != nil {
			t.Fatal(err)
		}
		if err := rr.Report.Write(&b, f); err != nil {
			t.Fatal(err)
		}
		if a.String() != b.String() {
			t.Errorf("%s: the stored report\n%s\nwant\n%s", f, a.String(), b.String())
		}
	}
	// Report takes it; a broken packed list is left aside for the
	// attempts.
	if _, err := db.Exec(`UPDATE run_summaries SET attempts_packed = x'00'`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.storedReport(ctx, run.ID); err == nil || !strings.Contains(err.Error(), "not a packed list") {
		t.Errorf("a broken packed list: %v", err)
	}
	rep, err := s.Report(ctx, run.ID, ReportOptions{})
	if err != nil || len(rep.Tasks) != 4 {
		t.Fatalf("Report with a broken packed list: %v", err)
	}
}

// Packed attempts read back as they were, every field; a cut or changed
// list is an error, never attempts made up.
func TestPackedAttempts(t *testing.T) {
	ctx := context.Background()
	s, path := openTemp(t)
	run := summaryRun(t, s)
	db := rawDB(t, path)
	defer db.Close()
	if _, err := db.Exec(`UPDATE attempts SET flags = 'a,b', verdict = 'black_box', advantage = -0.25, advantage_method = 'grpo' WHERE idx = 2`); err != nil {
		t.Fatal(err)
	}
	want, err := s.AttemptMetrics(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	b, err := packAttempts(run, want)
	if err != nil {
		t.Fatal(err)
	}
	arms, tasks, got, err := unpackAttempts(b)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(arms, []string{"baseline", "strict"}) || !slices.Equal(tasks, []string{"recipe-trailing-dot", "csv-sum"}) {
		t.Errorf("arms %v, tasks %v", arms, tasks)
	}
	gotJSON, _ := json.Marshal(got)
	wantJSON, _ := json.Marshal(want)
	if string(gotJSON) != string(wantJSON) {
		t.Errorf("unpacked\n%s\nwant\n%s", gotJSON, wantJSON)
	}
	for _, bad := range [][]byte{nil, []byte("nope"), b[:len(b)-1], append(slices.Clone(b), 0), b[:len(packedMagic)+3]} {
		if _, _, _, err := unpackAttempts(bad); err == nil || !strings.Contains(err.Error(), "not a packed list of attempts") {
			t.Errorf("%d bytes: %v, want an error", len(bad), err)
		}
	}
	if _, err := packAttempts(run, []AttemptMetrics{{ID: 1, Key: AttemptKey{Arm: "nope", Task: "csv-sum"}}}); err == nil {
		t.Error("an attempt of an arm the run lacks was packed")
	}
}
