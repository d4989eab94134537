package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/benchhq/bench/results"
)

// runsWidth is the width `bench runs` fits its table in: a terminal's.
const runsWidth = 80

// cmdRuns is `bench runs`: the runs of a database, newest first, with how
// far each got, to find the id that report, export and --resume take.
func cmdRuns(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("runs", stderr, "Usage: bench runs [flags]\n\nLists the stored runs, newest first: id, model, suite, attempts done of\nplanned (arms × tasks × G), passes, infrastructure errors and status.\n\nFlags:\n")
	db := fs.String("db", "bench.db", "SQLite file of results")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("runs: unexpected argument %q (flags only)", fs.Arg(0))
	}
	store, err := openResults(ctx, "runs", *db)
	if err != nil {
		return err
	}
	defer store.Close()
	runs, err := store.RunStats(ctx)
	if err != nil {
		return err
	}
	if len(runs) == 0 {
		fmt.Fprintf(stdout, "no runs in %s\n", *db)
		return nil
	}
	if err := writeRuns(stdout, runs); err != nil {
		return err
	}
	for _, r := range runs {
		if r.Stale {
			fmt.Fprintf(stdout, "\nstale: marked running, but no bench process holds it (the bench running it was killed).\nContinue one with: bench run --resume %s --db %s\n", r.ID, *db)
			break
		}
	}
	return nil
}

// writeRuns writes the table of runs within runsWidth columns, cutting the
// model and suite names in the middle when they do not fit.
func writeRuns(w io.Writer, runs []results.RunStat) error {
	rows := [][]string{{"RUN", "MODEL", "SUITE", "DONE", "PASS", "INFRA", "STATUS"}}
	for _, r := range runs {
		rows = append(rows, []string{r.ID, r.Model, r.Suite, fmt.Sprintf("%d/%d", r.Finished, r.Planned()),
			strconv.Itoa(r.Passes), strconv.Itoa(r.InfraErrors), runStatus(r)})
	}
	const gap, model, suite = 2, 1, 2
	widths := make([]int, len(rows[0]))
	for _, row := range rows {
		for c, cell := range row {
			widths[c] = max(widths[c], utf8.RuneCountInString(cell))
		}
	}
	total := gap * (len(widths) - 1)
	for _, n := range widths {
		total += n
	}
	for total > runsWidth {
		c := model
		if widths[suite] > widths[model] {
			c = suite
		}
		if widths[c] <= 8 {
			break
		}
		widths[c]--
		total--
	}
	tw := tabwriter.NewWriter(w, 0, 0, gap, ' ', 0)
	for _, row := range rows {
		row[model], row[suite] = cutName(row[model], widths[model]), cutName(row[suite], widths[suite])
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	return tw.Flush()
}

// cutName shortens s to n runes by cutting out its middle, marked with an
// ellipsis, so that names differing at either end stay apart.
func cutName(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	tail := (n - 1) / 2
	return string(r[:n-1-tail]) + "…" + string(r[len(r)-tail:])
}

// runStatus is a run's status as bench runs shows it: "stale" for a run
// marked running that no process runs.
func runStatus(r results.RunStat) string {
	if r.Stale {
		return "stale"
	}
	return r.Status
}
