package results

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/benchhq/bench/evaluator"
)

// AttemptMetrics is what the metrics of a report need from one attempt:
// its identity, outcome and costs, without its conversation.
type AttemptMetrics struct {
	// ID is the attempt's row id.
	ID  int64
	Key AttemptKey
	// Status says how the attempt ended; only finished attempts are scored.
	Status AttemptStatus
	// StopReason is why the agent loop ended (attempts.stop_reason).
	StopReason string
	// Reward is 0 or 1 for a finished attempt, nil otherwise.
	Reward *int
	// Advantage and AdvantageMethod are the stored advantage and the
	// method that computed it; nil and "" until computed.
	Advantage       *float64
	AdvantageMethod string
	// Turns, ToolCalls, PromptTokens and CompletionTokens are the
	// attempt's totals (tokens summed over its turns).
	Turns            int
	ToolCalls        int
	PromptTokens     int
	CompletionTokens int
	// Wall is the agent loop's wall time.
	Wall time.Duration
	// Times is where the attempt's time went (zero for attempts stored
	// before bench kept it).
	Times Times
	// Denials counts the attempt's tool calls the policy denied
	// (tool_calls.decision = 'deny').
	Denials int
	// TruncatedTurns counts the attempt's turns whose prompt was probably
	// cut at the context (turns.truncated = 1).
	TruncatedTurns int
	// Verdict is the kind of verdict the reward rests on
	// (attempts.verdict); "" when unscored or stored before bench said.
	Verdict evaluator.Verdict
	// Flags are the suspicion flags of the carried change, sorted
	// (attempts.flags); they never change the reward.
	Flags []string
}

// Finished reports whether the attempt finished and has a reward.
func (a AttemptMetrics) Finished() bool { return a.Status == StatusFinished && a.Reward != nil }

// Passed reports whether the attempt finished with reward 1.
func (a AttemptMetrics) Passed() bool { return a.Finished() && *a.Reward == 1 }

// attemptRow is the columns of an attempt that reports and exports read.
type attemptRow struct {
	ID         int64           `db:"id"`
	Arm        string          `db:"arm"`
	Task       string          `db:"task_id"`
	Index      int             `db:"idx"`
	Status     string          `db:"status"`
	StopReason string          `db:"stop_reason"`
	Reward     sql.NullInt64   `db:"reward"`
	Advantage  sql.NullFloat64 `db:"advantage"`
	Method     sql.NullString  `db:"advantage_method"`
	Turns      int             `db:"turns"`
	ToolCalls  int             `db:"tool_calls"`
	Prompt     int             `db:"prompt_tokens"`
	Completion int             `db:"completion_tokens"`
	WallMS     float64         `db:"wall_ms"`
	ModelMS    sql.NullFloat64 `db:"model_ms"`
	ToolMS     sql.NullFloat64 `db:"tool_ms"`
	TestMS     sql.NullFloat64 `db:"test_ms"`
	HarnessMS  sql.NullFloat64 `db:"harness_ms"`
}

// attemptColumns are the columns of attemptRow that runAttempts reads, in
// the order attemptRow.scan takes them. The arm is not among them: each of
// runAttempts's queries reads the attempts of one arm.
const attemptColumns = `a.id, a.task_id, a.idx, a.status, a.stop_reason,
	a.reward, a.advantage, a.advantage_method, a.turns, a.tool_calls,
	a.prompt_tokens, a.completion_tokens, a.wall_ms,
	a.model_ms, a.tool_ms, a.test_ms, a.harness_ms`

// attemptColumnCount is the number of attemptColumns.
const attemptColumnCount = 17

// attemptsQuery is the query of one part of a run's attempts
// (runAttempts): attemptColumns, then extraColumns, of the attempts of one
// arm whose task ids are at least lo and, when bounded, below hi. Its
// arguments are the run, the arm, lo and hi. The index attempts_report
// covers it when the extra columns are attempts_report's.
func attemptsQuery(extraColumns []string, bounded bool) string {
	q := `SELECT ` + attemptColumns
	for _, c := range extraColumns {
		q += ", " + c
	}
	q += ` FROM attempts a WHERE a.run_id = ? AND a.arm = ? AND a.task_id >= ?`
	if bounded {
		q += ` AND a.task_id < ?`
	}
	return q
}

