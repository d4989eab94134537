package results

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/jmoiron/sqlx"

	"github.com/benchhq/bench/evaluator"
)

// A run's summary is what bench view shows of a whole run, computed once
// when the run stops and kept in run_summaries (schema version 12): the
// report without its per-task rows, the attempts' counts and the run
// page's histograms. The view reads it (one row) instead of every attempt,
// so that its pages cost the same at 100 or 1,000,000 attempts; the rows
// of the tasks a page shows are read for that page (TaskAttempts). A
// summary carries the run's version (RunVersion) it was computed at, and
// is used only while the run's version is the same.

// RunSummary is the stored summary of a run.
type RunSummary struct {
	// Report is the run's report without its per-task rows: Tasks and
	// each comparison's Diffs are empty (a page computes those of its
	// tasks from their attempts).
	Report *Report `json:"report"`
	// Stored counts the attempts stored.
	Stored int `json:"stored"`
	// Counts are the attempts counted by arm, status, outcome and stop
	// reason, in that order: a filter's count of attempts without a
	// filter on tasks.
	Counts []AttemptCount `json:"counts"`
	// Histograms are the distributions the run page draws, one per
	// PlotMetrics, each with a series per arm of Report.Arms.
	Histograms []Histogram `json:"histograms"`
}

// AttemptCount is the number of a run's attempts with one arm, status,
// reward and stop reason.
type AttemptCount struct {
	Arm        string        `json:"arm"`
	Status     AttemptStatus `json:"status"`
	Passed     bool          `json:"passed"`
	StopReason string        `json:"stop_reason"`
	N          int           `json:"n"`
}

// PlotMetric is a value of each finished attempt that the run page draws
// as a histogram per arm.
type PlotMetric struct {
	// Name names the metric: advantage, turns, prompt_tokens or
	// completion_tokens.
	Name string
	// Value is the attempt's value; false when the attempt has none (it
	// did not finish, or has no advantage yet).
	Value func(a AttemptMetrics) (float64, bool)
}

// PlotMetrics are the metrics of the run page's histograms, in order.
func PlotMetrics() []PlotMetric {
	finished := func(f func(a AttemptMetrics) int) func(a AttemptMetrics) (float64, bool) {
		return func(a AttemptMetrics) (float64, bool) { return float64(f(a)), a.Finished() }
	}
	return []PlotMetric{
		{"advantage", func(a AttemptMetrics) (float64, bool) {
			if a.Advantage == nil || !a.Finished() {
				return 0, false
			}
			return *a.Advantage, true
		}},
		{"turns", finished(func(a AttemptMetrics) int { return a.Turns })},
		{"prompt_tokens", finished(func(a AttemptMetrics) int { return a.PromptTokens })},
		{"completion_tokens", finished(func(a AttemptMetrics) int { return a.CompletionTokens })},
	}
}

// Histogram is the distribution of one metric, a series of counts per
// arm over shared bins: integers one bin per value when they span at
// most 40, else 24 bins of equal width from the lowest value to the
// highest.
type Histogram struct {
	Metric string `json:"metric"`
	// N counts the values of every series; Lo and Hi are the lowest and
	// highest; Integers says that every value is a whole number.
	N        int     `json:"n"`
	Lo       float64 `json:"lo"`
	Hi       float64 `json:"hi"`
	Integers bool    `json:"integers"`
	// Edges bound the bins: bin i holds the values from Edges[i] to
	// Edges[i+1]. Counts holds a series' count per bin.
	Edges  []float64 `json:"edges"`
	Counts [][]int   `json:"counts"`
}

