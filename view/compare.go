package view

import (
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"

	"github.com/benchhq/bench/results"
)

// compareBody is the compare page: two arms, of one run or two, task by
// task.
type compareBody struct {
	A, B     compareSide
	Cmp      results.Comparison
	SameRun  bool
	SeedNote string
	Rows     []compareRow
	Plot     plot
	Query    url.Values
}

// compareSide is one side: its run, arm and the report they come from.
type compareSide struct {
	Run    *results.Run
	Arm    string
	Label  string
	Metric *results.Metrics
	Color  string
}

// compareRow is one task: each side's group and their difference.
type compareRow struct {
	Task         string
	A, B         *results.Metrics
	MarksA       template.HTML
	MarksB       template.HTML
	Diff         *results.TaskDiff
	OnlyA, OnlyB bool
}

func (s *Server) comparePage(w *page, r *http.Request, store *results.Store) error {
	ctx := r.Context()
	q := r.URL.Query()
	for k := range q {
		if !slices.Contains([]string{"a", "b", "a_arm", "b_arm"}, k) {
			return badRequest("unknown parameter %q: compare takes a, a_arm, b and b_arm", k)
		}
	}
	aID, bID := q.Get("a"), q.Get("b")
	if aID == "" {
		return badRequest("compare needs a=RUN, the baseline's run, and optionally a_arm=ARM, b=RUN (default: the same run) and b_arm=ARM")
	}
	if bID == "" {
		bID = aID
	}
	ra, err := s.reports.report(ctx, store, aID)
	if err != nil {
		return err
	}
	rb := ra
	if bID != aID {
		if rb, err = s.reports.report(ctx, store, bID); err != nil {
			return err
		}
	}
	armA, armB := q.Get("a_arm"), q.Get("b_arm")
	if armA == "" && len(ra.Run.Arms) > 0 {
		armA = ra.Run.Arms[0].Name
	}
	if armB == "" {
		switch {
		case bID == aID && len(rb.Run.Arms) > 1:
			armB = rb.Run.Arms[1].Name
		case bID != aID && slices.ContainsFunc(rb.Run.Arms, func(a results.Arm) bool { return a.Name == armA }):
			armB = armA
		case len(rb.Run.Arms) > 0:
			armB = rb.Run.Arms[0].Name
		}
	}
	b := &compareBody{SameRun: aID == bID, Query: q}
	label := func(run *results.Run, arm string) string {
		if b.SameRun {
			return arm
		}
		return run.ID + "/" + arm
	}
	b.A = compareSide{Run: ra.Run, Arm: armA, Label: label(ra.Run, armA), Color: armColor(0)}
	b.B = compareSide{Run: rb.Run, Arm: armB, Label: label(rb.Run, armB), Color: armColor(1)}
	if b.Cmp, err = results.CompareSides(
		results.Side{Run: ra.Run, Attempts: ra.Attempts, Arm: armA, Label: b.A.Label},
		results.Side{Run: rb.Run, Attempts: rb.Attempts, Arm: armB, Label: b.B.Label}); err != nil {
		return err
	}
	if !b.SameRun && ra.Run.Seed != rb.Run.Seed {
		b.SeedNote = fmt.Sprintf("The runs' seeds differ (%d and %d): McNemar's pairs share a task and an index, not a seed.", ra.Run.Seed, rb.Run.Seed)
	}
	for i := range ra.Report.Arms {
		if ra.Report.Arms[i].Arm == armA {
			b.A.Metric = &ra.Report.Arms[i]
		}
	}
	for i := range rb.Report.Arms {
		if rb.Report.Arms[i].Arm == armB {
			b.B.Metric = &rb.Report.Arms[i]
		}
	}
	b.rows(ra, rb)
	b.Plot = diffPlot(b.Cmp)
	return s.render(w, "compare", "Compare "+b.A.Label+" and "+b.B.Label, b)
}