// scan sets r, but for its arm, from a row of attemptColumns.
func (r *attemptRow) scan(c *columnReader) error {
	r.ID = c.int64(0)
	r.Task = c.text(1)
	r.Index = int(c.int64(2))
	r.Status = c.text(3)
	r.StopReason = c.text(4)
	r.Reward = c.nullInt64(5)
	r.Advantage = c.nullFloat64(6)
	r.Method = c.nullText(7)
	r.Turns = int(c.int64(8))
	r.ToolCalls = int(c.int64(9))
	r.Prompt = int(c.int64(10))
	r.Completion = int(c.int64(11))
	r.WallMS = c.float64(12)
	r.ModelMS, r.ToolMS, r.TestMS, r.HarnessMS = c.nullFloat64(13), c.nullFloat64(14), c.nullFloat64(15), c.nullFloat64(16)
	return c.err
}

// columnReader converts the values of a row as the driver gives them
// (each column scanned into an any), keeping the first error. Scanning a
// run's rows into typed destinations costs more than reading them:
// database/sql converts through reflection, and an int64 to an int by
// way of a string. The conversions are database/sql's for the values a
// bench database holds.
type columnReader struct {
	vals  []any
	names []string
	err   error
}

func (c *columnReader) fail(i int, want string) {
	if c.err == nil {
		c.err = fmt.Errorf("column %s: %T value %v, expected %s", c.names[i], c.vals[i], c.vals[i], want)
	}
}

// int64 reads an integer column; a float with no fraction is read as
// its integer.
func (c *columnReader) int64(i int) int64 {
	switch v := c.vals[i].(type) {
	case int64:
		return v
	case float64:
		if n := int64(v); float64(n) == v {
			return n
		}
	}
	c.fail(i, "an integer")
	return 0
}

func (c *columnReader) nullInt64(i int) sql.NullInt64 {
	if c.vals[i] == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: c.int64(i), Valid: true}
}

// float64 reads a number column.
func (c *columnReader) float64(i int) float64 {
	switch v := c.vals[i].(type) {
	case float64:
		return v
	case int64:
		return float64(v)
	}
	c.fail(i, "a number")
	return 0
}

func (c *columnReader) nullFloat64(i int) sql.NullFloat64 {
	if c.vals[i] == nil {
		return sql.NullFloat64{}
	}
	return sql.NullFloat64{Float64: c.float64(i), Valid: true}
}

// text reads a text column.
func (c *columnReader) text(i int) string {
	switch v := c.vals[i].(type) {
	case string:
		return v
	case []byte:
		return string(v)
	}
	c.fail(i, "text")
	return ""
}

func (c *columnReader) nullText(i int) sql.NullString {
	if c.vals[i] == nil {
		return sql.NullString{}
	}
	return sql.NullString{String: c.text(i), Valid: true}
}

// interner keeps one copy of each distinct string it is given: the
// attempts of a run share a few statuses, stop reasons and methods.
type interner struct {
	last string
	seen map[string]string
}

func (in *interner) intern(s *string) {
	if *s == in.last {
		*s = in.last
		return
	}
	v, ok := in.seen[*s]
	if !ok {
		if in.seen == nil {
			in.seen = map[string]string{}
		}
		in.seen[*s], v = *s, *s
	}
	*s, in.last = v, v
}

// place is where a name (an arm, a task) comes in its run: rank counts
// the names before it in the run's order (by idx, then name); name is
// the one copy of the name that the run's attempts share.
type place struct {
	rank int
	name string
}

