package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/benchhq/bench/results"
)

func cmdReport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("report", stderr, "Usage: bench report [flags] [RUN]\n\nPrints the summary of a stored run (default: the latest).\n\nFlags:\n")
	db := fs.String("db", "bench.db", "SQLite file of results")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return usagef("report: expected at most one run id, got %d arguments", fs.NArg())
	}
	if _, err := os.Stat(*db); err != nil {
		return usagef("report: --db %s: no such file", *db)
	}
	store, err := results.OpenReadOnly(ctx, *db)
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
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	rows, err := store.Summary(ctx, run.ID)
	if err != nil {
		return fmt.Errorf("report %s: %w", run.ID, err)
	}
	return results.WriteSummary(stdout, run, rows)
}
