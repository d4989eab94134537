package overhead

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/benchhq/bench/bound"
)

// View says how to render a report.
type View struct {
	// Turns is the number of turns an attempt is expected to take; each
	// turn's request pays the overhead again, so an attempt's cost is
	// tokens × Turns. Zero leaves the cost out.
	Turns float64
	// TurnsFrom says where Turns comes from ("estimate", "mean of run X"),
	// shown beside it.
	TurnsFrom string
	// Width is the width of the longest terminal bar, in columns
	// (default 40).
	Width int
}

// DefaultBarWidth is the width of the longest terminal bar.
const DefaultBarWidth = 40

// rowKind is what a rendered row stands for.
type rowKind int

const (
	rowSet  rowKind = iota // a tool set alone
	rowTool                // one tool alone
	rowAll                 // every set together
)

// row is one line of a table, bar chart or SVG chart.
type row struct {
	kind   rowKind
	label  string
	tokens bound.Value
	// truncated is true when the row's own prompt was cut.
	truncated bool
	// sum and framing are set for set and all rows with two tools or more.
	sum, framing bound.Value
	hasSum       bool
}

// rows lists what the renderers show: each set, then its tools from the
// most expensive, then, when there are several sets, all of them together.
func (r *Report) rows() []row {
	var out []row
	var sumAll bound.Value
	for i := range r.Sets {
		s := &r.Sets[i]
		sr := row{kind: rowSet, label: fmt.Sprintf("%s (%s)", s.Name, plural(len(s.Tools), "tool")), tokens: r.tokens(s.Tokens, s.Count), truncated: s.Truncated}
		var sum bound.Value
		for _, t := range s.Tools {
			sum = sum.Plus(r.tokens(t.Tokens, t.Count))
		}
		sumAll = sumAll.Plus(sum)
		if len(s.Tools) > 1 {
			sr.sum, sr.framing, sr.hasSum = sum, sr.tokens.Minus(sum), true
		}
		out = append(out, sr)
		tools := slices.Clone(s.Tools)
		slices.SortStableFunc(tools, func(a, b ToolCost) int { return b.Tokens - a.Tokens })
		for _, t := range tools {
			out = append(out, row{kind: rowTool, label: t.Name, tokens: r.tokens(t.Tokens, t.Count), truncated: t.Truncated})
		}
	}
	if len(r.Sets) > 1 {
		ar := row{kind: rowAll, label: fmt.Sprintf("all tools (%d)", r.ToolCount()), tokens: r.TotalBound(), truncated: r.All.Truncated}
		if r.ToolCount() > 1 {
			ar.sum, ar.framing, ar.hasSum = sumAll, ar.tokens.Minus(sumAll), true
		}
		out = append(out, ar)
	}
	return out
}

// bounded reports whether any row's figures are bounds rather than counts.
func bounded(rows []row) bool {
	for _, rw := range rows {
		if !rw.tokens.IsExact() || (rw.hasSum && (!rw.sum.IsExact() || !rw.framing.IsExact())) {
			return true
		}
	}
	return false
}

// title is the heading line of a report.
func (r *Report) title() string {
	var b strings.Builder
	if r.Arm != "" {
		fmt.Fprintf(&b, "arm %s: ", r.Arm)
	}
	fmt.Fprintf(&b, "model %s, num_ctx %s", r.Model, groupDigits(r.NumCtx))
	if r.Context() < r.NumCtx {
		fmt.Fprintf(&b, " (lowered to the model's context, %s)", groupDigits(r.Context()))
	}
	return b.String()
}

