package view

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"slices"
	"strings"

	"github.com/benchhq/bench/results"
)

// This file draws the plots of a run page as inline SVG. A plot draws
// numbers it is given (the report's, or the attempts' own values); it
// computes none of the report's.

// plot is one figure of a page: its title, the SVG, and a caption.
type plot struct {
	ID      string
	Title   string
	SVG     template.HTML
	Caption string
}

// Geometry shared by the plots, in SVG user units (CSS pixels).
const (
	plotWidth  = 560
	labelWidth = 150
	rowHeight  = 24
	axisHeight = 26
	padRight   = 130
)

// svgDoc accumulates one SVG element.
type svgDoc struct {
	b    strings.Builder
	w, h float64
}

func newSVG(w, h float64, label string) *svgDoc {
	d := &svgDoc{w: w, h: h}
	fmt.Fprintf(&d.b, `<svg class="plot" viewBox="0 0 %g %g" width="%g" height="%g" role="img" aria-label="%s">`,
		w, h, w, h, esc(label))
	return d
}

func (d *svgDoc) raw(format string, args ...any) { fmt.Fprintf(&d.b, format, args...) }

func (d *svgDoc) text(x, y float64, anchor, class, s string) {
	fmt.Fprintf(&d.b, `<text x="%.1f" y="%.1f" text-anchor="%s" class="%s">%s</text>`, x, y, anchor, class, esc(s))
}

func (d *svgDoc) html() template.HTML {
	d.b.WriteString(`</svg>`)
	// Every text and attribute value went through esc.
	return template.HTML(d.b.String())
}

func esc(s string) string { return html.EscapeString(s) }

