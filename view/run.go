package view

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/benchhq/bench/results"
)

// tasksPerPage bounds the rows of a run page's grid; the standalone file
// has them all.
const tasksPerPage = 100

// runBody is the run page: the report's numbers, the plots, and the task
// × arm grid of attempts.
type runBody struct {
	Run    *results.Run
	Report *results.Report
	Filter filter
	Query  url.Values
	// Arms are the per-arm rows of the report that the filter shows,
	// Total the whole run's.
	Arms  []armRow
	Total results.Metrics
	// Lines are Arms and, for more than one arm, the total.
	Lines []armRow
	// AtK are the k of the per-arm pass@k columns (1 is the pass rate).
	AtK           []int
	HatK          int
	Comparisons   []results.Comparison
	AdvantageNote string
	Plots         []plot
	Grid          []gridRow
	// TaskRows are the groups of the grid's tasks, task by task.
	TaskRows []results.Metrics
	GridArms []armRow
	Pages    pager
	// Shown and Matched count the attempts: those the filter keeps
	// (outcome, stop reason included) of those stored.
	Matched, Stored int
	Form            filterForm
	Standalone      bool
	// ExitOnly marks the tasks whose rewards rest on the exit status
	// alone (Report.Run.ExitStatusOnly).
	ExitOnly map[string]bool
	// Time is where the time of the shown arms' attempts went, and the
	// whole run's; TimeBar draws it and TimeLine says it as bench report
	// does.
	Time     []timeView
	TimeBar  template.HTML
	TimeLine string
}

// armRow is one arm's line: its metrics and what else the report holds
// of it, with what the line's template needs of the page.
type armRow struct {
	M     results.Metrics
	Color string
	Cmp   *results.Comparison
	Tools *results.ArmToolTokens
	// Total marks the line of every arm together.
	Total      bool
	RunID      string
	AtK        []int
	HatK       int
	Standalone bool
}

// gridRow is one task of the grid: a cell per arm, and its pass-rate
// difference against the first arm for each other arm.
type gridRow struct {
	Task  string
	Cells []gridCell
	Diffs []*results.TaskDiff
}

// gridCell is one group (task × arm): its metrics and a mark per attempt.
type gridCell struct {
	Arm   string
	M     *results.Metrics
	Marks template.HTML
}

// mark is one attempt in the grid, or a planned attempt not stored yet
// (ID 0).
type mark struct {
	ID    int64
	Class string
	Title string
	// Dim marks an attempt the outcome or stop filter leaves out.
	Dim bool
}

// marksHTML writes marks as HTML, each linked to its attempt unless
// static: written here rather than by a template, because a run page
// holds thousands of them.
func marksHTML(marks []mark, static bool) template.HTML {
	var b strings.Builder
	for _, m := range marks {
		dim := ""
		if m.Dim {
			dim = " dim"
		}
		if m.ID == 0 || static {
			fmt.Fprintf(&b, `<span class="m %s%s" title="%s"></span>`, esc(m.Class), dim, esc(m.Title))
			continue
		}
		fmt.Fprintf(&b, `<a class="m %s%s" href="/attempts/%d" title="%s"></a>`, esc(m.Class), dim, m.ID, esc(m.Title))
	}
	// Every value went through esc or is a number.
	return template.HTML(b.String())
}

// pager links the pages of a long list.
type pager struct {
	Page, Pages int
	Prev, Next  string
	First, Last int
	Total       int
	What        string
}

func newPager(path string, f filter, total, per int, what string) pager {
	p := pager{Page: f.Page, Pages: max(1, (total+per-1)/per), Total: total, What: what}
	p.Page = min(p.Page, p.Pages)
	p.First, p.Last = (p.Page-1)*per, min(p.Page*per, total)
	if p.Page > 1 {
		p.Prev = withQuery(path, f.withPage(p.Page-1))
	}
	if p.Page < p.Pages {
		p.Next = withQuery(path, f.withPage(p.Page+1))
	}
	return p
}

func (s *Server) runPage(w *page, r *http.Request, store *results.Store) error {
	run, sum, err := s.reports.summary(r.Context(), store, r.PathValue("run"))
	if err != nil {
		return err
	}
	f, err := parseFilter(r.URL.Query(), run, sum.StopReasons())
	if err != nil {
		return err
	}
	body, err := newRunBody(r.Context(), storeSource(store, run, sum), f, false)
	if err != nil {
		return err
	}
	return s.render(w, "run", "Run "+run.ID, body)
}

