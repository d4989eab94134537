package results

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/benchhq/bench/bound"
	"github.com/benchhq/bench/evaluator"
)

// ReportVersion is the version of the report's JSON structure
// (docs/export.md). It changes only when a field is removed or changes
// meaning; new fields may appear without a change.
const ReportVersion = 1

// TableWidth is the width, in columns, that a table report fits in.
const TableWidth = 80

// Report is everything `bench report` shows of a run: its plan, the
// metrics per task (a group: one task under one arm), per arm and for the
// whole run, and each arm compared with the first. Its JSON encoding is a
// public, documented structure (docs/export.md).
type Report struct {
	// Version is ReportVersion.
	Version int `json:"version"`
	// Run is the run's plan and state.
	Run RunHeader `json:"run"`
	// Ks are the k of pass@k and pass^k, in increasing order; every
	// Metrics.AtK has one entry per k, in this order.
	Ks []int `json:"ks"`
	// Advantage says how the stored advantages were computed.
	Advantage AdvantageInfo `json:"advantage"`
	// Tasks holds one entry per arm and task, in the run's arm order then
	// task order; Task and Arm are both set.
	Tasks []Metrics `json:"tasks"`
	// Arms holds one entry per arm, in the run's order; Task is "".
	Arms []Metrics `json:"arms"`
	// Total covers the whole run, every arm together; Arm and Task are "".
	Total Metrics `json:"total"`
	// Comparisons compares each arm after the first with the first, in
	// the run's arm order; empty for a run of one arm.
	Comparisons []Comparison `json:"comparisons"`
	// ToolTokens is what each arm's tool definitions add to every request,
	// measured at the start of the run, in the run's arm order; empty for
	// a run stored before measurements (schema version 1).
	ToolTokens []ArmToolTokens `json:"tool_tokens"`
	// TaskServers names, per task, the MCP servers its attempts attached
	// that are not among their arm's measured tool sets: the task's own
	// ([[servers]] in task.toml). Their tokens are in no arm's ToolTokens.
	// Empty without measurements.
	TaskServers []TaskServers `json:"task_servers"`
	// Verdicts says what the rewards rest on, per arm in the run's order,
	// then (for several arms) the whole run (Arm "").
	Verdicts []VerdictSummary `json:"verdicts"`
	// HackRates are the shares of rewards of 1 on impossible tasks, per
	// arm (and the whole run), for a run that has such tasks.
	HackRates []HackRate `json:"hack_rates"`
	// VerdictWarnings warn, per comparison of arms, when some of the
	// rewards compared rest on verdicts produced in reach of the agent's
	// code.
	VerdictWarnings []string `json:"verdict_warnings"`
}

// TaskServers is a task's own MCP servers, by name.
type TaskServers struct {
	Task    string   `json:"task"`
	Servers []string `json:"servers"`
}

// ArmToolTokens is the measured prompt-token cost of one arm's tools.
type ArmToolTokens struct {
	Arm string `json:"arm"`
	// Tokens is what all the arm's tools add to each request; Share is
	// Tokens over Context.
	Tokens int     `json:"tokens"`
	NumCtx int     `json:"num_ctx"`
	Share  float64 `json:"share"`
	// ModelContext is the model's own context length (0: unknown) and
	// Context the context the server used: NumCtx, or ModelContext when
	// smaller (Ollama lowers num_ctx to it silently).
	ModelContext int `json:"model_context"`
	Context      int `json:"context"`
	// Truncated marks a measurement that reached the context: Tokens and
	// PerAttempt are lower bounds.
	Truncated bool `json:"truncated"`
	// Sets is the cost of each tool set alone: "builtin" and each MCP server.
	Sets []SetTokens `json:"sets"`
	// Tools is the cost of each tool alone, in the order offered.
	Tools []ToolTokens `json:"tools"`
	// PerAttempt is Tokens times the arm's mean turns per finished
	// attempt: what the tools cost an attempt; nil without finished attempts.
	PerAttempt *float64 `json:"per_attempt"`
}

// ToolTokens is the cost of one tool alone; Set is its tool set.
type ToolTokens struct {
	Name   string `json:"name"`
	Set    string `json:"set"`
	Tokens int    `json:"tokens"`
}

// SetTokens is the cost of one tool set alone.
type SetTokens struct {
	Name   string `json:"name"`
	Tokens int    `json:"tokens"`
}

// RunHeader is what a report shows of a run's plan and state.
type RunHeader struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Model is the Ollama model and Options the options sent with every request.
	Model   string         `json:"model"`
	Options map[string]any `json:"options"`
	Seed    int64          `json:"seed"`
	// AttemptsPerTask is G, the size of every group.
	AttemptsPerTask int    `json:"attempts_per_task"`
	Suite           string `json:"suite"`
	// Status is running, finished or interrupted.
	Status     string     `json:"status"`
	CreatedAt  time.Time  `json:"created_at"`
	FinishedAt *time.Time `json:"finished_at"`
	// BenchVersion is the version of bench that created the run.
	BenchVersion string `json:"bench_version"`
	// Arms and Tasks name the arms and tasks, in the run's order.
	Arms  []string `json:"arms"`
	Tasks []string `json:"tasks"`
	// Shard is "I/N" when the run holds only shard I of N of its plan:
	// its groups are partial and it has no advantages until the shards
	// are merged (bench merge); absent for a whole run.
	Shard string `json:"shard,omitempty"`
	// ModelDigest is what the model servers said of the weights
	// (runs.model_digest); absent when unknown.
	ModelDigest string `json:"model_digest,omitempty"`
	// Isolation is how the run's commands and hidden tests were isolated:
	// "bubblewrap VERSION", "none" (--sandbox off: unisolated, its rewards
	// are not to be trusted), or "" for a run stored before bench said.
	Isolation string `json:"isolation"`
	// ExitStatusOnly are the tasks whose tests give no per-test report:
	// their rewards rest on the exit status alone, which code the tests
	// import can forge.
	ExitStatusOnly []string `json:"exit_status_only"`
	// RewardValues counts the scored attempts whose task's own verifier
	// wrote a reward that is a fraction (a Harbor task's reward.txt or
	// reward.json): bench's reward is 1 only at 1.0, and the fraction is
	// kept in test_results.reward_value. Absent when there are none.
	RewardValues int `json:"reward_values,omitempty"`
}

