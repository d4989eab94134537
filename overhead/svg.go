package overhead

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strings"
	"unicode/utf8"
)

// Layout of the SVG chart, in pixels.
const (
	svgWidth     = 860
	svgMargin    = 24
	svgRowH      = 24
	svgBarH      = 16
	svgCharW     = 7.0 // average advance of a 12.5px sans-serif character
	svgTextDrop  = 4.5 // from a row's middle to the baseline of 12.5px text
	svgMaxLabel  = 300
	svgValueW    = 210
	svgTitleH    = 72
	svgHeadingH  = 30
	svgAxisH     = 26
	svgPanelGap  = 18
	svgFooterH   = 40
	svgFontStack = `ui-sans-serif, system-ui, -apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif`
)

// Colours of the SVG chart.
const (
	colourSet       = "#2563eb"
	colourTool      = "#93c5fd"
	colourAll       = "#1e3a8a"
	colourTruncated = "#ef4444"
	colourText      = "#111827"
	colourMuted     = "#6b7280"
	colourGrid      = "#e5e7eb"
)

// WriteSVG renders reports (one per arm, for example) as one SVG chart:
// a title with the model and num_ctx, then per report a panel of labelled
// horizontal bars, one per set and tool (and all tools together when there
// are several sets), with the tokens, the share of num_ctx and, when
// v.Turns is set, the cost over an attempt. Every panel shares one scale,
// so that arms compare at a glance. Each bar carries a tooltip (<title>).
func WriteSVG(w io.Writer, reports []*Report, v View) error {
	if len(reports) == 0 {
		return fmt.Errorf("write SVG chart: no report")
	}
	type panel struct {
		r    *Report
		rows []row
	}
	panels := make([]panel, len(reports))
	largest, labelChars := 0, 0
	for i, r := range reports {
		panels[i] = panel{r: r, rows: r.rows()}
		for _, rw := range panels[i].rows {
			largest = max(largest, rw.tokens.N)
			labelChars = max(labelChars, utf8.RuneCountInString(barLabel(rw)))
		}
	}
	labelW := min(math.Ceil(float64(labelChars)*svgCharW)+8, svgMaxLabel)
	labelW = max(labelW, 120)
	barX := svgMargin + labelW + 10
	barMax := svgWidth - barX - svgValueW - svgMargin
	scale, ticks := axis(largest)
	x := func(tokens int) float64 {
		if scale <= 0 {
			return 0
		}
		return float64(tokens) / scale * barMax
	}

	height := svgTitleH + svgFooterH
	for _, p := range panels {
		height += svgHeadingH + max(len(p.rows), 1)*svgRowH + svgAxisH + svgPanelGap
	}

	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="%s" font-size="12.5" role="img">`+"\n",
		svgWidth, height, svgWidth, height, svgFontStack)
	first := reports[0]
	title := "Prompt tokens per request, by tool"
	mixed := false
	for _, r := range reports[1:] {
		mixed = mixed || r.Model != first.Model || r.NumCtx != first.NumCtx
	}
	sub := fmt.Sprintf("model %s · num_ctx %s", first.Model, groupDigits(first.NumCtx))
	if mixed {
		sub = "models and num_ctx per panel"
	}
	if v.Turns > 0 {
		sub += fmt.Sprintf(" · per attempt = tokens × %s turns", trimFloat(v.Turns))
		if v.TurnsFrom != "" {
			sub += " (" + v.TurnsFrom + ")"
		}
	}
	fmt.Fprintf(&b, "<title>%s: %s</title>\n", esc(title), esc(sub))
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="#ffffff"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%d" y="34" font-size="19" font-weight="700" fill="%s">%s</text>`+"\n", svgMargin, colourText, esc(title))
	fmt.Fprintf(&b, `<text x="%d" y="56" fill="%s">%s</text>`+"\n", svgMargin, colourMuted, esc(sub))

	y := float64(svgTitleH)
	for _, p := range panels {
		r := p.r
		// Heading: the arm and what its tools cost together.
		heading := "tools"
		if r.Arm != "" {
			heading = "arm " + r.Arm
		}
		detail := fmt.Sprintf("no tools: %s tokens · all tools: %s tokens, %s of the context",
			tokenText(r.Baseline.Bound()), tokenText(r.TotalBound()), shareText(r, r.TotalBound()))
		if mixed {
			detail = fmt.Sprintf("model %s · num_ctx %s · %s", r.Model, groupDigits(r.NumCtx), detail)
		}
		if r.Context() < r.NumCtx {
			detail += fmt.Sprintf(" · context lowered to the model's %s", groupDigits(r.Context()))
		}
		fmt.Fprintf(&b, `<text x="%d" y="%.1f"><tspan font-size="14" font-weight="700" fill="%s">%s</tspan><tspan dx="10" fill="%s">%s</tspan></text>`+"\n",
			svgMargin, y+18, colourText, esc(heading), colourMuted, esc(detail))
		y += svgHeadingH
		top := y
		rowsH := float64(max(len(p.rows), 1) * svgRowH)
		// Grid lines under the bars.
		for _, t := range ticks {
			gx := barX + x(t)
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="1"/>`+"\n", gx, top-4, gx, top+rowsH, colourGrid)
		}
		if len(p.rows) == 0 {
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" fill="%s">no tools offered</text>`+"\n", barX, y+16, colourMuted)
		}
		for _, rw := range p.rows {
			cy := y + svgRowH/2
			label := rw.label
			maxChars := int((labelW - 8) / svgCharW)
			shown := cutRunes(label, maxChars)
			weight := ""
			if rw.kind != rowTool {
				weight = ` font-weight="600"`
			}
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="end" fill="%s"%s>%s</text>`+"\n",
				barX-10, cy+svgTextDrop, colourText, weight, esc(shown))
			fill := colourTool
			switch rw.kind {
			case rowSet:
				fill = colourSet
			case rowAll:
				fill = colourAll
			}
			if !rw.tokens.IsExact() {
				fill = colourTruncated
			}
			bw := max(x(max(rw.tokens.N, 0)), 0)
			if rw.tokens.N > 0 {
				bw = max(bw, 1.5)
			}
			value := tokenText(rw.tokens) + " · " + shareText(r, rw.tokens)
			if v.Turns > 0 {
				value += " · " + tokenText(rw.tokens.Times(v.Turns)) + "/attempt"
			}
			if rw.truncated {
				value += " · cut at " + r.contextName()
			}
			tip := fmt.Sprintf("%s: %s prompt tokens per request, %s of the context %s",
				strings.TrimSpace(label), tokenText(rw.tokens), shareText(r, rw.tokens), groupDigits(r.Context()))
			if rw.hasSum {
				tip += fmt.Sprintf("; its tools one by one: %s, framing %s", tokenText(rw.sum), signedText(rw.framing))
			}
			fmt.Fprintf(&b, `<rect class="bar" x="%.1f" y="%.1f" width="%.1f" height="%d" rx="3" fill="%s"><title>%s</title></rect>`+"\n",
				barX, cy-svgBarH/2, bw, svgBarH, fill, esc(tip))
			valueFill := colourMuted
			if !rw.tokens.IsExact() {
				valueFill = colourTruncated
			}
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" fill="%s">%s</text>`+"\n", barX+bw+6, cy+svgTextDrop, valueFill, esc(value))
			y += svgRowH
		}
		if len(p.rows) == 0 {
			y += svgRowH
		}
		// Axis: a base line and tick labels.
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="1"/>`+"\n", barX, y+2, barX+barMax, y+2, colourMuted)
		for _, t := range ticks {
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle" font-size="11" fill="%s">%s</text>`+"\n", barX+x(t), y+17, colourMuted, groupDigits(t))
		}
		y += svgAxisH + svgPanelGap
	}
	fmt.Fprintf(&b, `<text x="%d" y="%.1f" font-size="11" fill="%s">%s</text>`+"\n", svgMargin, y+4, colourMuted,
		esc("Tokens: prompt_eval_count of a one-word request offering the tools, minus that of the same request with no tools."))
	fmt.Fprintf(&b, `<text x="%d" y="%.1f" font-size="11" fill="%s">%s</text>`+"\n", svgMargin, y+20, colourMuted,
		esc("Every request of an attempt carries them again. Measured by bench overhead."))
	b.WriteString("</svg>\n")
	_, err := w.Write(b.Bytes())
	return err
}

// axis returns the scale's end and its tick values: a round step (1, 2 or
// 5 × a power of ten) giving about five ticks from 0 to at least largest.
func axis(largest int) (end float64, ticks []int) {
	if largest <= 0 {
		return 0, nil
	}
	raw := float64(largest) / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	s := max(int(step), 1)
	n := (largest + s - 1) / s
	for i := 0; i <= n; i++ {
		ticks = append(ticks, i*s)
	}
	return float64(n * s), ticks
}

func esc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

// cutRunes shortens s to n runes, marking the cut with an ellipsis.
func cutRunes(s string, n int) string {
	if n < 2 || utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}
