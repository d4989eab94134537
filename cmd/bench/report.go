package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"

	"github.com/benchhq/bench/results"
	"github.com/benchhq/bench/view"
)

const reportUsage = `Usage: bench report [flags] [RUN]

Prints the report of a stored run (default: the latest): the run's plan,
then per task and arm the passes, pass@k, pass^k, turns, tokens and wall
time, then per arm the pass rate with its 95% interval, denials and
truncated turns, then each arm compared with the first (paired tests),
and the share of groups with no training signal. --format html writes the
run page of bench view as one self-contained file to share (styles
inlined, no script, nothing fetched).

Flags:
`

func cmdReport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("report", stderr, reportUsage)
	db := fs.String("db", "bench.db", "SQLite file of results")
	format := fs.String("format", "table", "output format: table, json, markdown, csv or html")
	ks := fs.String("k", "", "comma-separated k of pass@k and pass^k, each from 1 to G (default 1, the powers of 2 below G, and G)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return usagef("report: expected at most one run id, got %d arguments", fs.NArg())
	}
	html := *format == "html"
	f, err := results.ParseFormat(*format)
	if err != nil && !html {
		return usagef("report: --format: %v, or html", err)
	}
	kList, err := parseKs(*ks)
	if err != nil {
		return usagef("report: --k: %v", err)
	}
	store, err := openResults(ctx, "report", *db)
	if err != nil {
		return err
	}
	defer store.Close()
	var run *results.Run
	if fs.NArg() == 1 {
		run, err = store.GetRun(ctx, fs.Arg(0))
	} else {
		run, err = store.LatestRun(ctx)
	}
	var noRun *results.NoRunError
	if errors.As(err, &noRun) {
		return usagef("report: no run %s in %s ('bench runs --db %s' lists them)", noRun.ID, *db, *db)
	}
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	for _, k := range kList {
		if k > run.AttemptsPerTask {
			return usagef("report: --k %d: run %s has G = %d attempts per task, want k <= %d", k, run.ID, run.AttemptsPerTask, run.AttemptsPerTask)
		}
	}
	if html {
		return view.WriteReport(ctx, stdout, store, run.ID, *db, results.ReportOptions{Ks: kList})
	}
	rep, err := store.Report(ctx, run.ID, results.ReportOptions{Ks: kList})
	if err != nil {
		return err
	}
	return rep.Write(stdout, f)
}

// writeRunReport writes the table report of a run, as `bench report` does.
func writeRunReport(ctx context.Context, store *results.Store, runID string, w io.Writer) error {
	rep, err := store.Report(ctx, runID, results.ReportOptions{})
	if err != nil {
		return err
	}
	return rep.Write(w, results.FormatTable)
}

// openResults opens an existing results file read-only; a missing file is
// a usage error naming --db.
func openResults(ctx context.Context, cmd, db string) (*results.Store, error) {
	s, err := results.OpenReadOnly(ctx, db)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, usagef("%s: --db %s: no such file", cmd, db)
	}
	return s, err
}

// parseKs parses a comma-separated list of positive integers; "" is nil.
func parseKs(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var ks []int
	for _, part := range strings.Split(s, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || k < 1 {
			return nil, fmt.Errorf("%q: want positive integers separated by commas, such as 1,4", part)
		}
		ks = append(ks, k)
	}
	return ks, nil
}