// runOrder reads the names and idx of a run's arms or tasks (query
// selects name, idx) and places them in the run's order. names are
// sorted as SQLite compares them (by bytes).
func (s *Store) runOrder(ctx context.Context, query, runID string) (places map[string]place, names []string, err error) {
	rows, err := s.db.QueryContext(ctx, query, runID)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	type entry struct {
		name string
		idx  int
	}
	var es []entry
	for rows.Next() {
		var e entry
		if err := rows.Scan(&e.name, &e.idx); err != nil {
			return nil, nil, err
		}
		es = append(es, e)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	names = make([]string, len(es))
	for i, e := range es {
		names[i] = e.name
	}
	slices.Sort(names)
	slices.SortStableFunc(es, func(a, b entry) int { return cmp.Or(cmp.Compare(a.idx, b.idx), strings.Compare(a.name, b.name)) })
	places = make(map[string]place, len(es))
	for i, e := range es {
		places[e.name] = place{rank: i, name: e.name}
	}
	return places, names, nil
}

// runAttempts reads the attempts of a run, converted, in the run's arm
// order, then task order, then attempt index: attemptColumns, then the
// extra columns of a (the attempts table), which conv reads from extra.
// conv may be called from several goroutines at once. Attempts of an arm
// or task the run does not list are left out.
//
// A large run has a hundred thousand attempts, and SQLite's cost is per
// column read: the rows are scanned by hand rather than by reflection,
// read in parts (arms × ranges of task ids) on several connections at
// once, and put in order here, group by group, rather than by SQLite
// through two joins.
func runAttempts[T any](ctx context.Context, s *Store, runID string, extraColumns []string, conv func(r *attemptRow, extra *columnReader) (T, error)) ([]T, error) {
	arms, armNames, err := s.runOrder(ctx, `SELECT name, idx FROM arms WHERE run_id = ?`, runID)
	if err != nil {
		return nil, fmt.Errorf("arms: %w", err)
	}
	tasks, taskIDs, err := s.runOrder(ctx, `SELECT id, idx FROM tasks WHERE run_id = ?`, runID)
	if err != nil {
		return nil, fmt.Errorf("tasks: %w", err)
	}
	var g int
	if err := s.db.QueryRowContext(ctx, `SELECT attempts_per_task FROM runs WHERE id = ?`, runID).Scan(&g); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("attempts per task: %w", err)
	}
	type part struct {
		arm    place
		lo, hi string // task ids: lo <= id < hi ("" hi: no bound)
	}
	workers := min(runtime.GOMAXPROCS(0), 4)
	var parts []part
	for _, arm := range armNames {
		n := min(workers, max(len(taskIDs), 1))
		for i := range n {
			p := part{arm: arms[arm]}
			lo, hi := i*len(taskIDs)/n, (i+1)*len(taskIDs)/n
			if lo > 0 {
				p.lo = taskIDs[lo]
			}
			if hi < len(taskIDs) {
				p.hi = taskIDs[hi]
			}
			parts = append(parts, p)
		}
	}
	// A run's plan has a place for each attempt: group (arm rank × tasks
	// + task rank) × G + index, in the order the attempts are returned.
	// Each part puts its attempts in their places, in one array that the
	// parts share (each writes its own places), rather than in arrays of
	// their own copied into place afterwards: at 100,000 attempts, the
	// copies and the fresh pages they are written to cost more than the
	// ordering. An attempt with no place of its own (an index outside
	// 0..G-1) is kept aside, and then every attempt is sorted into order.
	type keyed struct {
		group, idx int
		v          T
	}
	places := len(armNames) * len(taskIDs) * g
	vs := make([]T, places)
	filled := make([]bool, places)
	read := func(p part) ([]keyed, error) {
		args := []any{runID, p.arm.name, p.lo}
		if p.hi != "" {
			args = append(args, p.hi)
		}
		rows, err := s.db.QueryContext(ctx, attemptsQuery(extraColumns, p.hi != ""), args...)
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
		var aside []keyed
		r := attemptRow{Arm: p.arm.name}
		var status, stop, method interner
		var task place
		taskOK := false
		for rows.Next() {
			if err := rows.Scan(dest...); err != nil {
				return nil, err
			}
			base := columnReader{vals: vals[:attemptColumnCount], names: names[:attemptColumnCount]}
			if err := r.scan(&base); err != nil {
				return nil, err
			}
			if r.Task != task.name || !taskOK {
				task, taskOK = tasks[r.Task]
				if !taskOK {
					task.name = r.Task
				}
			}
			if !taskOK {
				// The store refuses such an attempt (attempts reference
				// run_tasks); were one there, it is not dropped quietly.
				return nil, fmt.Errorf("an attempt of task %q, which run %q does not list", r.Task, runID)
			}
			r.Task = task.name
			status.intern(&r.Status)
			stop.intern(&r.StopReason)
			method.intern(&r.Method.String)
			extra := columnReader{vals: vals[attemptColumnCount:], names: names[attemptColumnCount:]}
			v, err := conv(&r, &extra)
			if err == nil {
				err = extra.err
			}
			if err != nil {
				return nil, err
			}
			group := p.arm.rank*len(taskIDs) + task.rank
			if at := group*g + r.Index; r.Index >= 0 && r.Index < g && !filled[at] {
				vs[at], filled[at] = v, true
			} else {
				aside = append(aside, keyed{group, r.Index, v})
			}
		}
		return aside, rows.Err()
	}
	asides := make([][]keyed, len(parts))
	jobs := make([]func() error, len(parts))
	for i, p := range parts {
		jobs[i] = func() (err error) {
			asides[i], err = read(p)
			return err
		}
	}
	if err := inParallel(jobs); err != nil {
		return nil, err
	}
	var aside []keyed
	for _, a := range asides {
		aside = append(aside, a...)
	}
	if len(aside) > 0 {
		for at, ok := range filled {
			if ok {
				aside = append(aside, keyed{at / g, at % g, vs[at]})
			}
		}
		slices.SortStableFunc(aside, func(a, b keyed) int { return cmp.Or(cmp.Compare(a.group, b.group), cmp.Compare(a.idx, b.idx)) })
		out := make([]T, len(aside))
		for i := range aside {
			out[i] = aside[i].v
		}
		return out, nil
	}
	// The places of attempts not stored (yet) are closed up.
	n := 0
	for at, ok := range filled {
		if ok {
			if n != at {
				vs[n] = vs[at]
			}
			n++
		}
	}
	clear(vs[n:])
	return vs[:n], nil
}