// NewHistogram bins the series of values of one metric.
func NewHistogram(metric string, series [][]float64) Histogram {
	h := Histogram{Metric: metric, Lo: math.Inf(1), Hi: math.Inf(-1), Integers: true}
	for _, s := range series {
		for _, v := range s {
			h.Lo, h.Hi = math.Min(h.Lo, v), math.Max(h.Hi, v)
			h.Integers = h.Integers && v == math.Trunc(v)
			h.N++
		}
	}
	h.Counts = make([][]int, len(series))
	if h.N == 0 {
		h.Lo, h.Hi = 0, 0
		return h
	}
	switch {
	case h.Integers && h.Hi-h.Lo <= 40:
		for v := h.Lo; v <= h.Hi+1; v++ {
			h.Edges = append(h.Edges, v-0.5)
		}
	case h.Hi == h.Lo:
		h.Edges = []float64{h.Lo - 0.5, h.Lo + 0.5}
	default:
		const bins = 24
		for i := 0; i <= bins; i++ {
			h.Edges = append(h.Edges, h.Lo+(h.Hi-h.Lo)*float64(i)/bins)
		}
	}
	nb := len(h.Edges) - 1
	for i, s := range series {
		h.Counts[i] = make([]int, nb)
		for _, v := range s {
			b := int(float64(nb) * (v - h.Edges[0]) / (h.Edges[nb] - h.Edges[0]))
			h.Counts[i][min(max(b, 0), nb-1)]++
		}
	}
	return h
}

// Summarize computes the summary of a run from its report and attempts.
func Summarize(rr *RunReport) *RunSummary {
	rep := *rr.Report
	rep.Tasks = []Metrics{}
	rep.Comparisons = slices.Clone(rep.Comparisons)
	for i := range rep.Comparisons {
		rep.Comparisons[i].Diffs = []TaskDiff{}
	}
	sum := &RunSummary{Report: &rep, Stored: len(rr.Attempts), Counts: []AttemptCount{}}
	counts := map[AttemptCount]int{}
	for _, a := range rr.Attempts {
		counts[AttemptCount{Arm: a.Key.Arm, Status: a.Status, Passed: a.Passed(), StopReason: a.StopReason}]++
	}
	armRank := map[string]int{}
	for i, a := range rr.Run.Arms {
		armRank[a.Name] = i
	}
	for c, n := range counts {
		c.N = n
		sum.Counts = append(sum.Counts, c)
	}
	slices.SortFunc(sum.Counts, func(a, b AttemptCount) int {
		return cmp.Or(cmp.Compare(armRank[a.Arm], armRank[b.Arm]), cmp.Compare(a.Arm, b.Arm),
			cmp.Compare(a.Status, b.Status), cmp.Compare(b2i(a.Passed), b2i(b.Passed)), cmp.Compare(a.StopReason, b.StopReason))
	})
	for _, pm := range PlotMetrics() {
		series := make([][]float64, len(rep.Arms))
		for i, m := range rep.Arms {
			for _, a := range rr.Attempts {
				if a.Key.Arm != m.Arm {
					continue
				}
				if v, ok := pm.Value(a); ok {
					series[i] = append(series[i], v)
				}
			}
		}
		sum.Histograms = append(sum.Histograms, NewHistogram(pm.Name, series))
	}
	return sum
}

// StopReasons are the distinct stop reasons of the counted attempts,
// sorted.
func (s *RunSummary) StopReasons() []string {
	var out []string
	for _, c := range s.Counts {
		if c.StopReason != "" && !slices.Contains(out, c.StopReason) {
			out = append(out, c.StopReason)
		}
	}
	slices.Sort(out)
	return out
}

// Histogram returns the histogram of the metric named, and whether the
// summary holds it.
func (s *RunSummary) Histogram(metric string) (Histogram, bool) {
	for _, h := range s.Histograms {
		if h.Metric == metric {
			return h, true
		}
	}
	return Histogram{}, false
}

// summaryFormat is the form of what run_summaries holds, and of the
// computation of the report it holds: a summary of another form is not
// used. Raise it whenever a run's report is computed differently.
const summaryFormat = 1

// summaryVersion is the version a summary of a run at runVersion is kept
// at: the run's, the report's and the summary's own.
func summaryVersion(runVersion string) string {
	return fmt.Sprintf("%s r%d s%d", runVersion, ReportVersion, summaryFormat)
}