// runSource is what a run page is laid out from: the run, its summary,
// and how to read the attempts of some of its tasks and count those a
// filter keeps. A page reads only the attempts of the tasks it shows.
type runSource struct {
	run *results.Run
	sum *results.RunSummary
	// attempts returns the attempts of the tasks named, in arm, task,
	// index order.
	attempts func(ctx context.Context, tasks []string) ([]results.AttemptMetrics, error)
	// count counts the attempts that f keeps.
	count func(ctx context.Context, f results.AttemptFilter) (int, error)
}

// storeSource reads a run's attempts from the store, page by page.
func storeSource(store *results.Store, run *results.Run, sum *results.RunSummary) runSource {
	return runSource{run: run, sum: sum,
		attempts: func(ctx context.Context, tasks []string) ([]results.AttemptMetrics, error) {
			return store.TaskAttempts(ctx, run, tasks)
		},
		count: func(ctx context.Context, f results.AttemptFilter) (int, error) {
			return store.CountAttempts(ctx, run, f)
		}}
}

// memorySource lays out a run page from a whole report and its attempts
// (the standalone HTML report, which shows every task).
func memorySource(rr *results.RunReport) runSource {
	return runSource{run: rr.Run, sum: results.Summarize(rr),
		attempts: func(_ context.Context, tasks []string) ([]results.AttemptMetrics, error) {
			var out []results.AttemptMetrics
			for _, a := range rr.Attempts {
				if slices.Contains(tasks, a.Key.Task) {
					out = append(out, a)
				}
			}
			return out, nil
		},
		count: func(_ context.Context, f results.AttemptFilter) (int, error) {
			n := 0
			for _, a := range rr.Attempts {
				if (len(f.Arms) == 0 || slices.Contains(f.Arms, a.Key.Arm)) && (len(f.Tasks) == 0 || slices.Contains(f.Tasks, a.Key.Task)) &&
					(len(f.Outcomes) == 0 || slices.Contains(f.Outcomes, outcomeOf(a.Status, a.Reward))) &&
					(len(f.StopReasons) == 0 || slices.Contains(f.StopReasons, a.StopReason)) {
					n++
				}
			}
			return n, nil
		}}
}

// newRunBody lays out a run page from its source: the whole run's
// numbers from the summary, the grid from the attempts of its page's
// tasks.
func newRunBody(ctx context.Context, src runSource, f filter, standalone bool) (*runBody, error) {
	run, rep := src.run, src.sum.Report
	b := &runBody{Run: run, Report: rep, Filter: f, Query: f.values(), Total: rep.Total,
		Stored: src.sum.Stored, Standalone: standalone,
		Form: newFilterForm("/runs/"+url.PathEscape(run.ID), run, src.sum.StopReasons(), f)}
	armIndex := map[string]int{}
	for i, a := range run.Arms {
		armIndex[a.Name] = i
	}
	for _, k := range rep.Ks {
		if k != 1 {
			b.AtK = append(b.AtK, k)
		}
	}
	b.HatK = rep.Ks[len(rep.Ks)-1]
	cmps := map[string]*results.Comparison{}
	for i := range rep.Comparisons {
		c := &rep.Comparisons[i]
		cmps[c.Arm] = c
		if f.ArmShown(c.Arm) {
			b.Comparisons = append(b.Comparisons, *c)
		}
	}
	tools := map[string]*results.ArmToolTokens{}
	for i := range rep.ToolTokens {
		tools[rep.ToolTokens[i].Arm] = &rep.ToolTokens[i]
	}
	for _, m := range rep.Arms {
		row := armRow{M: m, Color: armColor(armIndex[m.Arm]), Cmp: cmps[m.Arm], Tools: tools[m.Arm],
			RunID: run.ID, AtK: b.AtK, HatK: b.HatK, Standalone: standalone}
		if f.ArmShown(m.Arm) {
			b.Arms = append(b.Arms, row)
			b.GridArms = append(b.GridArms, row)
		}
	}
	b.Lines = b.Arms
	if len(rep.Arms) > 1 {
		b.Lines = append(slices.Clone(b.Arms), armRow{M: rep.Total, Total: true, RunID: run.ID, AtK: b.AtK, HatK: b.HatK, Standalone: standalone})
	}
	b.AdvantageNote = rep.Advantage.Summary()
	b.ExitOnly = map[string]bool{}
	for _, t := range rep.Run.ExitStatusOnly {
		b.ExitOnly[t] = true
	}
	for _, a := range b.Arms {
		b.Time = append(b.Time, newTimeView(a.M.Arm, a.M.Time))
	}
	if len(rep.Arms) > 1 {
		b.Time = append(b.Time, newTimeView("all arms", rep.Total.Time))
	}
	if v := newTimeView("", rep.Total.Time); v.Known() {
		b.TimeBar = timeBars(b.Time, plotWidth+160, "where the attempts' time went, per arm")
		b.TimeLine = rep.Total.Time.Line()
	}
	b.Plots = runPlots(src.sum, armIndex)
	if f.Active() {
		n, ok := f.countIn(src.sum)
		if !ok {
			var err error
			if n, err = src.count(ctx, f.query()); err != nil {
				return nil, err
			}
		}
		b.Matched = n
	} else {
		b.Matched = b.Stored
	}
	if err := b.grid(ctx, src, f); err != nil {
		return nil, err
	}
	return b, nil
}

