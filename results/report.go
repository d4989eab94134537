package results

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"
)

// Widest arm and task names shown in full in a summary; longer ones are
// cut so that a summary fits a 100-column terminal.
const (
	maxArmWidth  = 16
	maxTaskWidth = 30
)

// WriteSummary renders a run's summary (from Summary) as an aligned table:
// one row per arm and task with passes over finished attempts, pass rate,
// the means per finished attempt (turns, prompt and completion tokens
// summed over turns, agent wall time) and the infrastructure errors; then a
// total row per arm. run may be nil, which leaves out the header.
func WriteSummary(w io.Writer, run *Run, rows []TaskSummary) error {
	var b strings.Builder
	if run != nil {
		writeRunHeader(&b, run)
	}
	if len(rows) == 0 {
		b.WriteString("no arms or tasks in this run\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	table := [][]string{{"ARM", "TASK", "PASSED", "RATE", "TURNS", "PROMPT", "COMPL", "WALL", "INFRA"}}
	for i := 0; i < len(rows); {
		j := i
		for j < len(rows) && rows[j].Arm == rows[i].Arm {
			j++
		}
		for k, r := range rows[i:j] {
			arm := ""
			if k == 0 {
				arm = cut(r.Arm, maxArmWidth)
			}
			table = append(table, summaryCells(arm, cut(r.Task, maxTaskWidth), r))
		}
		table = append(table, summaryCells("", "all tasks", total(rows[i:j])))
		i = j
	}
	alignRight(table, 2)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, cells := range table {
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	b.WriteString("PASSED: passed/finished attempts. TURNS, PROMPT and COMPL (tokens over all turns)\n")
	b.WriteString("and WALL (agent loop) are means per finished attempt. INFRA: infrastructure errors.\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func writeRunHeader(b *strings.Builder, run *Run) {
	fmt.Fprintf(b, "run %s", run.ID)
	if run.Name != "" {
		fmt.Fprintf(b, " (%s)", run.Name)
	}
	fmt.Fprintf(b, "  model %s  suite %s  G=%d  %s\n", run.Model, run.Suite, run.AttemptsPerTask, run.Status)
	fmt.Fprintf(b, "created %s", run.CreatedAt.UTC().Format("2006-01-02 15:04 UTC"))
	if run.FinishedAt != nil {
		fmt.Fprintf(b, ", ended %s", run.FinishedAt.UTC().Format("2006-01-02 15:04 UTC"))
	}
	if len(run.Options) > 0 {
		keys := make([]string, 0, len(run.Options))
		for k := range run.Options {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteString("  options")
		for _, k := range keys {
			fmt.Fprintf(b, " %s=%v", k, run.Options[k])
		}
	}
	b.WriteString("\n\n")
}

func summaryCells(arm, task string, r TaskSummary) []string {
	cells := []string{arm, task, fmt.Sprintf("%d/%d", r.Passes, r.Finished)}
	if r.Finished == 0 {
		cells = append(cells, "-", "-", "-", "-", "-")
	} else {
		cells = append(cells,
			fmt.Sprintf("%.0f%%", 100*r.PassRate()),
			fmt.Sprintf("%.1f", r.MeanTurns),
			formatTokens(r.MeanPromptTokens),
			formatTokens(r.MeanCompletionTokens),
			formatWall(r.MeanWall))
	}
	return append(cells, fmt.Sprint(r.InfraErrors))
}

// total sums an arm's rows; means are weighted by finished attempts.
func total(rows []TaskSummary) TaskSummary {
	var t TaskSummary
	var turns, prompt, compl, wall float64
	for _, r := range rows {
		t.Attempts += r.Attempts
		t.Finished += r.Finished
		t.InfraErrors += r.InfraErrors
		t.Canceled += r.Canceled
		t.Passes += r.Passes
		f := float64(r.Finished)
		turns += f * r.MeanTurns
		prompt += f * r.MeanPromptTokens
		compl += f * r.MeanCompletionTokens
		wall += f * float64(r.MeanWall)
	}
	if t.Finished > 0 {
		f := float64(t.Finished)
		t.MeanTurns, t.MeanPromptTokens, t.MeanCompletionTokens = turns/f, prompt/f, compl/f
		t.MeanWall = time.Duration(wall / f)
	}
	return t
}

// alignRight pads the cells of columns from..end on the left so that
// numbers line up on their last digit.
func alignRight(table [][]string, from int) {
	for c := from; c < len(table[0]); c++ {
		width := 0
		for _, row := range table {
			width = max(width, utf8.RuneCountInString(row[c]))
		}
		for _, row := range table {
			row[c] = strings.Repeat(" ", width-utf8.RuneCountInString(row[c])) + row[c]
		}
	}
}

// cut shortens s to n runes, marking the cut with an ellipsis.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
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
