package main

import (
	"context"
	"fmt"
	"io"

	"github.com/benchhq/bench/results"
)

// statusIncomplete is what bench runs shows for a run that finished with
// attempts not scored (infrastructure failures after their retries).
const statusIncomplete = "incomplete"

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
	// A run that finished with attempts not scored is not shown as
	// plainly finished: its pass rate leaves them out.
	incomplete := ""
	for i, r := range runs {
		if r.Status == results.RunFinished && r.InfraErrors > 0 {
			runs[i].Status = statusIncomplete
			if incomplete == "" {
				incomplete = r.ID
			}
		}
	}
	if err := results.WriteRunStats(stdout, runs); err != nil {
		return err
	}
	for _, r := range runs {
		if r.Stale {
			fmt.Fprintf(stdout, "\nstale: marked running, but no bench process holds it (the bench running it was killed).\nContinue one with: bench run --resume %s --db %s\n", r.ID, *db)
			break
		}
	}
	if incomplete != "" {
		fmt.Fprintf(stdout, "\n%s: finished, but attempts counted under INFRA ended in infrastructure failures after their retries: not scored, left out of PASS.\nRun them again with: bench run --resume %s --db %s\n", statusIncomplete, incomplete, *db)
	}
	return nil
}