// StoredRunSummary returns the summary of a run kept in the store and
// the run's version, or a nil summary when none is kept at the run's
// current version (none was written, or the run changed since). It is an
// error matching ErrNoRun for a run the store does not hold.
func (s *Store) StoredRunSummary(ctx context.Context, runID string) (*RunSummary, string, error) {
	version, err := s.RunVersion(ctx, runID)
	if err != nil {
		return nil, "", err
	}
	var row struct {
		Version string `db:"version"`
		JSON    string `db:"summary_json"`
	}
	err = s.db.GetContext(ctx, &row, `SELECT version, summary_json FROM run_summaries WHERE run_id = ?`, runID)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, version, nil
	case err != nil:
		return nil, "", fmt.Errorf("summary of run %q in %s: %w", runID, s.path, err)
	case row.Version != summaryVersion(version):
		return nil, version, nil
	}
	sum := &RunSummary{}
	if err := json.Unmarshal([]byte(row.JSON), sum); err != nil {
		return nil, "", fmt.Errorf("summary of run %q in %s: column run_summaries.summary_json: expected a run summary object: %w", runID, s.path, err)
	}
	if sum.Report == nil {
		return nil, "", fmt.Errorf("summary of run %q in %s: column run_summaries.summary_json: no report", runID, s.path)
	}
	return sum, version, nil
}

// SaveRunSummary computes the summary of a run and keeps it, at the run's
// current version, replacing any earlier one. FinishRun calls it; so may
// anything that changes a stopped run (a merge, advantages stored again).
func (s *Store) SaveRunSummary(ctx context.Context, runID string) error {
	version, err := s.RunVersion(ctx, runID)
	if err != nil {
		return fmt.Errorf("save the summary of run %q: %w", runID, err)
	}
	rr, err := s.ReportWithAttempts(ctx, runID, ReportOptions{})
	if err != nil {
		return fmt.Errorf("save the summary of run %q: %w", runID, err)
	}
	body, err := json.Marshal(Summarize(rr))
	if err != nil {
		return fmt.Errorf("save the summary of run %q: %w", runID, err)
	}
	packed, err := packAttempts(rr.Run, rr.Attempts)
	if err != nil {
		return fmt.Errorf("save the summary of run %q: %w", runID, err)
	}
	err = s.write(ctx, func(tx *sqlx.Tx) error {
		// The run may have changed while the summary was computed: it is
		// then kept at the version it was computed at, which is stale, and
		// a later SaveRunSummary replaces it.
		_, err := tx.ExecContext(ctx, `INSERT INTO run_summaries (run_id, version, summary_json, attempts_packed)
			VALUES (?, ?, ?, ?)
			ON CONFLICT (run_id) DO UPDATE SET version = excluded.version, summary_json = excluded.summary_json,
				attempts_packed = excluded.attempts_packed`,
			runID, summaryVersion(version), string(body), packed)
		return err
	})
	if err != nil {
		return fmt.Errorf("save the summary of run %q in %s: %w", runID, s.path, err)
	}
	return nil
}

// TaskAttempts returns the attempts of a run's tasks named (AttemptMetrics
// for those tasks only), in arm, task, index order as AttemptMetrics
// gives them: what a page of the run's grid shows.
func (s *Store) TaskAttempts(ctx context.Context, run *Run, tasks []string) ([]AttemptMetrics, error) {
	if len(tasks) == 0 {
		return nil, nil
	}
	var out []AttemptMetrics
	for _, arm := range run.Arms {
		args := []any{run.ID, arm.Name}
		for _, t := range tasks {
			args = append(args, t)
		}
		got, err := s.selectAttempts(ctx, taskQuery(len(tasks)), args...)
		if err != nil {
			return nil, fmt.Errorf("attempts of %d tasks of run %q in %s: %w", len(tasks), run.ID, s.path, err)
		}
		out = append(out, got...)
	}
	armRank, taskRank := map[string]int{}, map[string]int{}
	for i, a := range run.Arms {
		armRank[a.Name] = i
	}
	for i, t := range run.Tasks {
		taskRank[t.ID] = i
	}
	slices.SortFunc(out, func(a, b AttemptMetrics) int {
		return cmp.Or(cmp.Compare(armRank[a.Key.Arm], armRank[b.Key.Arm]), cmp.Compare(taskRank[a.Key.Task], taskRank[b.Key.Task]),
			cmp.Compare(a.Key.Index, b.Key.Index))
	})
	return out, nil
}