// RewardValuesNote says how fractional rewards were read, as every report
// words it; "" when the run has none.
func (h RunHeader) RewardValuesNote() string {
	if h.RewardValues == 0 {
		return ""
	}
	return fmt.Sprintf("%s scored by a task's own verifier wrote a fractional reward (reward.txt or reward.json): "+
		"bench's reward is 1 only at 1.0, the fraction is kept in test_results.reward_value", plural(h.RewardValues, "attempt"))
}

// IsolationNote says how the run's commands were isolated, as every
// report words it: a warning for an unisolated run (Isolation "none")
// and for one whose isolation was not recorded ("").
func (h RunHeader) IsolationNote() string {
	switch h.Isolation {
	case "none":
		return "UNISOLATED: run with --sandbox off: the agent's commands and the hidden tests ran on the host; " +
			"an agent could reach the hidden tests or forge its reward, so these rewards are not to be trusted"
	case "":
		return "isolation not recorded (a run stored before bench 0.2): its rewards were scored in the agent's own workspace"
	}
	return "isolation " + h.Isolation
}

// maxNamed bounds the tasks a note of the report names.
const maxNamed = 10

// ExitStatusNote names the tasks whose rewards rest on the exit status
// alone, as every report words it; "" when there are none.
func (h RunHeader) ExitStatusNote() string {
	n := len(h.ExitStatusOnly)
	if n == 0 {
		return ""
	}
	names := h.ExitStatusOnly
	more := ""
	if n > maxNamed {
		names, more = names[:maxNamed], fmt.Sprintf(" and %d more (the JSON report lists them all)", n-maxNamed)
	}
	return fmt.Sprintf("rewards rest on the exit status alone for %s: %s%s (no per-test report)",
		plural(n, "task"), strings.Join(names, ", "), more)
}

// AdvantageInfo says which advantages the store holds for a run.
type AdvantageInfo struct {
	// Methods are the methods of the stored advantages, sorted; one
	// method unless something wrote advantages by hand.
	Methods []string `json:"methods"`
	// Stored counts the finished attempts with a stored advantage, and
	// Missing those without one (a run interrupted before the end has
	// none: `bench export --method` computes them).
	Stored  int `json:"stored"`
	Missing int `json:"missing"`
}

// Summary says in words which advantages the store holds.
func (a AdvantageInfo) Summary() string {
	switch {
	case a.Stored == 0 && a.Missing == 0:
		return "none (no finished attempt)"
	case a.Stored == 0:
		return fmt.Sprintf("not stored for the %d finished attempts (run not finished); bench export computes them", a.Missing)
	case a.Missing == 0:
		return fmt.Sprintf("%s, for all %d finished attempts", strings.Join(a.Methods, ", "), a.Stored)
	}
	return fmt.Sprintf("%s, for %d of %d finished attempts", strings.Join(a.Methods, ", "), a.Stored, a.Stored+a.Missing)
}

// Comparison is the paired comparison of one arm against the baseline
// (the run's first arm). Differences are the arm's minus the baseline's:
// positive means the arm did better.
type Comparison struct {
	Baseline string `json:"baseline"`
	Arm      string `json:"arm"`
	// Tasks counts the tasks compared: those with a finished attempt
	// under both arms. SkippedTasks names the others.
	Tasks        int      `json:"tasks"`
	SkippedTasks []string `json:"skipped_tasks"`
	// Diffs is each compared task's pass rates and their difference.
	Diffs []TaskDiff `json:"diffs"`
	// RateBaseline and RateArm are the mean pass rates over the compared
	// tasks, each task weighing the same; MeanDiff is RateArm - RateBaseline.
	// All three are nil when no task was compared.
	RateBaseline *float64 `json:"rate_baseline"`
	RateArm      *float64 `json:"rate_arm"`
	MeanDiff     *float64 `json:"mean_diff"`
	// MeanDiffCI is the paired bootstrap percentile interval of MeanDiff,
	// [lo, hi], at Level.
	MeanDiffCI []float64 `json:"mean_diff_ci"`
	Level      float64   `json:"level"`
	// P is the two-sided p-value of the paired sign-flip permutation test
	// of "no difference"; Exact is true when every sign flip was
	// enumerated, false when P was estimated from random flips.
	P     *float64 `json:"p"`
	Exact bool     `json:"exact"`
	// Improved, Worsened and Ties count the compared tasks whose pass
	// rate went up, down, or stayed.
	Improved int `json:"improved"`
	Worsened int `json:"worsened"`
	Ties     int `json:"ties"`
	// McNemar is the second view: attempts paired by (task, index).
	McNemar McNemar `json:"mcnemar"`
}

// TaskDiff is one task's pass rate under the baseline and the arm.
type TaskDiff struct {
	Task     string  `json:"task"`
	Baseline float64 `json:"baseline"`
	Arm      float64 `json:"arm"`
	Diff     float64 `json:"diff"`
}

// McNemar is the exact McNemar test on attempts paired by task and index
// (the same seed under both arms), both finished.
type McNemar struct {
	// Pairs counts the pairs; OnlyBaseline those where only the
	// baseline's attempt passed, OnlyArm those where only the arm's did.
	Pairs        int `json:"pairs"`
	OnlyBaseline int `json:"only_baseline"`
	OnlyArm      int `json:"only_arm"`
	// P is the two-sided exact p-value; 1 with no discordant pair.
	P float64 `json:"p"`
}

// ReportOptions tunes a report. The zero value is ready to use.
type ReportOptions struct {
	// Ks are the k of pass@k and pass^k, each between 1 and G; none (nil
	// or empty) means DefaultKs(G).
	Ks []int
}

// Report builds the report of a run from the store. With the default
// options, a stopped run's report comes from its stored summary and
// packed attempts (StoredRunSummary), without reading its attempts' rows:
// the same report, at a fraction of the cost.
func (s *Store) Report(ctx context.Context, runID string, opts ReportOptions) (*Report, error) {
	if len(opts.Ks) == 0 {
		// A summary that cannot be read is derived data lost, not the
		// run's: the report is computed from the attempts instead.
		if rep, err := s.storedReport(ctx, runID); err == nil && rep != nil {
			return rep, nil
		}
	}
	rr, err := s.ReportWithAttempts(ctx, runID, opts)
	if err != nil {
		return nil, err
	}
	return rr.Report, nil
}