// axis draws a horizontal axis at y from x0 to x1 for values 0..max with
// ticks at the given values, labelled by label.
func (d *svgDoc) axis(x0, x1, y, max float64, ticks []float64, label func(float64) string) {
	d.raw(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" class="axis"/>`, x0, y, x1, y)
	for _, t := range ticks {
		x := x0 + (x1-x0)*t/max
		d.raw(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" class="tick"/>`, x, y, x, y+4)
		d.raw(`<line x1="%.1f" y1="0" x2="%.1f" y2="%.1f" class="grid"/>`, x, x, y)
		d.text(x, y+16, "middle", "tick", label(t))
	}
}

// passRatePlot draws each arm's pass rate with its 95% interval.
func passRatePlot(rep *results.Report, armIndex map[string]int) plot {
	h := float64(len(rep.Arms)*rowHeight + axisHeight + 8)
	d := newSVG(plotWidth, h, "pass rate per arm with 95% Wilson intervals")
	x0, x1 := float64(labelWidth), float64(plotWidth-padRight)
	d.axis(x0, x1, h-axisHeight, 1, []float64{0, 0.25, 0.5, 0.75, 1}, func(v float64) string { return fmt.Sprintf("%.0f%%", 100*v) })
	for i, m := range rep.Arms {
		y := float64(i*rowHeight) + rowHeight/2 + 4
		d.text(x0-8, y+4, "end", "label", m.Arm)
		if m.PassRate == nil {
			d.text(x0+4, y+4, "start", "value", "no finished attempt")
			continue
		}
		col := armColor(armIndex[m.Arm])
		lo, hi := m.PassRateCI95[0], m.PassRateCI95[1]
		d.raw(`<g><title>%s</title>`, esc(fmt.Sprintf("%s: %s (%d/%d), 95%% CI %s", m.Arm, pct(m.PassRate), m.Passes, m.Finished, ci(m.PassRateCI95))))
		d.raw(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" class="whisker"/>`, x0+(x1-x0)*lo, y, x0+(x1-x0)*hi, y, col)
		for _, v := range []float64{lo, hi} {
			d.raw(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" class="whisker"/>`, x0+(x1-x0)*v, y-5, x0+(x1-x0)*v, y+5, col)
		}
		d.raw(`<circle cx="%.1f" cy="%.1f" r="5" fill="%s"/></g>`, x0+(x1-x0)**m.PassRate, y, col)
		d.text(x1+8, y+4, "start", "value", fmt.Sprintf("%s  %d/%d  [%s]", pct(m.PassRate), m.Passes, m.Finished, ci(m.PassRateCI95)))
	}
	return plot{ID: "plot-pass-rate", Title: "Pass rate per arm", SVG: d.html(),
		Caption: "Dot: passed/finished; bar: 95% Wilson interval. Infrastructure failures are not scored."}
}

// setColor colours tool set i (the built-ins first, then each server).
func setColor(i int) string {
	colors := [...]string{"#6c8ebf", "#d79b00", "#82b366", "#b85450", "#9673a6", "#23445d", "#b0a38f"}
	return colors[i%len(colors)]
}

// toolTokenPlots draws what each arm's tools cost a request: per arm,
// stacked by tool set (the template's framing apart), and per tool.
func toolTokenPlots(rep *results.Report) []plot {
	if len(rep.ToolTokens) == 0 {
		return nil
	}
	var sets []string
	maxTok := 1
	for _, t := range rep.ToolTokens {
		for _, st := range t.Sets {
			if !slices.Contains(sets, st.Name) {
				sets = append(sets, st.Name)
			}
		}
		maxTok = max(maxTok, t.Tokens)
		sum := 0
		for _, st := range t.Sets {
			sum += st.Tokens
		}
		maxTok = max(maxTok, sum)
	}
	setIndex := func(name string) int { return slices.Index(sets, name) }
	h := float64(len(rep.ToolTokens)*rowHeight + axisHeight + 8)
	d := newSVG(plotWidth, h, "prompt tokens the tools add to every request, per arm and tool set")
	x0, x1 := float64(labelWidth), float64(plotWidth-padRight)
	scale := (x1 - x0) / float64(maxTok)
	d.axis(x0, x1, h-axisHeight, float64(maxTok), niceTicks(float64(maxTok)), func(v float64) string { return tokens(v) })
	for i, t := range rep.ToolTokens {
		y := float64(i*rowHeight) + 5
		d.text(x0-8, y+13, "end", "label", t.Arm)
		x, sum := x0, 0
		for _, st := range t.Sets {
			w := float64(st.Tokens) * scale
			d.raw(`<rect x="%.1f" y="%.1f" width="%.1f" height="%d" fill="%s"><title>%s</title></rect>`,
				x, y, math.Max(w, 0), rowHeight-8, setColor(setIndex(st.Name)), esc(fmt.Sprintf("%s: %s: %d tokens", t.Arm, st.Name, st.Tokens)))
			x += w
			sum += st.Tokens
		}
		if frame := t.Tokens - sum; frame > 0 {
			d.raw(`<rect x="%.1f" y="%.1f" width="%.1f" height="%d" class="frame"><title>%s</title></rect>`,
				x, y, float64(frame)*scale, rowHeight-8, esc(fmt.Sprintf("%s: the template's framing around the tools: %d tokens", t.Arm, frame)))
			x += float64(frame) * scale
		}
		label := fmt.Sprintf("%d · %.1f%% of ctx", t.Tokens, 100*t.Share)
		if t.Truncated {
			label = "≥" + label
		}
		d.text(x1+8, y+13, "start", "value", label)
	}
	legend := make([]string, len(sets))
	for i, s := range sets {
		legend[i] = s
	}
	perArm := plot{ID: "plot-tool-sets", Title: "Tool tokens per arm and per server", SVG: d.html(),
		Caption: "Prompt tokens each arm's tool definitions add to every request, measured at the start of the run, stacked by tool set (" +
			strings.Join(legend, ", ") + "); grey: the template's framing. Multiply by the turns for an attempt's cost."}

	// Per tool: each distinct tool once, the largest first.
	type toolCost struct {
		name, set string
		tokens    int
	}
	var tools []toolCost
	for _, t := range rep.ToolTokens {
		for _, tt := range t.Tools {
			if !slices.ContainsFunc(tools, func(c toolCost) bool { return c.name == tt.Name }) {
				tools = append(tools, toolCost{tt.Name, tt.Set, tt.Tokens})
			}
		}
	}
	if len(tools) == 0 {
		return []plot{perArm}
	}
	slices.SortStableFunc(tools, func(a, b toolCost) int { return b.tokens - a.tokens })
	const maxTools = 40
	shown := tools[:min(len(tools), maxTools)]
	maxTool := 1
	for _, c := range shown {
		maxTool = max(maxTool, c.tokens)
	}
	rh := 18
	h = float64(len(shown)*rh + axisHeight + 8)
	d = newSVG(plotWidth, h, "prompt tokens per tool")
	scale = (x1 - x0) / float64(maxTool)
	d.axis(x0, x1, h-axisHeight, float64(maxTool), niceTicks(float64(maxTool)), func(v float64) string { return tokens(v) })
	for i, c := range shown {
		y := float64(i*rh) + 3
		d.text(x0-8, y+11, "end", "label small", c.name)
		d.raw(`<rect x="%.1f" y="%.1f" width="%.1f" height="%d" fill="%s"><title>%s</title></rect>`,
			x0, y, float64(max(c.tokens, 0))*scale, rh-5, setColor(max(setIndex(c.set), 0)), esc(fmt.Sprintf("%s (%s): %d tokens", c.name, c.set, c.tokens)))
		d.text(x0+float64(max(c.tokens, 0))*scale+6, y+11, "start", "value small", fmt.Sprintf("%d", c.tokens))
	}
	caption := "Each tool measured alone, coloured by its tool set."
	if len(tools) > maxTools {
		caption += fmt.Sprintf(" The %d most costly of %d tools are shown.", maxTools, len(tools))
	}
	return []plot{perArm, {ID: "plot-tools", Title: "Tool tokens per tool", SVG: d.html(), Caption: caption}}
}

// niceTicks returns 0 and up to four round values up to max.
func niceTicks(max float64) []float64 {
	if max <= 0 {
		return []float64{0}
	}
	step := math.Pow(10, math.Floor(math.Log10(max/4)))
	for _, m := range []float64{1, 2, 5, 10} {
		if max/(step*m) <= 4.5 {
			step *= m
			break
		}
	}
	var out []float64
	for v := 0.0; v <= max*1.0001; v += step {
		out = append(out, v)
	}
	return out
}

// series is one arm's values for a histogram.
type series struct {
	Arm   string
	Color string
	// Note is the arm's summary, from the report.
	Note string
}

// histogram draws the distributions of the series as bars side by side
// on shared bins: unit bins for integers over a short range, else 24.
func histogram(id, title, caption string, hist results.Histogram, ss []series, format func(float64) string) plot {
	if hist.N == 0 || len(hist.Edges) < 2 || len(hist.Counts) != len(ss) {
		return plot{ID: id, Title: title, Caption: "No finished attempt yet."}
	}
	lo, hi, integers, edges, counts := hist.Lo, hist.Hi, hist.Integers, hist.Edges, hist.Counts
	nb := len(edges) - 1
	maxCount := 1
	for i := range ss {
		for _, c := range counts[i] {
			maxCount = max(maxCount, c)
		}
	}
	const ph = 120
	legendH := 16 * len(ss)
	h := float64(ph + axisHeight + 10 + legendH)
	d := newSVG(plotWidth, h, title)
	x0, x1 := 44.0, float64(plotWidth-12)
	base := float64(ph + 6)
	xs := func(v float64) float64 { return x0 + (x1-x0)*(v-edges[0])/(edges[nb]-edges[0]) }
	ys := func(c int) float64 { return base - float64(ph)*float64(c)/float64(maxCount) }
	// Axes: counts on the left, values below.
	d.raw(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" class="axis"/>`, x0, base, x1, base)
	d.raw(`<line x1="%.1f" y1="6" x2="%.1f" y2="%.1f" class="axis"/>`, x0, x0, base)
	d.text(x0-6, 14, "end", "tick", fmt.Sprint(maxCount))
	d.text(x0-6, base, "end", "tick", "0")
	ticks := []float64{edges[0], (edges[0] + edges[nb]) / 2, edges[nb]}
	if integers && hi-lo <= 40 {
		ticks = []float64{lo, math.Round((lo + hi) / 2), hi}
	}
	for _, t := range ticks {
		d.raw(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" class="tick"/>`, xs(t), base, xs(t), base+4)
		d.text(xs(t), base+16, "middle", "tick", format(t))
	}
	// Each bin holds one bar per arm, side by side.
	slot := (xs(edges[1]) - xs(edges[0])) / float64(len(ss))
	gap := math.Min(1, slot/4)
	for i, s := range ss {
		for b := range nb {
			c := counts[i][b]
			if c == 0 {
				continue
			}
			d.raw(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s</title></rect>`,
				xs(edges[b])+float64(i)*slot+gap/2, ys(c), math.Max(slot-gap, 0.5), base-ys(c), s.Color,
				esc(fmt.Sprintf("%s: %d attempts in [%s, %s)", s.Arm, c, format(edges[b]), format(edges[b+1]))))
		}
		ly := base + float64(axisHeight) + 6 + float64(16*i)
		d.raw(`<rect x="%.1f" y="%.1f" width="12" height="10" fill="%s"/>`, x0, ly-9, s.Color)
		d.text(x0+18, ly, "start", "value", s.Arm+": "+s.Note)
	}
	return plot{ID: id, Title: title, SVG: d.html(), Caption: caption}
}