// WriteTable renders a report as an aligned table: per set and per tool,
// the prompt tokens each request carries for it, its share of num_ctx and,
// when v.Turns is set, its cost over an attempt; for a set, the sum of its
// tools measured one by one and the difference (the framing). WriteLegend
// explains the columns.
func WriteTable(w io.Writer, r *Report, v View) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", r.title())
	fmt.Fprintf(&b, "no tools (baseline): %s prompt tokens", tokenText(r.Baseline.Bound()))
	fmt.Fprintf(&b, "; %s sent\n\n", plural(r.Requests, "request"))
	rows := r.rows()
	if len(rows) == 0 {
		b.WriteString("no tools offered\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	head := []string{"TOOLS", "TOKENS", "NUM_CTX"}
	if v.Turns > 0 {
		head = append(head, "PER ATTEMPT")
	}
	head = append(head, "ONE BY ONE", "FRAMING")
	table := [][]string{head}
	for _, rw := range rows {
		label := rw.label
		if rw.kind == rowTool {
			label = "  " + label
		}
		cells := []string{label, tokenText(rw.tokens), shareText(r, rw.tokens)}
		if v.Turns > 0 {
			cells = append(cells, tokenText(rw.tokens.Times(v.Turns)))
		}
		if rw.hasSum {
			cells = append(cells, tokenText(rw.sum), signedText(rw.framing))
		} else {
			cells = append(cells, "", "")
		}
		table = append(table, cells)
	}
	alignRight(table, 1)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, cells := range table {
		fmt.Fprintln(tw, strings.TrimRight(strings.Join(cells, "\t"), "\t "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if h, ok := r.SharedFraming(); ok && h > 0.5 {
		fmt.Fprintf(&b, "\nThe template adds about %.0f tokens once per request as soon as a tool is offered:\n", h)
		fmt.Fprintf(&b, "offered beside others, a tool costs about its TOKENS minus %.0f.\n", h)
	}
	if r.Truncated() || bounded(rows) {
		fmt.Fprintf(&b, "\n≥, ≤: bounds. A prompt reached the context (%s tokens) and was cut: its true\nlength is larger, and what is computed from it is a bound (≥ at least, ≤ at\nmost, ? unknown).\n", groupDigits(r.Context()))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteLegend explains the columns of WriteTable, once for any number of
// tables.
func WriteLegend(w io.Writer, v View) error {
	var b strings.Builder
	b.WriteString("TOKENS       prompt tokens every request carries for the tools: the prompt offering\n")
	b.WriteString("             them minus the same prompt with no tools\n")
	b.WriteString("NUM_CTX      their share of the context window (num_ctx, or the model's own\n")
	b.WriteString("             context length when it is smaller: Ollama lowers num_ctx to it)\n")
	if v.Turns > 0 {
		from := ""
		if v.TurnsFrom != "" {
			from = " (" + v.TurnsFrom + ")"
		}
		fmt.Fprintf(&b, "PER ATTEMPT  TOKENS × %s turns%s: each turn sends them again\n", trimFloat(v.Turns), from)
	}
	b.WriteString("ONE BY ONE   the TOKENS of the set's tools added up, each tool measured alone\n")
	b.WriteString("FRAMING      TOKENS minus ONE BY ONE: what the template adds or saves by offering them together\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// shareText is a bound's share of the context, with its bound's mark.
func shareText(r *Report, b bound.Value) string {
	return b.Kind.FormatFloat(r.Share(b.N), percent)
}

// tokenText prints a bound with thousands separated: "≥2,048".
func tokenText(b bound.Value) string { return b.Format(groupDigits) }

// signedText is tokenText with a plus sign on a positive figure.
func signedText(b bound.Value) string {
	return b.Format(func(n int) string {
		if n > 0 {
			return "+" + groupDigits(n)
		}
		return groupDigits(n)
	})
}

func percent(f float64) string {
	switch {
	case f == 0:
		return "0%"
	case math.Abs(f) < 0.001:
		return "<0.1%"
	}
	return fmt.Sprintf("%.1f%%", 100*f)
}

// groupDigits writes an integer with thousands separated by commas.
func groupDigits(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func trimFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// alignRight pads the cells of columns from..end, headers included, on
// the left so that numbers line up on their last digit. Empty cells stay
// empty.
func alignRight(table [][]string, from int) {
	for c := from; c < len(table[0]); c++ {
		width := 0
		for _, rw := range table {
			width = max(width, utf8.RuneCountInString(rw[c]))
		}
		for _, rw := range table {
			if rw[c] != "" {
				rw[c] = strings.Repeat(" ", width-utf8.RuneCountInString(rw[c])) + rw[c]
			}
		}
	}
}