// rewardValues counts the run's scored attempts whose verifier wrote a
// fractional reward. Only a run with tasks judged by a verifier of their
// own (in-process, without a per-test report: Harbor's) is asked.
func (s *Store) rewardValues(ctx context.Context, run *Run) (int, error) {
	own := false
	for _, t := range run.Tasks {
		own = own || (t.Verdict == evaluator.VerdictInProcess && t.Report == "")
	}
	if !own {
		return 0, nil
	}
	var n int
	err := s.db.GetContext(ctx, &n, `SELECT count(*) FROM attempts a JOIN test_results tr ON tr.attempt_id = a.id
		WHERE a.run_id = ? AND a.status = 'finished' AND tr.reward_value IS NOT NULL AND tr.reward_value NOT IN (0, 1)`, run.ID)
	return n, err
}

// taskServers lists, per task in the run's order, the servers its
// attempts attached that are not one of their arm's measured tool sets.
func (s *Store) taskServers(ctx context.Context, run *Run, ovs []Overhead) ([]TaskServers, error) {
	measured := map[string]map[string]bool{}
	for _, o := range ovs {
		sets := map[string]bool{}
		for _, it := range o.Items {
			if it.Kind == OverheadSet {
				sets[it.Name] = true
			}
		}
		measured[o.Arm] = sets
	}
	if len(measured) == 0 {
		return []TaskServers{}, nil
	}
	var rows []struct {
		Arm  string `db:"arm"`
		Task string `db:"task_id"`
		Name string `db:"name"`
	}
	if err := s.db.SelectContext(ctx, &rows, `SELECT DISTINCT a.arm, a.task_id, v.name
		FROM attempt_servers v JOIN attempts a ON a.id = v.attempt_id
		WHERE a.run_id = ? ORDER BY v.name`, run.ID); err != nil {
		return nil, err
	}
	own := map[string][]string{}
	for _, r := range rows {
		if sets, ok := measured[r.Arm]; ok && !sets[r.Name] && !slices.Contains(own[r.Task], r.Name) {
			own[r.Task] = append(own[r.Task], r.Name)
		}
	}
	out := []TaskServers{}
	for _, t := range run.Tasks {
		if len(own[t.ID]) > 0 {
			out = append(out, TaskServers{Task: t.ID, Servers: own[t.ID]})
		}
	}
	return out, nil
}

// setToolTokens puts the arms' measured tool overhead in the report.
func (r *Report) setToolTokens(ovs []Overhead) {
	turns := map[string]Dist{}
	for _, m := range r.Arms {
		turns[m.Arm] = m.Turns
	}
	for _, o := range ovs {
		t := ArmToolTokens{Arm: o.Arm, Tokens: o.Tokens, NumCtx: o.NumCtx, ModelContext: o.ModelContext,
			Context: o.Context(), Truncated: o.Truncated}
		if t.Context > 0 {
			t.Share = float64(o.Tokens) / float64(t.Context)
		}
		for _, it := range o.Items {
			switch it.Kind {
			case OverheadSet:
				t.Sets = append(t.Sets, SetTokens{Name: it.Name, Tokens: it.Tokens})
			case OverheadTool:
				t.Tools = append(t.Tools, ToolTokens{Name: it.Name, Set: it.Set, Tokens: it.Tokens})
			}
		}
		if d, ok := turns[o.Arm]; ok && d.N > 0 {
			v := float64(o.Tokens) * d.Mean
			t.PerAttempt = &v
		}
		r.ToolTokens = append(r.ToolTokens, t)
	}
}

// Bound is Tokens with what is known of it: at least Tokens when the
// measurement was cut.
func (t ArmToolTokens) Bound() bound.Value { return bound.Of(t.Tokens, t.Truncated) }

// toolTokens returns the measurement of an arm.
func (r *Report) toolTokens(arm string) (ArmToolTokens, bool) {
	for _, t := range r.ToolTokens {
		if t.Arm == arm {
			return t, true
		}
	}
	return ArmToolTokens{}, false
}

// BuildReport computes the report of run from its attempts (as
// AttemptMetrics returns them). Comparisons are seeded with the run's
// seed, so that one run always gives one report.
func BuildReport(run *Run, attempts []AttemptMetrics, opts ReportOptions) (*Report, error) {
	g := run.AttemptsPerTask
	ks := opts.Ks
	if len(ks) == 0 {
		ks = DefaultKs(g)
	}
	ks = slices.Clone(ks)
	slices.Sort(ks)
	ks = slices.Compact(ks)
	for _, k := range ks {
		if k < 1 || k > g {
			return nil, fmt.Errorf("k = %d: want 1 <= k <= G = %d", k, g)
		}
	}
	groups, err := groupAttempts(run, attempts)
	if err != nil {
		return nil, err
	}
	rep := &Report{Version: ReportVersion, Run: runHeader(run), Ks: ks,
		Tasks: []Metrics{}, Arms: []Metrics{}, Comparisons: []Comparison{}, ToolTokens: []ArmToolTokens{}, TaskServers: []TaskServers{}}
	methods := map[string]bool{}
	for _, a := range attempts {
		switch {
		case !a.Finished():
		case a.Advantage != nil:
			rep.Advantage.Stored++
			methods[a.AdvantageMethod] = true
		default:
			rep.Advantage.Missing++
		}
	}
	rep.Advantage.Methods = sortedKeys(methods)
	byArm := map[string][]*group{}
	for _, gr := range groups {
		byArm[gr.arm] = append(byArm[gr.arm], gr)
	}
	// The metrics of each group, of each arm, of the whole run, and the
	// comparisons do not depend on each other: they are computed at once
	// (a large run has thousands of groups), each into its own place.
	rep.Tasks = make([]Metrics, len(groups))
	rep.Arms = make([]Metrics, len(run.Arms))
	others := run.Arms[min(1, len(run.Arms)):]
	rep.Comparisons = make([]Comparison, len(others))
	var jobs []func() error
	const chunk = 512
	for start := 0; start < len(groups); start += chunk {
		jobs = append(jobs, func() error {
			for i, gr := range groups[start:min(start+chunk, len(groups))] {
				m, err := metricsOf(gr.arm, gr.task, []*group{gr}, ks)
				if err != nil {
					return err
				}
				rep.Tasks[start+i] = m
			}
			return nil
		})
	}
	for i, arm := range run.Arms {
		jobs = append(jobs, func() (err error) {
			rep.Arms[i], err = metricsOf(arm.Name, "", byArm[arm.Name], ks)
			return err
		})
	}
	jobs = append(jobs, func() (err error) {
		rep.Total, err = metricsOf("", "", groups, ks)
		return err
	})
	for i, arm := range others {
		jobs = append(jobs, func() (err error) {
			rep.Comparisons[i], err = compareArms(run.Arms[0].Name, arm.Name, byArm, uint64(run.Seed))
			return err
		})
	}
	if err := inParallel(jobs); err != nil {
		return nil, err
	}
	rep.setVerdicts(run, attempts)
	return rep, nil
}

