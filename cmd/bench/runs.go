package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
)

// cmdRuns is `bench runs`: the runs of a database, newest first, with how
// far each got, to find the id that report, export and --resume take.
func cmdRuns(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("runs", stderr, "Usage: bench runs [flags]\n\nLists the stored runs, newest first, with their progress.\n\nFlags:\n")
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
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tCREATED\tMODEL\tSUITE\tARMS\tTASKS\tG\tDONE\tPASSED\tINFRA\tSTATUS")
	for _, r := range runs {
		if r.Shard != "" {
			r.Status += " (shard " + r.Shard + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d/%d\t%d\t%d\t%s\n", r.ID, r.CreatedAt.Local().Format("2006-01-02 15:04"),
			r.Model, r.Suite, r.Arms, r.Tasks, r.AttemptsPerTask, r.Finished, r.Planned(), r.Passes, r.InfraErrors, r.Status)
	}
	return tw.Flush()
}