// grid lays out the task × arm grid for the tasks of the filter's page,
// from their attempts alone: their groups' metrics and differences are
// computed here (results.TaskRows), the same as the whole run's report
// gives them.
func (b *runBody) grid(ctx context.Context, src runSource, f filter) error {
	run := src.run
	var tasks []string
	for _, t := range run.Tasks {
		if f.TaskShown(t.ID) {
			tasks = append(tasks, t.ID)
		}
	}
	if !b.Standalone {
		b.Pages = newPager("/runs/"+url.PathEscape(run.ID), f, len(tasks), tasksPerPage, "tasks")
		tasks = tasks[b.Pages.First:b.Pages.Last]
	}
	attempts, err := src.attempts(ctx, tasks)
	if err != nil {
		return err
	}
	// The page's tasks as a run of their own: their groups and per-task
	// differences are those of the whole run's report.
	sub := *run
	sub.Tasks = slices.DeleteFunc(slices.Clone(run.Tasks), func(t results.TaskInfo) bool { return !slices.Contains(tasks, t.ID) })
	rows, armDiffs, err := results.TaskRows(&sub, attempts, b.Report.Ks)
	if err != nil {
		return fmt.Errorf("the tasks of page %d of run %q: %w", b.Pages.Page, run.ID, err)
	}
	groups := map[[2]string]*results.Metrics{}
	for i := range rows {
		m := &rows[i]
		groups[[2]string{m.Arm, m.Task}] = m
	}
	diffs := map[[2]string]*results.TaskDiff{}
	for arm, ds := range armDiffs {
		for i := range ds {
			diffs[[2]string{arm, ds[i].Task}] = &ds[i]
		}
	}
	// The attempts come in arm, task, index order: a group's are one
	// stretch of them.
	byGroup := map[[2]string][]results.AttemptMetrics{}
	for i := 0; i < len(attempts); {
		j := i
		for j < len(attempts) && attempts[j].Key.Arm == attempts[i].Key.Arm && attempts[j].Key.Task == attempts[i].Key.Task {
			j++
		}
		byGroup[[2]string{attempts[i].Key.Arm, attempts[i].Key.Task}] = attempts[i:j:j]
		i = j
	}
	g := run.AttemptsPerTask
	for _, task := range tasks {
		row := gridRow{Task: task}
		for _, arm := range b.GridArms {
			cell := gridCell{Arm: arm.M.Arm, M: groups[[2]string{arm.M.Arm, task}]}
			if cell.M != nil {
				b.TaskRows = append(b.TaskRows, *cell.M)
			}
			have := map[int]bool{}
			var marks []mark
			for _, a := range byGroup[[2]string{arm.M.Arm, task}] {
				have[a.Key.Index] = true
				marks = append(marks, mark{ID: a.ID, Class: outcomeOf(a.Status, a.Reward), Title: markText(a),
					Dim: f.MarksOnly() && !f.match(a)})
			}
			for i := range g {
				if !have[i] {
					marks = append(marks, mark{Class: "missing", Title: fmt.Sprintf("#%d not run yet", i), Dim: f.MarksOnly()})
				}
			}
			cell.Marks = marksHTML(marks, b.Standalone)
			row.Cells = append(row.Cells, cell)
		}
		for _, arm := range b.GridArms[min(1, len(b.GridArms)):] {
			row.Diffs = append(row.Diffs, diffs[[2]string{arm.M.Arm, task}])
		}
		b.Grid = append(b.Grid, row)
	}
	return nil
}