// taskQuery is TaskAttempts's query of one arm's attempts of n tasks:
// the run, the arm, then the tasks. It reads the index attempts_report
// alone, only the entries of those tasks.
func taskQuery(n int) string {
	return `SELECT a.arm, ` + attemptColumns + `, a.denials, a.truncated_turns, a.verdict, a.flags
		FROM attempts a WHERE a.run_id = ? AND a.arm = ? AND a.task_id IN (?` + strings.Repeat(", ?", n-1) + `)`
}

// selectAttempts reads attempts from q, whose columns are the arm,
// attemptColumns, denials, truncated_turns, verdict and flags.
func (s *Store) selectAttempts(ctx context.Context, q string, args ...any) ([]AttemptMetrics, error) {
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	names, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	vals := make([]any, len(names))
	dest := make([]any, len(names))
	for i := range vals {
		dest[i] = &vals[i]
	}
	var out []AttemptMetrics
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		var r attemptRow
		arm := &columnReader{vals: vals[:1], names: names[:1]}
		r.Arm = arm.text(0)
		c := &columnReader{vals: vals[1:], names: names[1:]}
		if err := r.scan(c); err != nil {
			return nil, err
		}
		if arm.err != nil {
			return nil, arm.err
		}
		m, err := r.metrics()
		if err != nil {
			return nil, err
		}
		extra := &columnReader{vals: vals[1+attemptColumnCount:], names: names[1+attemptColumnCount:]}
		m.Denials, m.TruncatedTurns = int(extra.int64(0)), int(extra.int64(1))
		m.Verdict, m.Flags = evaluator.Verdict(extra.text(2)), splitFlags(extra.text(3))
		if extra.err != nil {
			return nil, extra.err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// b2i orders false before true.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// AttemptFilter selects a run's attempts, as the view's filters do: each
// list, when not empty, keeps the attempts whose value is one of its
// values.
type AttemptFilter struct {
	Arms, Tasks, StopReasons []string
	// Outcomes are OutcomePass, OutcomeFail, OutcomeInfra or
	// OutcomeCanceled.
	Outcomes []string
}

// The outcomes of an attempt that an AttemptFilter selects: an
// infrastructure failure, a canceled attempt, a pass (reward 1), and
// every other attempt (a failure).
const (
	OutcomePass     = "pass"
	OutcomeFail     = "fail"
	OutcomeInfra    = "infra_error"
	OutcomeCanceled = "canceled"
)

// Outcome is an attempt's outcome as AttemptFilter.Outcomes names it.
func Outcome(status AttemptStatus, reward *int) string {
	switch {
	case status == StatusInfraError:
		return OutcomeInfra
	case status == StatusCanceled:
		return OutcomeCanceled
	case reward != nil && *reward == 1:
		return OutcomePass
	}
	return OutcomeFail
}

// outcomeSQL is Outcome in SQL, over the attempts aliased a.
const outcomeSQL = `(CASE WHEN a.status = 'infra_error' THEN 'infra_error' WHEN a.status = 'canceled' THEN 'canceled'
	WHEN a.reward = 1 THEN 'pass' ELSE 'fail' END)`

// where is the filter's condition on the attempts aliased a, but for its
// arms, and its arguments.
func (f AttemptFilter) where() (string, []any) {
	var conds []string
	var args []any
	in := func(col string, vals []string) {
		if len(vals) == 0 {
			return
		}
		conds = append(conds, col+` IN (?`+strings.Repeat(", ?", len(vals)-1)+`)`)
		for _, v := range vals {
			args = append(args, v)
		}
	}
	in("a.task_id", f.Tasks)
	in("a.stop_reason", f.StopReasons)
	in(outcomeSQL, f.Outcomes)
	if len(conds) == 0 {
		return "", nil
	}
	return " AND " + strings.Join(conds, " AND "), args
}

// arms are the run's arms the filter keeps, in the run's order.
func (f AttemptFilter) arms(run *Run) []string {
	var out []string
	for _, a := range run.Arms {
		if len(f.Arms) == 0 || slices.Contains(f.Arms, a.Name) {
			out = append(out, a.Name)
		}
	}
	return out
}

// CountAttempts counts the attempts of a run that f keeps. Its cost grows
// with the attempts it reads: with tasks named, those tasks' attempts;
// without, every attempt of the arms kept (RunSummary.Counts answers that
// case without reading any).
func (s *Store) CountAttempts(ctx context.Context, run *Run, f AttemptFilter) (int, error) {
	cond, args := f.where()
	total := 0
	for _, arm := range f.arms(run) {
		var n int
		if err := s.db.GetContext(ctx, &n, `SELECT count(*) FROM attempts a WHERE a.run_id = ? AND a.arm = ?`+cond,
			append([]any{run.ID, arm}, args...)...); err != nil {
			return 0, fmt.Errorf("count the attempts of run %q in %s: %w", run.ID, s.path, err)
		}
		total += n
	}
	return total, nil
}

// AttemptPage is a page of the attempts a filter keeps (ListAttempts).
type AttemptPage struct {
	Attempts []AttemptMetrics
	// More says that attempts follow the page (or precede it, for a page
	// read backwards).
	More bool
}

// ListAttempts returns up to limit attempts of a run that f keeps, in the
// run's arm order, then task id and index: those after the attempt with
// row id after (0: from the first), or, when before is not 0, those just
// before the attempt with row id before. Each page costs the same
// wherever it is in the run (keyset pagination over the index
// attempts_report), unlike an offset, which reads every attempt it
// skips; offset is for a page asked for by number alone, without a
// neighbour's attempt to start from.
func (s *Store) ListAttempts(ctx context.Context, run *Run, f AttemptFilter, after, before int64, offset, limit int) (AttemptPage, error) {
	page, err := s.listAttempts(ctx, run, f, after, before, offset, limit)
	if err != nil {
		return AttemptPage{}, fmt.Errorf("list the attempts of run %q in %s: %w", run.ID, s.path, err)
	}
	return page, nil
}

func (s *Store) listAttempts(ctx context.Context, run *Run, f AttemptFilter, after, before int64, offset, limit int) (AttemptPage, error) {
	arms := f.arms(run)
	backward := before != 0
	cursor := after
	if backward {
		cursor = before
		slices.Reverse(arms)
	}
	var from struct {
		Arm   string `db:"arm"`
		Task  string `db:"task_id"`
		Index int    `db:"idx"`
	}
	if cursor != 0 {
		err := s.db.GetContext(ctx, &from, `SELECT arm, task_id, idx FROM attempts WHERE id = ? AND run_id = ?`, cursor, run.ID)
		if errors.Is(err, sql.ErrNoRows) {
			return AttemptPage{}, &NoAttemptError{ID: cursor}
		}
		if err != nil {
			return AttemptPage{}, err
		}
		i := slices.Index(arms, from.Arm)
		if i < 0 {
			return AttemptPage{}, fmt.Errorf("attempt %d is of arm %q, which the filter leaves out", cursor, from.Arm)
		}
		arms = arms[i:]
	}
	cond, args := f.where()
	var page AttemptPage
	for i, arm := range arms {
		want := limit + 1 - len(page.Attempts)
		qargs := append([]any{run.ID, arm}, args...)
		if i == 0 && cursor != 0 {
			qargs = append(qargs, from.Task, from.Index)
		}
		q := listQuery(cond, i == 0 && cursor != 0, backward)
		qargs = append(qargs, want, offset)
		got, err := s.selectAttempts(ctx, q, qargs...)
		if err != nil {
			return AttemptPage{}, err
		}
		page.Attempts = append(page.Attempts, got...)
		if len(page.Attempts) > limit {
			break
		}
		if offset > 0 {
			// The offset skips attempts of this arm first, then of the next.
			n, err := s.CountAttempts(ctx, run, AttemptFilter{Arms: []string{arm}, Tasks: f.Tasks, StopReasons: f.StopReasons, Outcomes: f.Outcomes})
			if err != nil {
				return AttemptPage{}, err
			}
			offset = max(0, offset-n)
		}
	}
	if len(page.Attempts) > limit {
		page.Attempts, page.More = page.Attempts[:limit], true
	}
	if backward {
		slices.Reverse(page.Attempts)
	}
	return page, nil
}

// listQuery is ListAttempts's query of one arm's attempts: the run, the
// arm, cond's arguments, then, from a cursor, the task id and index to go
// on from, and the limit and offset. It reads the index attempts_report
// in order and alone.
func listQuery(cond string, fromCursor, backward bool) string {
	cmpOp, order := ">", "ASC"
	if backward {
		cmpOp, order = "<", "DESC"
	}
	q := `SELECT a.arm, ` + attemptColumns + `, a.denials, a.truncated_turns, a.verdict, a.flags
		FROM attempts a WHERE a.run_id = ? AND a.arm = ?` + cond
	if fromCursor {
		q += ` AND (a.task_id, a.idx) ` + cmpOp + ` (?, ?)`
	}
	return q + ` ORDER BY a.task_id ` + order + `, a.idx ` + order + ` LIMIT ? OFFSET ?`
}

// TaskRows computes the per-task rows of a run's report from the
// attempts of some of its tasks (run's Tasks are those tasks): each
// group's metrics, and, for each arm after the first, its difference
// with the first task by task (keyed by arm). They are what BuildReport
// gives as Tasks and as its comparisons' Diffs, without the whole run's
// numbers: what a page of the run's grid shows.
func TaskRows(run *Run, attempts []AttemptMetrics, ks []int) ([]Metrics, map[string][]TaskDiff, error) {
	groups, err := groupAttempts(run, attempts)
	if err != nil {
		return nil, nil, err
	}
	rows := make([]Metrics, len(groups))
	byArm := map[string]map[string]*group{}
	for i, gr := range groups {
		if rows[i], err = metricsOf(gr.arm, gr.task, []*group{gr}, ks); err != nil {
			return nil, nil, err
		}
		if byArm[gr.arm] == nil {
			byArm[gr.arm] = map[string]*group{}
		}
		byArm[gr.arm][gr.task] = gr
	}
	diffs := map[string][]TaskDiff{}
	if len(run.Arms) == 0 {
		return rows, diffs, nil
	}
	base := run.Arms[0].Name
	for _, arm := range run.Arms[1:] {
		diffs[arm.Name] = []TaskDiff{}
		for _, t := range run.Tasks {
			gb, ga := byArm[base][t.ID], byArm[arm.Name][t.ID]
			nb, cb := gb.counts()
			na, ca := ga.counts()
			if nb == 0 || na == 0 {
				continue
			}
			// As compareArms and evaluator.Compare compute them.
			rb, ra := float64(cb)/float64(nb), float64(ca)/float64(na)
			diffs[arm.Name] = append(diffs[arm.Name], TaskDiff{Task: t.ID, Baseline: rb, Arm: ra, Diff: ra - rb})
		}
	}
	return rows, diffs, nil
}

// storedReport returns the report of a run from its stored summary and
// packed attempts, the same as BuildReport gives with the default
// options, or nil when the run has no summary at its current version.
func (s *Store) storedReport(ctx context.Context, runID string) (*Report, error) {
	sum, version, err := s.StoredRunSummary(ctx, runID)
	if err != nil || sum == nil {
		return nil, err
	}
	var row struct {
		Version string `db:"version"`
		Packed  []byte `db:"attempts_packed"`
	}
	if err := s.db.GetContext(ctx, &row, `SELECT version, attempts_packed FROM run_summaries WHERE run_id = ?`, runID); err != nil {
		return nil, fmt.Errorf("attempts of run %q in %s: %w", runID, s.path, err)
	}
	if row.Version != summaryVersion(version) {
		// Replaced meanwhile.
		return nil, nil
	}
	arms, tasks, attempts, err := unpackAttempts(row.Packed)
	if err != nil {
		return nil, fmt.Errorf("attempts of run %q in %s: %w", runID, s.path, err)
	}
	run := &Run{ID: runID}
	for i, a := range arms {
		run.Arms = append(run.Arms, Arm{Name: a, Index: i})
	}
	for _, t := range tasks {
		run.Tasks = append(run.Tasks, TaskInfo{ID: t})
	}
	rows, diffs, err := TaskRows(run, attempts, sum.Report.Ks)
	if err != nil {
		return nil, fmt.Errorf("report of run %q in %s: %w", runID, s.path, err)
	}
	rep := sum.Report
	rep.Tasks = rows
	for i := range rep.Comparisons {
		rep.Comparisons[i].Diffs = diffs[rep.Comparisons[i].Arm]
		if rep.Comparisons[i].Diffs == nil {
			rep.Comparisons[i].Diffs = []TaskDiff{}
		}
	}
	return rep, nil
}
