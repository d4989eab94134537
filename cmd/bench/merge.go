package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/benchhq/bench/results"
	"github.com/benchhq/bench/runner"
)

const mergeUsage = `Usage: bench merge [flags] OUT.db IN.db...

Puts the pieces of one run back together: the shards that bench run --shard
I/N stored in their own files. Their plans must be identical (what only
paces a run may differ), run on the same model, and no attempt may be
finished in two of them. OUT.db gets the whole run, with its advantages
computed over the merged groups, and its report is the one the run would
have had in one piece. Attempts that no input holds are listed; the merged
run is then left interrupted, and bench run --resume RUN --db OUT.db runs
them. Exit status 1 when attempts are missing, 2 when the inputs do not fit
together (nothing is written then).

Flags:
`

func cmdMerge(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	flags := newFlagSet("merge", stderr, mergeUsage)
	runID := flags.String("run", "", "the run to merge (default: the only run of each input)")
	allowMixed := flags.Bool("allow-mixed-models", false, "merge even when the inputs ran on different weights (digests or tool overheads differ)")
	if err := parseFlags(flags, args); err != nil {
		return err
	}
	if flags.NArg() < 2 {
		return usagef("merge: expected OUT.db and at least one IN.db (see 'bench merge -h')")
	}
	outPath, inPaths := flags.Arg(0), flags.Args()[1:]
	seen := map[string]string{}
	for _, p := range append([]string{outPath}, inPaths...) {
		abs, _ := filepath.Abs(p)
		if prev, ok := seen[abs]; ok {
			return usagef("merge: %s given twice (as %s and %s): the output is a new file, each input is given once", abs, prev, p)
		}
		seen[abs] = p
	}
	var ins []runner.MergeInput
	defer func() {
		for _, in := range ins {
			in.Store.Close()
		}
	}()
	for _, p := range inPaths {
		s, err := results.OpenReadOnly(ctx, p)
		if errors.Is(err, fs.ErrNotExist) {
			return usagef("merge: %s: no such file", p)
		}
		if err != nil {
			return err
		}
		ins = append(ins, runner.MergeInput{Path: p, Store: s})
	}
	_, statErr := os.Stat(outPath)
	newDB := os.IsNotExist(statErr)
	out, err := results.Open(ctx, outPath)
	if err != nil {
		return err
	}
	res, err := runner.Merge(ctx, out, *runID, ins, *allowMixed)
	if err != nil {
		out.Close()
		if newDB {
			for _, suffix := range []string{"", "-wal", "-shm"} {
				os.Remove(outPath + suffix)
			}
		}
		if errors.Is(err, runner.ErrMergeConflict) {
			return usagef("merge: %v", err)
		}
		return fmt.Errorf("merge: %w", err)
	}
	defer out.Close()
	fmt.Fprintf(stderr, "run %s: %d pieces merged into %s: %d attempts finished, %d ended in infrastructure failures\n",
		res.Run.ID, len(ins), outPath, res.Finished, len(res.InfraErrors))
	if len(res.InfraErrors) > 0 {
		fmt.Fprintf(stderr, "infrastructure failures (not scored): %s\n", keyList(res.InfraErrors))
	}
	if !res.Complete {
		fmt.Fprintf(stderr, "%d attempts of the plan are missing (no input holds them): %s\nRun them with: bench run --resume %s --db %s\n",
			len(res.Missing), keyList(res.Missing), res.Run.ID, outPath)
		return errSilent
	}
	if err := writeRunReport(ctx, out, res.Run.ID, stdout); err != nil {
		return err
	}
	if len(res.InfraErrors) > 0 {
		// Finished with attempts not scored, as bench run says of them.
		return &notScoredError{n: len(res.InfraErrors), runID: res.Run.ID, dbArg: " --db " + outPath}
	}
	return nil
}

// keyList names attempts, the first twenty of them.
func keyList(keys []results.AttemptKey) string {
	var parts []string
	for i, k := range keys {
		if i == 20 {
			parts = append(parts, fmt.Sprintf("and %d more", len(keys)-20))
			break
		}
		parts = append(parts, k.String())
	}
	return strings.Join(parts, ", ")
}