// runPlots draws the run's figures: pass rates, tool tokens, and the
// distributions of advantages, turns and tokens per attempt (the
// summary's histograms).
func runPlots(sum *results.RunSummary, armIndex map[string]int) []plot {
	rep := sum.Report
	plots := []plot{passRatePlot(rep, armIndex)}
	plots = append(plots, toolTokenPlots(rep)...)
	type metric struct {
		name, id, title, caption string
		dist                     func(m results.Metrics) results.Dist
		format                   func(float64) string
	}
	metrics := []metric{
		{"advantage", "plot-advantage", "Advantages", "The stored group-relative advantage of each finished attempt; a zero-variance group gives 0 to all its attempts.",
			func(m results.Metrics) results.Dist { return m.Advantage }, func(v float64) string { return fixed(v, 2) }},
		{"turns", "plot-turns", "Turns per attempt", "Model turns of each finished attempt.",
			func(m results.Metrics) results.Dist { return m.Turns }, func(v float64) string { return fixed(v, 0) }},
		{"prompt_tokens", "plot-prompt", "Prompt tokens per attempt", "Prompt tokens summed over the turns of each finished attempt (every turn's whole prompt).",
			func(m results.Metrics) results.Dist { return m.PromptTokens }, tokens},
		{"completion_tokens", "plot-completion", "Completion tokens per attempt", "Completion tokens summed over the turns of each finished attempt.",
			func(m results.Metrics) results.Dist { return m.CompletionTokens }, tokens},
	}
	for _, mt := range metrics {
		var ss []series
		for _, m := range rep.Arms {
			d := mt.dist(m)
			note := "none"
			if d.N > 0 {
				note = fmt.Sprintf("n %d, mean %s, p50 %s, p90 %s, max %s", d.N, mt.format(d.Mean), mt.format(d.P50), mt.format(d.P90), mt.format(d.Max))
			}
			ss = append(ss, series{Arm: m.Arm, Color: armColor(armIndex[m.Arm]), Note: note})
		}
		h, _ := sum.Histogram(mt.name)
		plots = append(plots, histogram(mt.id, mt.title, mt.caption, h, ss, mt.format))
	}
	return plots
}

// attemptsPerPage bounds the rows of a list of attempts.
const attemptsPerPage = 200

// attemptsBody is the list of a run's attempts that a filter keeps.
type attemptsBody struct {
	Run      *results.Run
	Filter   filter
	Query    url.Values
	Attempts []results.AttemptMetrics
	Pages    pager
	Stored   int
	Form     filterForm
}

func (s *Server) attemptsPage(w *page, r *http.Request, store *results.Store) error {
	ctx := r.Context()
	run, sum, err := s.reports.summary(ctx, store, r.PathValue("run"))
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f, err := parseFilter(q, run, sum.StopReasons(), "after", "before")
	if err != nil {
		return err
	}
	var after, before int64
	for _, p := range []struct {
		key string
		to  *int64
	}{{"after", &after}, {"before", &before}} {
		if v := q.Get(p.key); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 1 {
				return badRequest("%s %q: expected an attempt id, 1 or more", p.key, v)
			}
			*p.to = n
		}
	}
	if after != 0 && before != 0 {
		return badRequest("after and before: expected one of them, not both")
	}
	path := "/runs/" + url.PathEscape(run.ID) + "/attempts"
	b := attemptsBody{Run: run, Filter: f, Query: f.values(), Stored: sum.Stored,
		Form: newFilterForm(path, run, sum.StopReasons(), f)}
	total, ok := f.countIn(sum)
	if !ok {
		if total, err = store.CountAttempts(ctx, run, f.query()); err != nil {
			return err
		}
	}
	b.Pages = newPager(path, f, total, attemptsPerPage, "attempts")
	// A page named by number alone is found by offset; the pager's links
	// name the attempt they go on from, so that every page costs the same
	// (keyset pagination).
	offset := 0
	if after == 0 && before == 0 {
		offset = b.Pages.First
	}
	page, err := store.ListAttempts(ctx, run, f.query(), after, before, offset, attemptsPerPage)
	if err != nil {
		if errors.Is(err, results.ErrNoAttempt) {
			return badRequest("%v", err)
		}
		return err
	}
	b.Attempts = page.Attempts
	b.Pages.Prev, b.Pages.Next = "", ""
	if n := len(page.Attempts); n > 0 {
		if b.Pages.Page > 1 {
			v := f.withPage(b.Pages.Page - 1)
			v.Set("before", strconv.FormatInt(page.Attempts[0].ID, 10))
			b.Pages.Prev = withQuery(path, v)
		}
		if b.Pages.Page < b.Pages.Pages {
			v := f.withPage(b.Pages.Page + 1)
			v.Set("after", strconv.FormatInt(page.Attempts[n-1].ID, 10))
			b.Pages.Next = withQuery(path, v)
		}
	}
	return s.render(w, "attempts", "Attempts of run "+run.ID, b)
}
