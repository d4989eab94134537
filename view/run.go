package view

import (
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
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
	rr, err := s.reports.report(r.Context(), store, r.PathValue("run"))
	if err != nil {
		return err
	}
	f, err := parseFilter(r.URL.Query(), rr.Run, rr.Attempts)
	if err != nil {
		return err
	}
	body := newRunBody(rr, f, false)
	return s.render(w, "run", "Run "+rr.Run.ID, body)
}

// newRunBody lays out a run page from the report and the attempts it was
// computed from.
func newRunBody(rr *results.RunReport, f filter, standalone bool) *runBody {
	rep := rr.Report
	b := &runBody{Run: rr.Run, Report: rep, Filter: f, Query: f.values(), Total: rep.Total,
		Stored: len(rr.Attempts), Standalone: standalone,
		Form: newFilterForm("/runs/"+url.PathEscape(rr.Run.ID), rr.Run, rr.Attempts, f)}
	armIndex := map[string]int{}
	for i, a := range rr.Run.Arms {
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
			RunID: rr.Run.ID, AtK: b.AtK, HatK: b.HatK, Standalone: standalone}
		if f.ArmShown(m.Arm) {
			b.Arms = append(b.Arms, row)
			b.GridArms = append(b.GridArms, row)
		}
	}
	b.Lines = b.Arms
	if len(rep.Arms) > 1 {
		b.Lines = append(slices.Clone(b.Arms), armRow{M: rep.Total, Total: true, RunID: rr.Run.ID, AtK: b.AtK, HatK: b.HatK, Standalone: standalone})
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
	b.Plots = runPlots(rr, armIndex)
	b.grid(rr, f, cmps)
	return b
}

// grid lays out the task × arm grid for the tasks of the filter's page.
func (b *runBody) grid(rr *results.RunReport, f filter, cmps map[string]*results.Comparison) {
	groups := map[[2]string]*results.Metrics{}
	for i := range b.Report.Tasks {
		m := &b.Report.Tasks[i]
		groups[[2]string{m.Arm, m.Task}] = m
	}
	// The attempts come in arm, task, index order: a group's are one
	// stretch of them.
	byGroup := map[[2]string][]results.AttemptMetrics{}
	for i := 0; i < len(rr.Attempts); {
		j := i
		for j < len(rr.Attempts) && rr.Attempts[j].Key.Arm == rr.Attempts[i].Key.Arm && rr.Attempts[j].Key.Task == rr.Attempts[i].Key.Task {
			if f.match(rr.Attempts[j]) {
				b.Matched++
			}
			j++
		}
		byGroup[[2]string{rr.Attempts[i].Key.Arm, rr.Attempts[i].Key.Task}] = rr.Attempts[i:j:j]
		i = j
	}
	var tasks []string
	for _, t := range rr.Run.Tasks {
		if f.TaskShown(t.ID) {
			tasks = append(tasks, t.ID)
		}
	}
	if !b.Standalone {
		b.Pages = newPager("/runs/"+url.PathEscape(rr.Run.ID), f, len(tasks), tasksPerPage, "tasks")
		tasks = tasks[b.Pages.First:b.Pages.Last]
	}
	g := rr.Run.AttemptsPerTask
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
			var d *results.TaskDiff
			if c := cmps[arm.M.Arm]; c != nil {
				for i := range c.Diffs {
					if c.Diffs[i].Task == task {
						d = &c.Diffs[i]
					}
				}
			}
			row.Diffs = append(row.Diffs, d)
		}
		b.Grid = append(b.Grid, row)
	}
}

// runPlots draws the run's figures: pass rates, tool tokens, and the
// distributions of advantages, turns and tokens per attempt.
func runPlots(rr *results.RunReport, armIndex map[string]int) []plot {
	rep := rr.Report
	plots := []plot{passRatePlot(rep, armIndex)}
	plots = append(plots, toolTokenPlots(rep)...)
	type metric struct {
		id, title, caption string
		value              func(a results.AttemptMetrics) (float64, bool)
		dist               func(m results.Metrics) results.Dist
		format             func(float64) string
	}
	finished := func(f func(a results.AttemptMetrics) float64) func(a results.AttemptMetrics) (float64, bool) {
		return func(a results.AttemptMetrics) (float64, bool) { return f(a), a.Finished() }
	}
	metrics := []metric{
		{"plot-advantage", "Advantages", "The stored group-relative advantage of each finished attempt; a zero-variance group gives 0 to all its attempts.",
			func(a results.AttemptMetrics) (float64, bool) {
				if a.Advantage == nil || !a.Finished() {
					return 0, false
				}
				return *a.Advantage, true
			}, func(m results.Metrics) results.Dist { return m.Advantage }, func(v float64) string { return fixed(v, 2) }},
		{"plot-turns", "Turns per attempt", "Model turns of each finished attempt.",
			finished(func(a results.AttemptMetrics) float64 { return float64(a.Turns) }),
			func(m results.Metrics) results.Dist { return m.Turns }, func(v float64) string { return fixed(v, 0) }},
		{"plot-prompt", "Prompt tokens per attempt", "Prompt tokens summed over the turns of each finished attempt (every turn's whole prompt).",
			finished(func(a results.AttemptMetrics) float64 { return float64(a.PromptTokens) }),
			func(m results.Metrics) results.Dist { return m.PromptTokens }, tokens},
		{"plot-completion", "Completion tokens per attempt", "Completion tokens summed over the turns of each finished attempt.",
			finished(func(a results.AttemptMetrics) float64 { return float64(a.CompletionTokens) }),
			func(m results.Metrics) results.Dist { return m.CompletionTokens }, tokens},
	}
	for _, mt := range metrics {
		var ss []series
		for _, m := range rep.Arms {
			vals := make([]float64, 0, len(rr.Attempts)/max(1, len(rep.Arms)))
			for _, a := range rr.Attempts {
				if a.Key.Arm != m.Arm {
					continue
				}
				if v, ok := mt.value(a); ok {
					vals = append(vals, v)
				}
			}
			d := mt.dist(m)
			note := "none"
			if d.N > 0 {
				note = fmt.Sprintf("n %d, mean %s, p50 %s, p90 %s, max %s", d.N, mt.format(d.Mean), mt.format(d.P50), mt.format(d.P90), mt.format(d.Max))
			}
			ss = append(ss, series{Arm: m.Arm, Color: armColor(armIndex[m.Arm]), Values: vals, Note: note})
		}
		plots = append(plots, histogram(mt.id, mt.title, mt.caption, ss, mt.format))
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
	rr, err := s.reports.report(r.Context(), store, r.PathValue("run"))
	if err != nil {
		return err
	}
	run, attempts := rr.Run, rr.Attempts
	f, err := parseFilter(r.URL.Query(), run, attempts)
	if err != nil {
		return err
	}
	path := "/runs/" + url.PathEscape(run.ID) + "/attempts"
	b := attemptsBody{Run: run, Filter: f, Query: f.values(), Stored: len(attempts),
		Form: newFilterForm(path, run, attempts, f)}
	var kept []results.AttemptMetrics
	for _, a := range attempts {
		if f.match(a) {
			kept = append(kept, a)
		}
	}
	b.Pages = newPager(path, f, len(kept), attemptsPerPage, "attempts")
	b.Attempts = kept[b.Pages.First:b.Pages.Last]
	return s.render(w, "attempts", "Attempts of run "+run.ID, b)
}