// AttemptMetrics returns every attempt of a run with the data its metrics
// need, in the run's arm order, then task order, then attempt index.
//
// It reads the attempts through the covering index attempts_report
// (schema version 10), which holds every column it reads: at 100,000
// attempts this is most of a report's time.
func (s *Store) AttemptMetrics(ctx context.Context, runID string) ([]AttemptMetrics, error) {
	// The counts of denials and truncated turns are kept with the attempt
	// (schema version 8): a report reads one row per attempt, not every
	// tool call and turn.
	out, err := runAttempts(ctx, s, runID, metricsColumns(), func(r *attemptRow, extra *columnReader) (AttemptMetrics, error) {
		m, err := r.metrics()
		m.Denials, m.TruncatedTurns = int(extra.int64(0)), int(extra.int64(1))
		m.Verdict, m.Flags = evaluator.Verdict(extra.text(2)), splitFlags(extra.text(3))
		return m, err
	})
	if err != nil {
		return nil, fmt.Errorf("attempt metrics of run %q in %s: %w", runID, s.path, err)
	}
	return out, nil
}

// metricsColumns are the columns AttemptMetrics reads besides
// attemptColumns: the index attempts_report covers its queries.
func metricsColumns() []string {
	return []string{"a.denials", "a.truncated_turns", "a.verdict", "a.flags"}
}

