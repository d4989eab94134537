package results

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"

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

// AttemptMetrics returns every attempt of a run with the data its metrics
// need, in the run's arm order, then task order, then attempt index.
//
// It reads the attempts through the covering index attempts_metrics and
// counts denials and cut turns with the partial indexes of migration 3,
// one grouped query each rather than a subquery per attempt: at 100,000
// attempts this is what a report's time goes to.
func (s *Store) AttemptMetrics(ctx context.Context, runID string) ([]AttemptMetrics, error) {
	out, err := s.attemptMetrics(ctx, runID)
	if err != nil {
		return nil, fmt.Errorf("attempt metrics of run %q in %s: %w", runID, s.path, err)
	}
	return out, nil
}

func (s *Store) attemptMetrics(ctx context.Context, runID string) ([]AttemptMetrics, error) {
	var names []nameIdx
	if err := s.db.SelectContext(ctx, &names, `SELECT 'a' AS kind, name, idx FROM arms WHERE run_id = ?
		UNION ALL SELECT 't', id, idx FROM tasks WHERE run_id = ?`, runID, runID); err != nil {
		return nil, fmt.Errorf("arms and tasks: %w", err)
	}
	// The arms in their order, and each task's place in the run's order.
	slices.SortStableFunc(names, func(x, y nameIdx) int { return x.Idx - y.Idx })
	var arms []string
	tasks := map[string]int{}
	for _, n := range names {
		if n.Kind == "a" {
			arms = append(arms, n.Name)
		}
	}
	for _, n := range names {
		if n.Kind == "t" {
			tasks[n.Name] = len(tasks)
		}
	}
	// One query per arm and one per count, at once: each reads its own
	// part of the covering index on its own connection.
	perArm := make([][]AttemptMetrics, len(arms))
	var denials, cut map[int64]int
	g, gctx := errgroup.WithContext(ctx)
	for i, arm := range arms {
		g.Go(func() error {
			var err error
			perArm[i], err = s.armAttempts(gctx, runID, arm)
			return err
		})
	}
	counts := func(dst *map[int64]int, query string) func() error {
		return func() error {
			rows, err := s.db.QueryContext(gctx, query, runID, runID)
			if err != nil {
				return err
			}
			defer rows.Close()
			m := map[int64]int{}
			for rows.Next() {
				var id int64
				var n int
				if err := rows.Scan(&id, &n); err != nil {
					return err
				}
				m[id] = n
			}
			*dst = m
			return rows.Err()
		}
	}
	// Over the range of the run's attempt ids: the partial index holds
	// few entries, and an id of another run in the range is never looked up.
	const idRange = `attempt_id BETWEEN (SELECT min(id) FROM attempts WHERE run_id = ?)
		AND (SELECT max(id) FROM attempts WHERE run_id = ?)`
	g.Go(counts(&denials, `SELECT attempt_id, count(*) FROM tool_calls WHERE decision = 'deny' AND `+idRange+` GROUP BY attempt_id`))
	g.Go(counts(&cut, `SELECT attempt_id, count(*) FROM turns WHERE truncated = 1 AND `+idRange+` GROUP BY attempt_id`))
	if err := g.Wait(); err != nil {
		return nil, err
	}
	for i := range perArm {
		for j := range perArm[i] {
			a := &perArm[i][j]
			a.Denials, a.TruncatedTurns = denials[a.ID], cut[a.ID]
		}
	}
	// The run's order: arm by arm, then each arm's attempts (read in
	// task id and index order) placed task by task in the run's task
	// order, a counting sort. An attempt of a task the run does not list
	// (which the foreign keys forbid) is left out, as a join would.
	total := 0
	for _, as := range perArm {
		total += len(as)
	}
	out := make([]AttemptMetrics, 0, total)
	for _, as := range perArm {
		start := make([]int, len(tasks)+1)
		for _, a := range as {
			if t, ok := tasks[a.Key.Task]; ok {
				start[t+1]++
			}
		}
		for t := range len(tasks) {
			start[t+1] += start[t]
		}
		placed := make([]AttemptMetrics, start[len(tasks)])
		for _, a := range as {
			if t, ok := tasks[a.Key.Task]; ok {
				placed[start[t]] = a
				start[t]++
			}
		}
		out = append(out, placed...)
	}
	return out, nil
}

// nameIdx is an arm's or a task's name and place in its run.
type nameIdx struct {
	Kind string `db:"kind"`
	Name string `db:"name"`
	Idx  int    `db:"idx"`
}

// armAttempts reads the attempts of one arm of a run, in task id and
// index order.
func (s *Store) armAttempts(ctx context.Context, runID, arm string) ([]AttemptMetrics, error) {
	var n int
	if err := s.db.GetContext(ctx, &n, `SELECT count(*) FROM attempts WHERE run_id = ? AND arm = ?`, runID, arm); err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT id, task_id, idx, status, stop_reason,
			reward, advantage, advantage_method, turns, tool_calls,
			prompt_tokens, completion_tokens, wall_ms, model_ms, tool_ms, test_ms, harness_ms
		FROM attempts WHERE run_id = ? AND arm = ? ORDER BY task_id, idx`, runID, arm)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	// Task, status and stop names repeat: keep one copy of each.
	intern := map[string]string{}
	one := func(s string) string {
		if v, ok := intern[s]; ok {
			return v
		}
		intern[s] = s
		return s
	}
	out := make([]AttemptMetrics, 0, n)
	rewards, advs := make([]int, n), make([]float64, n)
	r := attemptRow{Arm: arm}
	for rows.Next() {
		if err := rows.Scan(&r.ID, &r.Task, &r.Index, &r.Status, &r.StopReason, &r.Reward, &r.Advantage,
			&r.Method, &r.Turns, &r.ToolCalls, &r.Prompt, &r.Completion, &r.WallMS,
			&r.ModelMS, &r.ToolMS, &r.TestMS, &r.HarnessMS); err != nil {
			return nil, err
		}
		r.Task, r.Status, r.StopReason, r.Method.String = one(r.Task), one(r.Status), one(r.StopReason), one(r.Method.String)
		var reward *int
		var adv *float64
		if i := len(out); i < n {
			reward, adv = &rewards[i], &advs[i]
		}
		m, err := r.metricsIn(reward, adv)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
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
	var turns, prompt, compl, calls, wall, tests, adv []float64
	for _, g := range groups {
		for _, a := range g.attempts {
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
func groupAttempts(run *Run, attempts []AttemptMetrics) ([]*group, error) {
	index := map[[2]string]*group{}
	var groups []*group
	for _, arm := range run.Arms {
		for _, t := range run.Tasks {
			g := &group{arm: arm.Name, task: t.ID}
			index[[2]string{arm.Name, t.ID}] = g
			groups = append(groups, g)
		}
	}
	for _, a := range attempts {
		g, ok := index[[2]string{a.Key.Arm, a.Key.Task}]
		if !ok {
			return nil, fmt.Errorf("attempt %d (%s): its arm or task is not in run %q", a.ID, a.Key, run.ID)
		}
		g.attempts = append(g.attempts, a)
	}
	for _, g := range groups {
		slices.SortFunc(g.attempts, func(x, y AttemptMetrics) int { return x.Key.Index - y.Key.Index })
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
