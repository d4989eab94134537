package overhead

import (
	"fmt"
	"io"
	"math"
	"strings"
	"unicode/utf8"
)

// partialBlocks are the block characters of 0/8 to 7/8 of a cell, for bars
// that end between two columns.
const partialBlocks = " ▏▎▍▌▋▊▉"

// bar draws value on a scale where full is width cells, to the nearest
// eighth of a cell. A positive value never vanishes: it gets at least an
// eighth.
func bar(value, full float64, width int) string {
	if value <= 0 || full <= 0 || width <= 0 {
		return ""
	}
	n := int(math.Round(min(value/full, 1) * float64(width) * 8))
	n = max(n, 1)
	s := strings.Repeat("█", n/8)
	if n%8 > 0 {
		s += string([]rune(partialBlocks)[n%8])
	}
	return s
}

// WriteBars renders a report as horizontal bars for a terminal, one per
// set and tool (and all tools together when there are several sets),
// scaled so that the largest is v.Width columns wide, with the tokens and
// the share of the context after each bar. It writes no heading: it follows
// WriteTable, or the caller's own.
func WriteBars(w io.Writer, r *Report, v View) error {
	width := v.Width
	if width <= 0 {
		width = DefaultBarWidth
	}
	rows := r.rows()
	var b strings.Builder
	if len(rows) == 0 {
		b.WriteString("no tools offered\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	labelW, numW, largest := 0, 0, 0
	for _, rw := range rows {
		labelW = max(labelW, utf8.RuneCountInString(barLabel(rw)))
		numW = max(numW, utf8.RuneCountInString(tokenText(rw.tokens)))
		largest = max(largest, rw.tokens.N)
	}
	for _, rw := range rows {
		label := barLabel(rw)
		bs := bar(float64(rw.tokens.N), float64(largest), width)
		num := tokenText(rw.tokens)
		fmt.Fprintf(&b, "%s%s  %s%s  %s%s  %s\n",
			label, strings.Repeat(" ", labelW-utf8.RuneCountInString(label)),
			bs, strings.Repeat(" ", width-utf8.RuneCountInString(bs)),
			strings.Repeat(" ", numW-utf8.RuneCountInString(num)), num,
			shareText(r, rw.tokens))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func barLabel(rw row) string {
	if rw.kind == rowTool {
		return "  " + rw.label
	}
	return rw.label
}