// splitFlags reads attempts.flags.
func splitFlags(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// metrics converts the row. A finished attempt without a reward, which
// SaveAttempt refuses, is an error rather than an attempt that counts
// nowhere.
func (r *attemptRow) metrics() (AttemptMetrics, error) { return r.metricsIn(nil, nil) }

// metricsIn converts the row, keeping its reward and advantage in
// *reward and *adv (allocated when nil): a run's attempts keep theirs in
// two arrays rather than in 200,000 small objects.
func (r *attemptRow) metricsIn(reward *int, adv *float64) (AttemptMetrics, error) {
	m := AttemptMetrics{
		ID: r.ID, Key: AttemptKey{Arm: r.Arm, Task: r.Task, Index: r.Index},
		Status: AttemptStatus(r.Status), StopReason: r.StopReason,
		AdvantageMethod: r.Method.String,
		Turns:           r.Turns, ToolCalls: r.ToolCalls,
		PromptTokens: r.Prompt, CompletionTokens: r.Completion,
		Wall: time.Duration(r.WallMS * float64(time.Millisecond)),
		Times: Times{Model: msDuration(r.ModelMS), Tools: msDuration(r.ToolMS),
			Tests: msDuration(r.TestMS), Harness: msDuration(r.HarnessMS)},
	}
	if r.Reward.Valid {
		if reward == nil {
			reward = new(int)
		}
		*reward = int(r.Reward.Int64)
		m.Reward = reward
	} else if m.Status == StatusFinished {
		return AttemptMetrics{}, fmt.Errorf("attempt %d (%s): column attempts.reward: NULL on a finished attempt, expected 0 or 1", r.ID, m.Key)
	}
	if r.Advantage.Valid {
		if adv == nil {
			adv = new(float64)
		}
		*adv = r.Advantage.Float64
		m.Advantage = adv
	}
	return m, nil
}

// msDuration reads a milliseconds column (NULL: 0).
func msDuration(v sql.NullFloat64) time.Duration {
	return time.Duration(v.Float64 * float64(time.Millisecond))
}

// TimeSplit sums where attempts' time went, in milliseconds: the model's
// turns, the tool calls, the hidden tests and the harness's own.
type TimeSplit struct {
	ModelMS   float64 `json:"model_ms"`
	ToolMS    float64 `json:"tool_ms"`
	TestMS    float64 `json:"test_ms"`
	HarnessMS float64 `json:"harness_ms"`
}

func (t *TimeSplit) add(a Times) {
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	t.ModelMS += ms(a.Model)
	t.ToolMS += ms(a.Tools)
	t.TestMS += ms(a.Tests)
	t.HarnessMS += ms(a.Harness)
}

// Split is t in milliseconds, as a report sums it: one attempt's split.
func (t Times) Split() TimeSplit {
	var s TimeSplit
	s.add(t)
	return s
}

// Dominant names the part that took the most time ("model", "tools",
// "hidden tests" or "harness") and its share; "" when nothing was timed.
func (t TimeSplit) Dominant() (string, float64) {
	total := t.ModelMS + t.ToolMS + t.TestMS + t.HarnessMS
	if total <= 0 {
		return "", 0
	}
	parts := []struct {
		name string
		ms   float64
	}{{"model", t.ModelMS}, {"tools", t.ToolMS}, {"hidden tests", t.TestMS}, {"harness", t.HarnessMS}}
	best := parts[0]
	for _, p := range parts[1:] {
		if p.ms > best.ms {
			best = p
		}
	}
	return best.name, best.ms / total
}

// Line says where the time went, in one line: each part's share and time,
// and which dominated; "" when nothing was timed.
func (t TimeSplit) Line() string {
	name, share := t.Dominant()
	if name == "" {
		return ""
	}
	total := t.ModelMS + t.ToolMS + t.TestMS + t.HarnessMS
	part := func(label string, ms float64) string {
		return fmt.Sprintf("%s %.0f%% (%s)", label, 100*ms/total, (time.Duration(ms) * time.Millisecond).Round(100*time.Millisecond))
	}
	return fmt.Sprintf("time: %s, %s, %s, %s: the %s dominated (%.0f%%)",
		part("model", t.ModelMS), part("tools", t.ToolMS), part("hidden tests", t.TestMS), part("harness", t.HarnessMS), name, 100*share)
}

// Dist describes a sample of per-attempt values: its size, mean, extremes
// and percentiles (linear interpolation, as numpy.percentile). An empty
// sample is all zeros.
type Dist = evaluator.Summary

// AtK holds the unbiased pass@k and pass^k estimates for one k.
type AtK struct {
	// K is the number of attempts drawn.
	K int `json:"k"`
	// PassAtK is the probability that at least one of k attempts passes
	// (Chen et al., 2021), averaged over Groups; nil when no group has k
	// finished attempts.
	PassAtK *float64 `json:"pass_at_k"`
	// PassHatK is the probability that all k attempts pass (τ-bench's
	// pass^k), averaged like PassAtK.
	PassHatK *float64 `json:"pass_hat_k"`
	// Groups is how many groups (tasks under an arm) the averages are
	// over: those with at least k finished attempts.
	Groups int `json:"groups"`
	// Partial is true when some group with finished attempts had fewer
	// than k and was left out of the averages.
	Partial bool `json:"partial"`
}

// Metrics are the metrics of a set of attempts: one task under one arm
// (a group), one arm over every task, or a whole run.
//
// Only finished attempts are scored and measured: an attempt ended by an
// infrastructure failure or an interruption is counted in InfraErrors or
// Canceled and nowhere else.
type Metrics struct {
	// Arm and Task name what the metrics cover; "" for an aggregate
	// (Task is "" for an arm, both are "" for the whole run).
	Arm  string `json:"arm"`
	Task string `json:"task"`
	// Attempts counts the stored attempts, whatever their status.
	Attempts int `json:"attempts"`
	// Finished, InfraErrors and Canceled count attempts by status.
	Finished    int `json:"finished"`
	InfraErrors int `json:"infra_errors"`
	Canceled    int `json:"canceled"`
	// Passes counts finished attempts with reward 1.
	Passes int `json:"passes"`
	// PassRate is Passes / Finished, pooled over the attempts; nil when
	// nothing finished.
	PassRate *float64 `json:"pass_rate"`
	// PassRateCI95 is the 95% Wilson score interval of PassRate, [lo, hi];
	// nil when nothing finished.
	PassRateCI95 []float64 `json:"pass_rate_ci95"`
	// AtK holds pass@k and pass^k for each k of the report, averaged over
	// groups (each task weighing the same).
	AtK []AtK `json:"at_k"`
	// Turns, PromptTokens, CompletionTokens, ToolCalls and WallMS describe
	// the finished attempts: model turns, tokens summed over the turns,
	// tool calls, and the agent loop's wall time in milliseconds.
	Turns            Dist `json:"turns"`
	PromptTokens     Dist `json:"prompt_tokens"`
	CompletionTokens Dist `json:"completion_tokens"`
	ToolCalls        Dist `json:"tool_calls"`
	WallMS           Dist `json:"wall_ms"`
	// TestMS describes the finished attempts' hidden-test time (the
	// scoring runs), in milliseconds.
	TestMS Dist `json:"test_ms"`
	// Time sums where every attempt's time went (finished or not).
	Time TimeSplit `json:"time"`
	// Advantage describes the stored advantages of the finished
	// attempts; its N counts those that have one.
	Advantage Dist `json:"advantage"`
	// Denials counts the finished attempts' tool calls denied by the
	// policy; DenialsPerAttempt is Denials / Finished (nil when nothing finished).
	Denials           int      `json:"denials"`
	DenialsPerAttempt *float64 `json:"denials_per_attempt"`
	// TruncatedTurns counts the finished attempts' turns whose prompt was
	// probably cut at the context (num_ctx, or the model's context length
	// when smaller).
	TruncatedTurns int `json:"truncated_turns"`
	// PromptTokensAtLeast is true when TruncatedTurns > 0: Ollama counted
	// the prompts it kept, so PromptTokens are lower bounds of what the
	// agent sent.
	PromptTokensAtLeast bool `json:"prompt_tokens_at_least"`
	// Groups counts the groups with at least one finished attempt, and
	// ZeroVarianceGroups those whose rewards are all equal (all pass, all
	// fail, or one attempt): their advantages are 0. ZeroVarianceShare is
	// their share, nil when Groups is 0.
	Groups             int      `json:"groups"`
	ZeroVarianceGroups int      `json:"zero_variance_groups"`
	ZeroVarianceShare  *float64 `json:"zero_variance_share"`
}

// DefaultKs returns the k values a report shows for G attempts per task:
// 1, the powers of two below G, and G.
func DefaultKs(g int) []int {
	ks := []int{1}
	for k := 2; k < g; k *= 2 {
		ks = append(ks, k)
	}
	if g > 1 {
		ks = append(ks, g)
	}
	return ks
}

// group is the attempts of one task under one arm.
type group struct {
	arm, task string
	attempts  []AttemptMetrics
	// nFinished and nPasses count the attempts, once groupAttempts has
	// filled the group (a report asks for them many times).
	nFinished, nPasses int
}

// counts returns the finished attempts and the passes among them.
func (g *group) counts() (n, c int) { return g.nFinished, g.nPasses }

// finished returns the group's finished attempts, in index order.
func (g *group) finished() []AttemptMetrics {
	var out []AttemptMetrics
	for _, a := range g.attempts {
		if a.Finished() {
			out = append(out, a)
		}
	}
	return out
}

// zeroVariance reports whether the group's rewards are all equal (all
// pass, all fail, or one attempt): its advantages are 0. A group with no
// finished attempt has no rewards and is not a group of the batch.
func (g *group) zeroVariance() bool {
	n, c := g.counts()
	return n > 0 && (c == 0 || c == n)
}

// metricsOf computes the metrics of a set of groups, labelled arm and task.
func metricsOf(arm, task string, groups []*group, ks []int) (Metrics, error) {
	m := Metrics{Arm: arm, Task: task}
	n := 0
	for _, g := range groups {
		n += len(g.attempts)
	}
	values := make([]float64, 7*n)
	turns, prompt, compl, calls := values[0:0:n], values[n:n:2*n], values[2*n:2*n:3*n], values[3*n:3*n:4*n]
	wall, tests, adv := values[4*n:4*n:5*n], values[5*n:5*n:6*n], values[6*n:6*n:7*n]
	for _, g := range groups {
		for i := range g.attempts {
			a := &g.attempts[i]
			m.Attempts++
			m.Time.add(a.Times)
			switch {
			case a.Status == StatusInfraError:
				m.InfraErrors++
				continue
			case a.Status == StatusCanceled:
				m.Canceled++
				continue
			case !a.Finished():
				continue
			}
			m.Finished++
			if a.Passed() {
				m.Passes++
			}
			turns = append(turns, float64(a.Turns))
			prompt = append(prompt, float64(a.PromptTokens))
			compl = append(compl, float64(a.CompletionTokens))
			calls = append(calls, float64(a.ToolCalls))
			wall = append(wall, float64(a.Wall)/float64(time.Millisecond))
			tests = append(tests, float64(a.Times.Tests)/float64(time.Millisecond))
			if a.Advantage != nil {
				adv = append(adv, *a.Advantage)
			}
			m.Denials += a.Denials
			m.TruncatedTurns += a.TruncatedTurns
		}
		if n, _ := g.counts(); n > 0 {
			m.Groups++
		}
		if g.zeroVariance() {
			m.ZeroVarianceGroups++
		}
	}
	m.PromptTokensAtLeast = m.TruncatedTurns > 0
	m.Turns, m.PromptTokens, m.CompletionTokens = evaluator.Summarize(turns), evaluator.Summarize(prompt), evaluator.Summarize(compl)
	m.ToolCalls, m.WallMS, m.TestMS = evaluator.Summarize(calls), evaluator.Summarize(wall), evaluator.Summarize(tests)
	m.Advantage = evaluator.Summarize(adv)
	if m.Finished > 0 {
		m.PassRate = ptr(float64(m.Passes) / float64(m.Finished))
		lo, hi := evaluator.Wilson(m.Passes, m.Finished, evaluator.Z95)
		m.PassRateCI95 = []float64{lo, hi}
		m.DenialsPerAttempt = ptr(float64(m.Denials) / float64(m.Finished))
	}
	if m.Groups > 0 {
		m.ZeroVarianceShare = ptr(float64(m.ZeroVarianceGroups) / float64(m.Groups))
	}
	for _, k := range ks {
		at, err := atK(groups, k)
		if err != nil {
			return Metrics{}, err
		}
		m.AtK = append(m.AtK, at)
	}
	return m, nil
}

// atK averages pass@k and pass^k over the groups with at least k
// finished attempts.
func atK(groups []*group, k int) (AtK, error) {
	at := AtK{K: k}
	var counts []evaluator.TaskCount
	for _, g := range groups {
		n, c := g.counts()
		switch {
		case n >= k:
			counts = append(counts, evaluator.TaskCount{N: n, C: c})
		case n > 0:
			at.Partial = true
		}
	}
	at.Groups = len(counts)
	if len(counts) == 0 {
		return at, nil
	}
	pa, err := evaluator.MeanPassAtK(counts, k)
	if err != nil {
		return AtK{}, err
	}
	ph, err := evaluator.MeanPassHatK(counts, k)
	if err != nil {
		return AtK{}, err
	}
	at.PassAtK, at.PassHatK = ptr(pa), ptr(ph)
	return at, nil
}

// groupAttempts splits a run's attempts into its groups, one per arm and
// task in the run's order, including groups with no attempt yet.
// Attempts of an arm or task the run does not list are an error.
//
// In the order AttemptMetrics gives, a group's attempts are one stretch
// of attempts, and the group's slice is that stretch (the groups share
// attempts' array) rather than a copy; the attempts are never reordered.
func groupAttempts(run *Run, attempts []AttemptMetrics) ([]*group, error) {
	index := make(map[[2]string]*group, len(run.Arms)*len(run.Tasks))
	groups := make([]*group, 0, len(run.Arms)*len(run.Tasks))
	for _, arm := range run.Arms {
		for _, t := range run.Tasks {
			g := &group{arm: arm.Name, task: t.ID}
			index[[2]string{arm.Name, t.ID}] = g
			groups = append(groups, g)
		}
	}
	for i := 0; i < len(attempts); {
		a := &attempts[i]
		j := i + 1
		for j < len(attempts) && attempts[j].Key.Arm == a.Key.Arm && attempts[j].Key.Task == a.Key.Task {
			j++
		}
		g, ok := index[[2]string{a.Key.Arm, a.Key.Task}]
		if !ok {
			return nil, fmt.Errorf("attempt %d (%s): its arm or task is not in run %q", a.ID, a.Key, run.ID)
		}
		if g.attempts == nil {
			g.attempts = attempts[i:j:j]
		} else {
			g.attempts = append(g.attempts, attempts[i:j]...)
		}
		i = j
	}
	byIndex := func(x, y AttemptMetrics) int { return x.Key.Index - y.Key.Index }
	for _, g := range groups {
		if !slices.IsSortedFunc(g.attempts, byIndex) {
			g.attempts = slices.Clone(g.attempts)
			slices.SortFunc(g.attempts, byIndex)
		}
		for _, a := range g.attempts {
			if a.Finished() {
				g.nFinished++
				if a.Passed() {
					g.nPasses++
				}
			}
		}
	}
	return groups, nil
}

func ptr[T any](v T) *T { return &v }
