package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/agent/mcp"
	"github.com/benchhq/bench/evaluator"
	"github.com/benchhq/bench/tasks"
)

func cmdValidate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("validate", stderr, "Usage: bench validate [flags] [SUITE|TASK]\n\nChecks every task without a model: its reference solution (solution/solve.sh)\nmust pass the hidden tests, its untouched workspace must fail them, and each\nMCP server it declares must start and list its tools as in a run.\n\nFlags:\n")
	jobs := fs.Int("j", 2, "tasks checked at once")
	verbose := fs.Bool("v", false, "show the test output of invalid tasks")
	sandbox := fs.String("sandbox", agent.SandboxAuto, "run the hidden tests in the bubblewrap sandbox, as bench run does: auto, required, off")
	startTimeout := fs.Duration("server-start-timeout", mcp.DefaultStartTimeout, startTimeoutHelp)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return usagef("validate: expected one suite or task folder, got %d arguments", fs.NArg())
	}
	if *jobs < 1 {
		return usagef("validate: -j: expected at least 1, got %d", *jobs)
	}
	dir := DefaultSuite
	if fs.NArg() == 1 {
		dir = fs.Arg(0)
	}
	if _, err := os.Stat(dir); err != nil {
		return usagef("validate: %s: no such folder", dir)
	}
	suite, err := tasks.LoadSuite(dir)
	if err != nil {
		return err
	}
	if err := (agent.SandboxConfig{Mode: *sandbox}).Validate("--sandbox"); err != nil {
		return usagef("validate: --sandbox: expected auto, required or off, got %q", *sandbox)
	}
	sb, err := sandboxFor(ctx, *sandbox, stderr)
	if err != nil {
		return err
	}
	if sb != nil {
		fmt.Fprintf(stderr, "sandbox: %s\n", sb)
	}
	wrap := evaluator.Wrap(sb.Command(agent.SandboxConfig{}.Confinement(false)))
	vals := make([]*evaluator.Validation, len(suite.Tasks))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(*jobs)
	start := time.Now()
	for i, t := range suite.Tasks {
		g.Go(func() error {
			v, err := evaluator.Validate(gctx, t, "", wrap)
			if err != nil {
				return err
			}
			vals[i] = v
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	addServerProblems(ctx, vals, *startTimeout, stderr)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TASK\tSOLUTION\tUNTOUCHED\tVERDICT")
	bad := 0
	for _, v := range vals {
		sol := "-"
		if v.Solution != nil {
			sol = passFail(v.Solution.Passed) + fmt.Sprintf(" (%s)", v.Solution.Duration.Round(time.Millisecond))
		} else if v.SolveOutput != "" {
			sol = "solve.sh failed"
		}
		unt := passFail(v.Untouched.Passed) + fmt.Sprintf(" (%s)", v.Untouched.Duration.Round(time.Millisecond))
		verdict := "ok"
		if !v.OK() {
			bad++
			verdict = "INVALID: " + strings.Join(v.Problems, "; ")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", v.Task.ID, sol, unt, verdict)
	}
	tw.Flush()
	fmt.Fprintf(stdout, "%d tasks, %d valid, %d invalid (%s)\n", len(vals), len(vals)-bad, bad, time.Since(start).Round(time.Millisecond))
	if *verbose {
		for _, v := range vals {
			if v.OK() {
				continue
			}
			fmt.Fprintf(stdout, "\n== %s ==\n", v.Task.ID)
			if v.SolveOutput != "" {
				fmt.Fprintf(stdout, "-- solve.sh --\n%s\n", v.SolveOutput)
			}
			if v.Solution != nil && !v.Solution.Passed {
				fmt.Fprintf(stdout, "-- hidden tests on the solution --\n%s\n", v.Solution.Output)
			}
			if v.Untouched.Passed {
				fmt.Fprintf(stdout, "-- hidden tests on the untouched workspace --\n%s\n", v.Untouched.Output)
			}
		}
	}
	if bad > 0 {
		if !*verbose {
			fmt.Fprintln(stderr, "bench: some tasks are invalid; run with -v to see the test output")
		}
		return errSilent
	}
	return nil
}

func passFail(ok bool) string {
	if ok {
		return "pass"
	}
	return "fail"
}