// inParallel runs jobs on as many goroutines as there are processors and
// returns the error of the first job, in order, that failed.
func inParallel(jobs []func() error) error {
	errs := make([]error, len(jobs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(jobs)) {
		wg.Go(func() {
			for i := range next {
				errs[i] = jobs[i]()
			}
		})
	}
	for i := range jobs {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func runHeader(run *Run) RunHeader {
	h := RunHeader{
		ID: run.ID, Name: run.Name, Model: run.Model, Options: run.Options, Seed: run.Seed,
		AttemptsPerTask: run.AttemptsPerTask, Suite: run.Suite, Status: run.Status,
		CreatedAt: run.CreatedAt.UTC(), BenchVersion: run.BenchVersion,
		Arms: []string{}, Tasks: []string{}, Shard: run.Shard, ModelDigest: run.ModelDigest,
		Isolation: run.Isolation, ExitStatusOnly: []string{},
	}
	if h.Options == nil {
		h.Options = map[string]any{}
	}
	if run.FinishedAt != nil {
		t := run.FinishedAt.UTC()
		h.FinishedAt = &t
	}
	for _, a := range run.Arms {
		h.Arms = append(h.Arms, a.Name)
	}
	for _, t := range run.Tasks {
		h.Tasks = append(h.Tasks, t.ID)
		if t.ExitStatusOnly() {
			h.ExitStatusOnly = append(h.ExitStatusOnly, t.ID)
		}
	}
	return h
}

// compareArms compares arm with base task by task (evaluator.Compare) and
// attempt by attempt (McNemar).
func compareArms(base, arm string, byArm map[string][]*group, seed uint64) (Comparison, error) {
	c := Comparison{Baseline: base, Arm: arm, SkippedTasks: []string{}, Diffs: []TaskDiff{}, Level: evaluator.DefaultLevel}
	armGroups := map[string]*group{}
	for _, g := range byArm[arm] {
		armGroups[g.task] = g
	}
	var pairs []evaluator.TaskPair
	var onlyBase, onlyArm []bool
	for _, gb := range byArm[base] {
		ga := armGroups[gb.task]
		nb, cb := gb.counts()
		na, ca := 0, 0
		if ga != nil {
			na, ca = ga.counts()
		}
		if nb == 0 || na == 0 {
			c.SkippedTasks = append(c.SkippedTasks, gb.task)
			continue
		}
		pairs = append(pairs, evaluator.TaskPair{Task: gb.task, A: evaluator.TaskCount{N: nb, C: cb}, B: evaluator.TaskCount{N: na, C: ca}})
		byIndex := map[int]AttemptMetrics{}
		for _, a := range ga.attempts {
			if a.Finished() {
				byIndex[a.Key.Index] = a
			}
		}
		for _, b := range gb.attempts {
			if a, ok := byIndex[b.Key.Index]; ok && b.Finished() {
				onlyBase = append(onlyBase, b.Passed())
				onlyArm = append(onlyArm, a.Passed())
			}
		}
	}
	c.Tasks = len(pairs)
	b, d, err := evaluator.Discordant(onlyBase, onlyArm)
	if err != nil {
		return Comparison{}, err
	}
	c.McNemar = McNemar{Pairs: len(onlyBase), OnlyBaseline: b, OnlyArm: d, P: evaluator.McNemarExact(b, d)}
	if len(pairs) == 0 {
		return c, nil
	}
	cmp, err := evaluator.Compare(pairs, evaluator.CompareOptions{Seed: seed})
	if err != nil {
		return Comparison{}, fmt.Errorf("compare arm %q with %q: %w", arm, base, err)
	}
	for i, p := range pairs {
		c.Diffs = append(c.Diffs, TaskDiff{Task: p.Task, Baseline: float64(p.A.C) / float64(p.A.N),
			Arm: float64(p.B.C) / float64(p.B.N), Diff: cmp.Diffs[i]})
	}
	c.RateBaseline, c.RateArm, c.MeanDiff = ptr(cmp.RateA), ptr(cmp.RateB), ptr(cmp.MeanDiff)
	c.MeanDiffCI = []float64{cmp.Lo, cmp.Hi}
	c.Level = cmp.Level
	c.P, c.Exact = ptr(cmp.P), cmp.Exact
	c.Improved, c.Worsened = cmp.Improved, cmp.Worsened
	c.Ties = cmp.Tasks - cmp.Improved - cmp.Worsened
	return c, nil
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Format is a way to write a report.
type Format string

// The report formats.
const (
	// FormatTable is aligned text for a terminal, TableWidth columns wide.
	FormatTable Format = "table"
	// FormatJSON is the Report as indented JSON (docs/export.md).
	FormatJSON Format = "json"
	// FormatMarkdown is GitHub-flavoured Markdown tables.
	FormatMarkdown Format = "markdown"
	// FormatCSV is one CSV table: a row per task and arm, per arm, and for
	// the whole run, with each arm's comparison on its row.
	FormatCSV Format = "csv"
)

// Formats returns every report format, in a stable order.
func Formats() []Format { return []Format{FormatTable, FormatJSON, FormatMarkdown, FormatCSV} }

// ParseFormat returns the format named s; the error lists the valid names.
func ParseFormat(s string) (Format, error) {
	names := make([]string, 0, 4)
	for _, f := range Formats() {
		if string(f) == s {
			return f, nil
		}
		names = append(names, string(f))
	}
	return "", fmt.Errorf("unknown report format %q (want one of %s)", s, strings.Join(names, ", "))
}

// Write writes the report to w in format f.
func (r *Report) Write(w io.Writer, f Format) error {
	var b bytes.Buffer
	switch f {
	case FormatTable:
		r.writeText(&b, false)
	case FormatMarkdown:
		r.writeText(&b, true)
	case FormatJSON:
		enc := json.NewEncoder(&b)
		enc.SetIndent("", "  ")
		if err := enc.Encode(r); err != nil {
			return fmt.Errorf("encode report: %w", err)
		}
	case FormatCSV:
		if err := r.writeCSV(&b); err != nil {
			return err
		}
	default:
		_, err := ParseFormat(string(f))
		return err
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// atK returns m's entry for k; ok is false if the report has no such k.
func (m *Metrics) atK(k int) (AtK, bool) {
	for _, a := range m.AtK {
		if a.K == k {
			return a, true
		}
	}
	return AtK{}, false
}

// shownKs are the k whose pass@k a text table shows, the smallest and
// the largest of the report's (1 and G by default); hat is the k of its
// pass^k column, the largest.
func (r *Report) shownKs() (ks []int, hat int) {
	lo, hi := slices.Min(r.Ks), slices.Max(r.Ks)
	if lo == hi {
		return []int{lo}, hi
	}
	return []int{lo, hi}, hi
}

// writeText writes the table or Markdown form.
func (r *Report) writeText(b *bytes.Buffer, md bool) {
	r.writeHeader(b, md)
	ks, hatK := r.shownKs()
	partial := false

	// Per task. A task's pass@1 is its PASS, and its pass@G and pass^G
	// follow from PASS too (some pass, all pass): only the k between 1 and
	// G say more.
	var taskKs []int
	for _, k := range ks {
		if k > 1 && k < r.Run.AttemptsPerTask {
			taskKs = append(taskKs, k)
		}
	}
	head := []string{"TASK", "PASS"}
	if md {
		head = append([]string{"ARM"}, head...)
	}
	for _, k := range taskKs {
		head = append(head, fmt.Sprintf("P@%d", k))
	}
	showHat := hatK > 1 && hatK < r.Run.AttemptsPerTask
	if showHat {
		head = append(head, fmt.Sprintf("P^%d", hatK))
	}
	head = append(head, "TURNS", "PROMPT", "COMPL", "WALL50", "TEST50", "INFRA")
	t := &grid{head: head, left: 1, flex: []int{0}}
	if md {
		t.left, t.flex = 2, []int{1, 0}
	}
	prevArm := ""
	for i, m := range r.Tasks {
		var row []string
		if md {
			row = []string{m.Arm, m.Task}
		} else {
			// In a terminal, each arm heads its tasks: no ARM column.
			if i == 0 || m.Arm != prevArm {
				t.rows = append(t.rows, []string{"arm " + m.Arm})
			}
			row = []string{"  " + m.Task}
		}
		prevArm = m.Arm
		row = append(row, fmt.Sprintf("%d/%d", m.Passes, m.Finished))
		for _, k := range taskKs {
			row = append(row, atCell(&m, k, false, &partial))
		}
		if showHat {
			row = append(row, atCell(&m, hatK, true, &partial))
		}
		row = append(row, meanCells(&m)...)
		row = append(row, wallCell(m.WallMS, m.WallMS.P50), wallCell(m.TestMS, m.TestMS.P50), strconv.Itoa(m.InfraErrors))
		t.rows = append(t.rows, row)
	}
	section(b, md, "Per task")
	t.write(b, md)
	text := "PASS: passed/finished attempts (a task's pass@1; pass@G and pass^G follow from it). "
	if len(taskKs) > 0 || showHat {
		text += "P@k: pass@k (unbiased estimate); P^k: pass^k (all k pass). "
	}
	text += "TURNS, PROMPT, COMPL (tokens over all turns): means per finished attempt. WALL50: median wall time of " +
		"the agent (its turns and tools); TEST50: median time of the hidden tests. INFRA: infrastructure errors, never scored."
	if r.promptBounds() {
		text += " ≥: a turn was cut at the context, so Ollama counted less than was sent."
	}
	legend(b, md, text)

	arms := r.Arms
	if len(arms) > 1 {
		total := r.Total
		total.Arm = "all arms"
		arms = append(slices.Clone(arms), total)
	}

	// Per arm: outcome.
	head = []string{"ARM", "PASS", "RATE", "95% CI"}
	// Pass@1 is the pass rate, up to the tasks' weights: RATE shows it.
	armKs := slices.DeleteFunc(slices.Clone(ks), func(k int) bool { return k == 1 })
	for _, k := range armKs {
		head = append(head, fmt.Sprintf("P@%d", k))
	}
	head = append(head, fmt.Sprintf("P^%d", hatK), "0-VAR")
	t = &grid{head: head, left: 1, flex: []int{0}}
	for _, m := range arms {
		row := []string{m.Arm, fmt.Sprintf("%d/%d", m.Passes, m.Finished), pct(m.PassRate), ciCell(m.PassRateCI95)}
		for _, k := range armKs {
			row = append(row, atCell(&m, k, false, &partial))
		}
		row = append(row, atCell(&m, hatK, true, &partial), pct(m.ZeroVarianceShare))
		t.rows = append(t.rows, row)
	}
	section(b, md, "Per arm")
	t.write(b, md)
	text = "RATE: passed/finished, with its 95% Wilson interval. P@k, P^k: means over tasks. 0-VAR: groups " +
		"whose rewards are all equal (advantage 0, no training signal)."
	if partial {
		text += " *: over the tasks with at least k finished attempts only."
	}
	legend(b, md, text)

	// Per arm: cost.
	t = &grid{head: []string{"ARM", "TURNS", "PROMPT", "COMPL", "TOOLS", "DENY", "CUT", "INFRA"}, left: 1, flex: []int{0}}
	for _, m := range arms {
		row := []string{m.Arm}
		row = append(row, meanCells(&m)...)
		tok := "-"
		if tt, ok := r.toolTokens(m.Arm); ok {
			tok = tt.Bound().String()
		}
		row = append(row, tok, fixed(m.DenialsPerAttempt, 2), strconv.Itoa(m.TruncatedTurns), strconv.Itoa(m.InfraErrors))
		t.rows = append(t.rows, row)
	}
	section(b, md, "Per arm, cost")
	t.write(b, md)
	text = "TURNS, PROMPT, COMPL: means per finished attempt. TOOLS: prompt tokens that the arm's tools" +
		r.toolsCover() + " add to every request, measured at the start of the run (an MCP server that changes its tools " +
		"during an attempt sends its later turns another list: turns.tool_list_id)." + r.taskServersNote() +
		" DENY: tool calls denied by policy per attempt. CUT: turns cut at the context (num_ctx, or the " +
		"model's context length when smaller). INFRA: infrastructure errors, never scored."
	if r.promptBounds() || r.toolBounds() {
		text += " ≥: a lower bound (a prompt was cut at the context)."
	}
	legend(b, md, text)

	// Comparisons.
	if len(r.Comparisons) > 0 {
		t = &grid{head: []string{"ARM", "TASKS", "DIFF", "95% CI", "P", "+/-/=", "PAIRS", "ONLY B/A", "MCNEMAR"},
			left: 1, flex: []int{0}}
		inexact := false
		for _, c := range r.Comparisons {
			row := []string{c.Arm, strconv.Itoa(c.Tasks)}
			if c.MeanDiff == nil {
				row = append(row, "-", "-", "-", "-")
			} else {
				p := pValue(*c.P)
				if !c.Exact {
					p += "~"
					inexact = true
				}
				row = append(row, points(*c.MeanDiff)+"pp",
					"["+wholePoints(c.MeanDiffCI[0])+", "+wholePoints(c.MeanDiffCI[1])+"]", p,
					fmt.Sprintf("%d/%d/%d", c.Improved, c.Worsened, c.Ties))
			}
			row = append(row, strconv.Itoa(c.McNemar.Pairs), fmt.Sprintf("%d/%d", c.McNemar.OnlyBaseline, c.McNemar.OnlyArm),
				pValue(c.McNemar.P))
			t.rows = append(t.rows, row)
		}
		base := r.Comparisons[0].Baseline
		section(b, md, "Against "+base+", paired")
		t.write(b, md)
		text := "DIFF: mean of the per-task pass-rate differences (arm - " + base + "), in percentage points, " +
			"with its paired bootstrap 95% CI. P: sign-flip permutation test. +/-/=: tasks better, worse, tied. " +
			"MCNEMAR: the p of McNemar's exact test, which pairs attempts by task and index; ONLY B/A: pairs where only " + base + " or only the arm passed. " +
			"A P below 0.05 is unlikely to be noise."
		if inexact {
			text += " ~: estimated from random sign flips."
		}
		legend(b, md, text)
		// Cost against effect, one line per arm: what people come to measure.
		for _, c := range r.Comparisons {
			ta, okA := r.toolTokens(c.Arm)
			tb, okB := r.toolTokens(c.Baseline)
			if !okA || !okB || c.MeanDiff == nil {
				continue
			}
			// nbsp keeps "(p 1.000)" on one line when the sentence wraps.
			line := fmt.Sprintf("%s: its tools cost %s tokens a turn (%s against %s) and move the pass rate by %spp (p%s%s).",
				c.Arm, ta.Bound(), ta.Bound().Minus(tb.Bound()).Format(signedInt), c.Baseline, points(*c.MeanDiff), nbsp, pValue(*c.P))
			if md {
				b.WriteString("- ")
			}
			b.WriteString(wrap(line, TableWidth))
			b.WriteString("\n")
		}
	}

	r.writeVerdicts(b, md)

	// Advantages.
	adv := r.Advantage.Summary()
	b.WriteString("\n")
	lines := []string{"advantages: " + adv,
		fmt.Sprintf("zero-variance groups: %d of %s (%s): they carry no training signal",
			r.Total.ZeroVarianceGroups, plural(r.Total.Groups, "group"), pct(r.Total.ZeroVarianceShare))}
	if l := r.Total.Time.Line(); l != "" {
		lines = append(lines, l)
	}
	for _, l := range lines {
		if md {
			b.WriteString("- ")
		}
		b.WriteString(wrap(l, TableWidth))
		b.WriteString("\n")
	}
}

// promptBounds reports whether some prompt-token figure is a lower bound.
func (r *Report) promptBounds() bool { return r.Total.PromptTokensAtLeast }

// toolBounds reports whether some arm's tool tokens are a lower bound.
func (r *Report) toolBounds() bool {
	for _, t := range r.ToolTokens {
		if t.Truncated {
			return true
		}
	}
	return false
}

// toolsCover says what the TOOLS figures cover, " (builtin + issues)",
// per arm when arms differ: their measured tool sets.
func (r *Report) toolsCover() string {
	if len(r.ToolTokens) == 0 {
		return ""
	}
	byCover := map[string][]string{}
	var covers []string
	for _, t := range r.ToolTokens {
		var names []string
		for _, s := range t.Sets {
			names = append(names, s.Name)
		}
		c := strings.Join(names, " + ")
		if c == "" {
			c = "none"
		}
		if _, ok := byCover[c]; !ok {
			covers = append(covers, c)
		}
		byCover[c] = append(byCover[c], t.Arm)
	}
	if len(covers) == 1 {
		return " (" + covers[0] + ")"
	}
	parts := make([]string, len(covers))
	for i, c := range covers {
		parts[i] = strings.Join(byCover[c], ", ") + ": " + c
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

// taskServersNote says which servers no TOOLS figure includes: those
// tasks attach themselves, paid on top by every request of those tasks.
func (r *Report) taskServersNote() string {
	if len(r.TaskServers) == 0 {
		return ""
	}
	own := make([]string, len(r.TaskServers))
	for i, ts := range r.TaskServers {
		own[i] = ts.Task + " (" + strings.Join(ts.Servers, ", ") + ")"
	}
	return " Not included, and paid on top by those tasks' requests: the servers tasks attach themselves, " +
		strings.Join(own, ", ") + "; bench overhead --task DIR measures them."
}

// plural writes n and the word, with an s unless n is 1.
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// nbsp joins two words that wrap must not separate; it is written as a
// space.
const nbsp = "\u00a0"

func (r *Report) writeHeader(b *bytes.Buffer, md bool) {
	h := r.Run
	title := "run " + h.ID
	if h.Name != "" {
		title += " (" + h.Name + ")"
	}
	when := "created " + h.CreatedAt.Format("2006-01-02 15:04 UTC")
	if h.FinishedAt != nil {
		when += ", ended " + h.FinishedAt.Format("2006-01-02 15:04 UTC")
	}
	keys := make([]string, 0, len(h.Options))
	for k := range h.Options {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	opts := make([]string, len(keys))
	for i, k := range keys {
		v, _ := json.Marshal(h.Options[k])
		opts[i] = k + "=" + string(v)
	}
	optText := strings.Join(opts, " ")
	if optText == "" {
		optText = "(none)"
	}
	plan := fmt.Sprintf("model %s  seed %d  G=%d", h.Model, h.Seed, h.AttemptsPerTask)
	if h.Suite != "" {
		plan += "  suite " + h.Suite
	}
	lines := []string{
		plan + "  status " + h.Status,
		"options " + optText,
		fmt.Sprintf("arms (%d) %s  tasks %d", len(h.Arms), strings.Join(h.Arms, ", "), len(h.Tasks)),
		when,
	}
	lines = append(lines, h.IsolationNote())
	if l := h.ExitStatusNote(); l != "" {
		lines = append(lines, l)
	}
	if l := h.RewardValuesNote(); l != "" {
		lines = append(lines, l)
	}
	if h.Shard != "" {
		lines = append(lines, "shard "+h.Shard+" of the plan: its groups are partial and it has no advantages; "+
			"bench merge puts the shards together for the run's report")
	}
	if md {
		fmt.Fprintf(b, "# %s\n\n", mdEscape(title))
		for _, l := range lines {
			fmt.Fprintf(b, "- %s\n", mdEscape(l))
		}
		return
	}
	b.WriteString(title + "\n")
	for _, l := range lines {
		b.WriteString(wrap(l, TableWidth) + "\n")
	}
}

// section starts a table with its title.
func section(b *bytes.Buffer, md bool, title string) {
	if md {
		fmt.Fprintf(b, "\n## %s\n\n", mdEscape(title))
		return
	}
	fmt.Fprintf(b, "\n%s\n", cutMiddle(title, TableWidth))
}

// legend explains the columns of the table above it.
func legend(b *bytes.Buffer, md bool, text string) {
	if md {
		fmt.Fprintf(b, "\n%s\n", mdEscape(text))
		return
	}
	b.WriteString(wrap(text, TableWidth) + "\n")
}

// atCell formats pass@k (or pass^k when hat) of m, "-" when undefined and
// with "*" when averaged over only part of the groups.
func atCell(m *Metrics, k int, hat bool, partial *bool) string {
	at, ok := m.atK(k)
	v := at.PassAtK
	if hat {
		v = at.PassHatK
	}
	if !ok || v == nil {
		return "-"
	}
	s := pct(v)
	if at.Partial {
		*partial = true
		s += "*"
	}
	return s
}

// meanCells are the mean turns, prompt and completion tokens.
func meanCells(m *Metrics) []string {
	if m.Finished == 0 {
		return []string{"-", "-", "-"}
	}
	return []string{fmt.Sprintf("%.1f", m.Turns.Mean), m.promptKind().FormatFloat(m.PromptTokens.Mean, formatTokens),
		formatTokens(m.CompletionTokens.Mean)}
}

// promptKind says what the prompt tokens are: at least what they say
// when a turn was cut (Ollama counts what it kept).
func (m *Metrics) promptKind() bound.Kind {
	if m.PromptTokensAtLeast {
		return bound.AtLeast
	}
	return bound.Exact
}

// signedInt writes n with its sign: "+3", "-2", "0".
func signedInt(n int) string { return fmt.Sprintf("%+d", n) }

func wallCell(d Dist, ms float64) string {
	if d.N == 0 {
		return "-"
	}
	return formatWall(time.Duration(ms * float64(time.Millisecond)))
}

func pct(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100**v)
}

func fixed(v *float64, prec int) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatFloat(*v, 'f', prec, 64)
}

// ciCell formats an interval of proportions as "39–86%".
func ciCell(ci []float64) string {
	if len(ci) != 2 {
		return "-"
	}
	return fmt.Sprintf("%.0f–%.0f%%", 100*ci[0], 100*ci[1])
}

// points formats a difference of proportions in percentage points, to
// one decimal, signed.
func points(v float64) string { return signedPoints(v, 1) }

// wholePoints formats a difference of proportions in whole percentage
// points, signed: the ends of an interval.
func wholePoints(v float64) string { return signedPoints(v, 0) }

func signedPoints(v float64, prec int) string {
	s := strconv.FormatFloat(100*v, 'f', prec, 64)
	if strings.Trim(s, "-0.") == "" {
		return strings.TrimPrefix(s, "-")
	}
	if v > 0 {
		s = "+" + s
	}
	return s
}

func pValue(p float64) string {
	if p < 0.001 {
		return "<0.001"
	}
	return strconv.FormatFloat(p, 'f', 3, 64)
}

// wrap breaks text wider than width columns into lines at spaces,
// indenting continuation lines by two.
func wrap(text string, width int) string {
	if utf8.RuneCountInString(text) <= width {
		return strings.ReplaceAll(text, nbsp, " ")
	}
	var out strings.Builder
	line := 0
	words := strings.FieldsFunc(text, func(r rune) bool { return r == ' ' || r == '\n' || r == '\t' })
	for i, w := range words {
		if utf8.RuneCountInString(w) > width-2 {
			w = cutMiddle(w, width-2) // a word that no line holds
		}
		n := utf8.RuneCountInString(w)
		switch {
		case i == 0:
		case line+1+n > width:
			out.WriteString("\n  ")
			line = 2
		default:
			out.WriteString(" ")
			line++
		}
		out.WriteString(w)
		line += n
	}
	return strings.ReplaceAll(out.String(), nbsp, " ")
}

var mdReplacer = strings.NewReplacer(`\`, `\\`, `|`, `\|`, `*`, `\*`, `_`, `\_`, "`", "\\`", "<", "&lt;", ">", "&gt;")

func mdEscape(s string) string { return mdReplacer.Replace(s) }

// grid is a table of cells: the first left columns are names, aligned
// left; the others are numbers, aligned right.
type grid struct {
	head []string
	rows [][]string
	left int
	// flex lists the name columns that are cut, in this order, when the
	// table is wider than TableWidth.
	flex []int
	// A row of one cell is a heading (see heading).
}

const (
	gridGap      = 2
	minNameWidth = 8
)

func (g *grid) write(b *bytes.Buffer, md bool) {
	if md {
		g.markdown(b)
		return
	}
	widths := make([]int, len(g.head))
	for _, row := range append([][]string{g.head}, g.rows...) {
		if g.heading(row) {
			continue
		}
		for c, cell := range row {
			widths[c] = max(widths[c], utf8.RuneCountInString(cell))
		}
	}
	total := gridGap * (len(widths) - 1)
	for _, w := range widths {
		total += w
	}
	// Narrow the widest name column, one column at a time, until the
	// table fits.
	for total > TableWidth {
		widest := -1
		for _, c := range g.flex {
			if widths[c] > max(minNameWidth, utf8.RuneCountInString(g.head[c])) && (widest < 0 || widths[c] > widths[widest]) {
				widest = c
			}
		}
		if widest < 0 {
			break
		}
		widths[widest]--
		total--
	}
	for _, row := range append([][]string{g.head}, g.rows...) {
		if g.heading(row) {
			b.WriteString(cutMiddle(row[0], TableWidth) + "\n")
			continue
		}
		var line strings.Builder
		for c, cell := range row {
			if c > 0 {
				line.WriteString(strings.Repeat(" ", gridGap))
			}
			if c < g.left {
				cell = cutMiddle(cell, widths[c])
			}
			pad := strings.Repeat(" ", widths[c]-utf8.RuneCountInString(cell))
			if c < g.left {
				line.WriteString(cell + pad)
			} else {
				line.WriteString(pad + cell)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
}

// heading reports whether a row is a heading over the rows below it (one
// cell, written across the columns), not a row of cells.
func (g *grid) heading(row []string) bool { return len(row) == 1 && len(g.head) > 1 }

// cutMiddle shortens s to n runes by cutting out its middle, marked with
// an ellipsis: names that differ only at the end stay apart.
func cutMiddle(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	tail := (n - 1) / 2
	return string(r[:n-1-tail]) + "…" + string(r[len(r)-tail:])
}

func (g *grid) markdown(b *bytes.Buffer) {
	row := func(cells []string) {
		b.WriteString("|")
		for _, c := range cells {
			b.WriteString(" " + mdEscape(c) + " |")
		}
		b.WriteString("\n")
	}
	row(g.head)
	b.WriteString("|")
	for c := range g.head {
		if c < g.left {
			b.WriteString(" --- |")
		} else {
			b.WriteString(" ---: |")
		}
	}
	b.WriteString("\n")
	for _, r := range g.rows {
		row(r)
	}
}

// writeCSV writes one table: a row per group (level "task"), per arm
// (level "arm") and for the run (level "run"). An arm's row carries its
// comparison with the baseline.
func (r *Report) writeCSV(b *bytes.Buffer) error {
	head := []string{"level", "arm", "task", "attempts", "finished", "infra_errors", "canceled", "passes",
		"pass_rate", "pass_rate_ci95_lo", "pass_rate_ci95_hi"}
	for _, k := range r.Ks {
		head = append(head, fmt.Sprintf("pass_at_%d", k))
	}
	for _, k := range r.Ks {
		head = append(head, fmt.Sprintf("pass_hat_%d", k))
	}
	for _, d := range []string{"turns", "prompt_tokens", "completion_tokens", "tool_calls", "wall_ms"} {
		head = append(head, d+"_mean", d+"_p50", d+"_p90", d+"_p99")
	}
	head = append(head, "denials", "denials_per_attempt", "truncated_turns", "groups", "zero_variance_groups",
		"zero_variance_share", "baseline", "compared_tasks", "mean_diff", "mean_diff_ci_lo", "mean_diff_ci_hi",
		"p_sign_flip", "p_exact", "mcnemar_pairs", "mcnemar_only_baseline", "mcnemar_only_arm", "p_mcnemar", "tool_tokens",
		"test_ms_mean", "test_ms_p50", "isolation")
	w := csv.NewWriter(b)
	if err := w.Write(head); err != nil {
		return fmt.Errorf("write report csv: %w", err)
	}
	cmps := map[string]Comparison{}
	for _, c := range r.Comparisons {
		cmps[c.Arm] = c
	}
	type csvRow struct {
		level string
		m     Metrics
	}
	rows := make([]csvRow, 0, len(r.Tasks)+len(r.Arms)+1)
	for _, m := range r.Tasks {
		rows = append(rows, csvRow{"task", m})
	}
	for _, m := range r.Arms {
		rows = append(rows, csvRow{"arm", m})
	}
	rows = append(rows, csvRow{"run", r.Total})
	for _, row := range rows {
		m := row.m
		rec := []string{row.level, m.Arm, m.Task, itoa(m.Attempts), itoa(m.Finished), itoa(m.InfraErrors),
			itoa(m.Canceled), itoa(m.Passes), num(m.PassRate)}
		if len(m.PassRateCI95) == 2 {
			rec = append(rec, ftoa(m.PassRateCI95[0]), ftoa(m.PassRateCI95[1]))
		} else {
			rec = append(rec, "", "")
		}
		for _, a := range m.AtK {
			rec = append(rec, num(a.PassAtK))
		}
		for _, a := range m.AtK {
			rec = append(rec, num(a.PassHatK))
		}
		for _, d := range []Dist{m.Turns, m.PromptTokens, m.CompletionTokens, m.ToolCalls, m.WallMS} {
			if d.N == 0 {
				rec = append(rec, "", "", "", "")
			} else {
				rec = append(rec, ftoa(d.Mean), ftoa(d.P50), ftoa(d.P90), ftoa(d.P99))
			}
		}
		rec = append(rec, itoa(m.Denials), num(m.DenialsPerAttempt), itoa(m.TruncatedTurns), itoa(m.Groups),
			itoa(m.ZeroVarianceGroups), num(m.ZeroVarianceShare))
		c, ok := cmps[m.Arm]
		switch {
		case row.level != "arm" || !ok:
			rec = append(rec, make([]string, 11)...)
		default:
			rec = append(rec, c.Baseline, itoa(c.Tasks), num(c.MeanDiff))
			if c.MeanDiff != nil {
				rec = append(rec, ftoa(c.MeanDiffCI[0]), ftoa(c.MeanDiffCI[1]), num(c.P), strconv.FormatBool(c.Exact))
			} else {
				rec = append(rec, "", "", "", "")
			}
			rec = append(rec, itoa(c.McNemar.Pairs), itoa(c.McNemar.OnlyBaseline), itoa(c.McNemar.OnlyArm), ftoa(c.McNemar.P))
		}
		if tt, ok := r.toolTokens(m.Arm); ok && row.level == "arm" {
			rec = append(rec, itoa(tt.Tokens))
		} else {
			rec = append(rec, "")
		}
		if m.TestMS.N == 0 {
			rec = append(rec, "", "")
		} else {
			rec = append(rec, ftoa(m.TestMS.Mean), ftoa(m.TestMS.P50))
		}
		// Every row says it: a row read alone must not pass for isolated.
		rec = append(rec, r.Run.Isolation)
		if err := w.Write(rec); err != nil {
			return fmt.Errorf("write report csv: %w", err)
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return fmt.Errorf("write report csv: %w", err)
	}
	return nil
}

func itoa(n int) string { return strconv.Itoa(n) }

func ftoa(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func num(v *float64) string {
	if v == nil {
		return ""
	}
	return ftoa(*v)
}

func formatTokens(v float64) string {
	switch {
	case v < 10_000:
		return fmt.Sprintf("%.0f", v)
	case v < 1_000_000:
		return fmt.Sprintf("%.1fk", v/1_000)
	default:
		return fmt.Sprintf("%.2fM", v/1_000_000)
	}
}

func formatWall(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		s := int(math.Round(d.Seconds()))
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	default:
		m := int(math.Round(d.Minutes()))
		return fmt.Sprintf("%dh%02dm", m/60, m%60)
	}
}