// rows lays out the tasks of both sides, the baseline's order first.
// Each side's groups, attempts and differences are indexed by task once:
// a run of 3,125 tasks and 100,000 attempts is laid out in one pass over
// them, not one per task.
func (b *compareBody) rows(ra, rb *results.RunReport) {
	groups := func(rep *results.Report, arm string) map[string]*results.Metrics {
		out := map[string]*results.Metrics{}
		for i := range rep.Tasks {
			if m := &rep.Tasks[i]; m.Arm == arm {
				if _, ok := out[m.Task]; !ok {
					out[m.Task] = m
				}
			}
		}
		return out
	}
	marks := func(rr *results.RunReport, arm string) map[string][]mark {
		out := map[string][]mark{}
		for _, a := range rr.Attempts {
			if a.Key.Arm == arm {
				out[a.Key.Task] = append(out[a.Key.Task], mark{ID: a.ID, Class: outcomeOf(a.Status, a.Reward), Title: markText(a)})
			}
		}
		return out
	}
	groupsA, groupsB := groups(ra.Report, b.A.Arm), groups(rb.Report, b.B.Arm)
	marksA, marksB := marks(ra, b.A.Arm), marks(rb, b.B.Arm)
	diffs := map[string]*results.TaskDiff{}
	for i := range b.Cmp.Diffs {
		// The last of a task's differences, as a scan would keep it.
		diffs[b.Cmp.Diffs[i].Task] = &b.Cmp.Diffs[i]
	}
	var tasks []string
	seen := map[string]bool{}
	for _, run := range []*results.Run{ra.Run, rb.Run} {
		for _, t := range run.Tasks {
			if !seen[t.ID] {
				seen[t.ID] = true
				tasks = append(tasks, t.ID)
			}
		}
	}
	for _, t := range tasks {
		row := compareRow{Task: t, A: groupsA[t], B: groupsB[t],
			MarksA: marksHTML(marksA[t], false), MarksB: marksHTML(marksB[t], false), Diff: diffs[t]}
		row.OnlyA, row.OnlyB = row.B == nil, row.A == nil
		b.Rows = append(b.Rows, row)
	}
}

// diffPlot draws each compared task's pass-rate difference, centred on 0.
func diffPlot(c results.Comparison) plot {
	if len(c.Diffs) == 0 {
		return plot{ID: "plot-diffs", Title: "Difference per task", Caption: "No task has finished attempts on both sides."}
	}
	const maxRows = 80
	diffs := c.Diffs[:min(len(c.Diffs), maxRows)]
	rh := 16
	h := float64(len(diffs)*rh + axisHeight + 8)
	d := newSVG(plotWidth, h, "pass-rate difference per task")
	x0, x1 := float64(labelWidth+40), float64(plotWidth-60)
	mid := (x0 + x1) / 2
	half := (x1 - x0) / 2
	d.axis(x0, x1, h-axisHeight, 2, []float64{0, 0.5, 1, 1.5, 2}, func(v float64) string { return fmt.Sprintf("%+.0f", 100*(v-1)) })
	for i, t := range diffs {
		y := float64(i*rh) + 3
		d.text(x0-8, y+10, "end", "label small", t.Task)
		w := half * t.Diff
		x, cls := mid, "better"
		if w < 0 {
			x, w, cls = mid+w, -w, "worse"
		}
		d.raw(`<rect x="%.1f" y="%.1f" width="%.1f" height="%d" class="%s"><title>%s</title></rect>`, x, y, max(w, 1), rh-4, cls,
			esc(fmt.Sprintf("%s: %s → %s (%s)", t.Task, pctv(t.Baseline), pctv(t.Arm), pp(&t.Diff))))
	}
	caption := fmt.Sprintf("Pass rate of %s minus that of %s, in percentage points, per task.", c.Arm, c.Baseline)
	if len(c.Diffs) > maxRows {
		caption += fmt.Sprintf(" The first %d of %d tasks.", maxRows, len(c.Diffs))
	}
	return plot{ID: "plot-diffs", Title: "Difference per task", SVG: d.html(), Caption: caption}
}

func pctv(v float64) string { return pct(&v) }

// Sides are the baseline and the other side, in this order.
func (b *compareBody) Sides() []compareSide { return []compareSide{b.A, b.B} }
