package view

import (
	"fmt"
	"html/template"

	"github.com/benchhq/bench/results"
)

// This file shows where attempts' time went: the model's turns, the tool
// calls, the hidden tests and the harness's own time, as numbers and as a
// bar of shares. The sums are the report's (results.TimeSplit); nothing
// here computes them again.

// timeView is one time split as a page shows it: a row of a table and a
// bar.
type timeView struct {
	// Label names what the split covers (an arm, "all arms"); "" for one
	// attempt.
	Label string
	Parts []timePart
	// TotalMS sums the parts.
	TotalMS float64
	// Dominant names the part that took the most time and Share its
	// share; "" when nothing was timed (attempts stored before bench kept
	// it).
	Dominant string
	Share    float64
}

// timePart is one part of a split.
type timePart struct {
	Name  string
	MS    float64
	Share float64
	Color string
}

// timeColor tells the parts of a split apart: model, tools, hidden
// tests, harness (Paul Tol's vibrant scheme, then grey).
func timeColor(i int) string {
	colors := [...]string{"#0077bb", "#ee7733", "#009988", "#bbbbbb"}
	return colors[i%len(colors)]
}

func newTimeView(label string, t results.TimeSplit) timeView {
	v := timeView{Label: label, TotalMS: t.ModelMS + t.ToolMS + t.TestMS + t.HarnessMS}
	v.Dominant, v.Share = t.Dominant()
	for i, p := range []struct {
		name string
		ms   float64
	}{{"model", t.ModelMS}, {"tools", t.ToolMS}, {"hidden tests", t.TestMS}, {"harness", t.HarnessMS}} {
		part := timePart{Name: p.name, MS: p.ms, Color: timeColor(i)}
		if v.TotalMS > 0 {
			part.Share = p.ms / v.TotalMS
		}
		v.Parts = append(v.Parts, part)
	}
	return v
}

// Known reports whether the split holds any time.
func (v timeView) Known() bool { return v.Dominant != "" }

// Part returns the part named name (model, tools, hidden tests, harness).
func (v timeView) Part(name string) timePart {
	for _, p := range v.Parts {
		if p.Name == name {
			return p
		}
	}
	return timePart{Name: name}
}

// timeBars draws each split as one bar of its parts' shares, labelled on
// the left (when the splits have labels) and with its total on the
// right, over a legend of the parts.
func timeBars(views []timeView, width float64, label string) template.HTML {
	lw := 0.0
	for _, v := range views {
		if v.Label != "" {
			lw = labelWidth
		}
	}
	const bar, legend = 18, 20
	h := float64(len(views)*rowHeight + legend)
	d := newSVG(width, h, label)
	x0, x1 := lw, width-170
	for i, v := range views {
		y := float64(i*rowHeight) + 3
		if v.Label != "" {
			d.text(x0-8, y+13, "end", "label", v.Label)
		}
		if !v.Known() {
			d.text(x0+4, y+13, "start", "value", "not recorded")
			continue
		}
		x := x0
		for _, p := range v.Parts {
			w := (x1 - x0) * p.Share
			if w <= 0 {
				continue
			}
			d.raw(`<rect x="%.1f" y="%.1f" width="%.2f" height="%d" fill="%s"><title>%s</title></rect>`, x, y, w, bar, p.Color,
				esc(fmt.Sprintf("%s%s: %s (%.0f%%)", prefix(v.Label), p.Name, millis(p.MS), 100*p.Share)))
			x += w
		}
		d.text(x1+8, y+13, "start", "value", fmt.Sprintf("%s · %s %.0f%%", millis(v.TotalMS), v.Dominant, 100*v.Share))
	}
	x, ly := x0, float64(len(views)*rowHeight)+12
	for i, name := range []string{"model", "tools", "hidden tests", "harness"} {
		d.raw(`<rect x="%.1f" y="%.1f" width="10" height="10" fill="%s"/>`, x, ly-9, timeColor(i))
		d.text(x+14, ly, "start", "value", name)
		x += 14 + 8*float64(len(name)) + 14
	}
	return d.html()
}

func prefix(label string) string {
	if label == "" {
		return ""
	}
	return label + ": "
}

// attemptTimes is one attempt's split, from the times the store holds.
func attemptTimes(t results.Times) timeView { return newTimeView("", t.Split()) }
