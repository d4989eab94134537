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

	"github.com/benchhq/bench/agent/mcp"
	"github.com/benchhq/bench/environment"
	"github.com/benchhq/bench/evaluator"
	"github.com/benchhq/bench/internal/tree"
	"github.com/benchhq/bench/sandbox"
	"github.com/benchhq/bench/tasks"
)

func cmdValidate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("validate", stderr, "Usage: bench validate [flags] [SUITE|TASK]\n\nChecks every task without a model: its reference solution (solution/solve.sh)\nmust pass the hidden tests, and its untouched workspace must fail them, both\nscored as in a run (a fresh scoring folder, the task's result rule, the\nsandbox). A task whose tests report each test gets its record written\n("+tasks.RecordFile+": the tests that must pass) when it has none, and\nchecked when it has one.\n\nFlags:\n")
	jobs := fs.Int("j", 2, "tasks checked at once")
	verbose := fs.Bool("v", false, "show the test output of invalid tasks")
	mode := fs.String("sandbox", sandbox.Required, "run the hidden tests in the bubblewrap sandbox, as bench run does: required, or off (on the host, unisolated)")
	envDir := fs.String("cache", "", "`folder` where the tasks' prepared environments are kept (default $BENCH_CACHE/envs or ~/.cache/bench/envs; see bench cache)")
	record := fs.Bool("record", false, "write each valid task's record of its tests again ("+tasks.RecordFile+"), after its tests changed")
	startTimeout := fs.Duration("server-start-timeout", mcp.DefaultStartTimeout, startTimeoutHelp)
	hf := addHarborFlags(fs)
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
	if isHarbor, err := hf.isHarbor(dir); err != nil {
		return err
	} else if isHarbor {
		return validateHarbor(ctx, dir, hf, *mode, *envDir, *jobs, *verbose, stdout, stderr)
	}
	load := tasks.LoadSuite
	if *record {
		load = tasks.LoadSuiteToRecord
	}
	suite, err := load(dir)
	if err != nil {
		return err
	}
	if err := sandbox.ValidateMode(*mode); err != nil {
		return usagef("validate: --sandbox: %v", err)
	}
	sb, err := sandboxFor(ctx, *mode)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "sandbox: %s\n", sb)
	hide := []string{suite.Dir}
	for _, t := range suite.Tasks {
		hide = append(hide, t.Dir)
	}
	spec := sandbox.Spec{Hide: hide}
	cache := &environment.Cache{Dir: *envDir, Sandbox: sb, Spec: spec}
	defer cache.Close()
	if !sb.Isolated() {
		// Views on the host, reachable by the sandbox user through a temp
		// folder, not through the operator's home.
		if cache.ViewsDir, err = os.MkdirTemp("", "bench-views-"); err != nil {
			return fmt.Errorf("make the folder of the environments' views: %w", err)
		}
		defer tree.Remove(cache.ViewsDir)
	}
	envs := make([]*environment.Env, len(suite.Tasks))
	envTook := make([]time.Duration, len(suite.Tasks))
	vals := make([]*evaluator.Validation, len(suite.Tasks))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(*jobs)
	start := time.Now()
	for i, t := range suite.Tasks {
		g.Go(func() error {
			t0 := time.Now()
			env, err := cache.Prepare(gctx, t)
			if err != nil {
				return err
			}
			envs[i], envTook[i] = env, time.Since(t0)
			scorer := &evaluator.Scorer{Sandbox: sb, Spec: spec, Home: func(context.Context, *tasks.Task) (string, func(), error) { return env.ScoringView() }}
			v, err := evaluator.Validate(gctx, t, scorer, evaluator.ValidateOptions{Record: *record})
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
	fmt.Fprintln(tw, "TASK\tENV\tSOLUTION\tUNTOUCHED\tJUDGED BY\tVERDICT")
	bad := 0
	for i, v := range vals {
		envCol := "cached"
		if envs[i].Fresh {
			envCol = "prepared " + envTook[i].Round(100*time.Millisecond).String()
		}
		sol := "-"
		if v.Solution != nil {
			sol = passFail(v.Solution.Passed) + fmt.Sprintf(" (%s)", v.Solution.Duration.Round(time.Millisecond))
		} else if v.SolveOutput != "" {
			sol = "solve.sh failed"
		}
		unt := "-"
		if v.Untouched != nil {
			unt = passFail(v.Untouched.Passed) + fmt.Sprintf(" (%s)", v.Untouched.Duration.Round(time.Millisecond))
		}
		verdict := "ok"
		if !v.OK() {
			bad++
			verdict = "INVALID: " + strings.Join(v.Problems, "; ")
		} else if v.Solution != nil && v.Solution.CanaryNote != "" {
			verdict = "ok; but " + v.Solution.CanaryNote
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", v.Task.ID, envCol, sol, unt, testsColumn(v), verdict)
	}
	tw.Flush()
	fmt.Fprintf(stdout, "%s, %d valid, %d invalid (%s)\n", count(len(vals), "task"), len(vals)-bad, bad, time.Since(start).Round(time.Millisecond))
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
			if v.Untouched != nil && v.Untouched.Passed {
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

// testsColumn says what a task's rewards rest on: its golden cases (and
// whether their expected observations were recorded now), its black-box
// check, its recorded tests (and whether they were written now), or the
// exit status alone.
func testsColumn(v *evaluator.Validation) string {
	t := v.Task
	var parts []string
	if t.Golden != nil {
		s := "golden"
		if t.Expected != nil {
			s = fmt.Sprintf("golden, %d cases", len(t.Expected.Cases))
		}
		if v.RecordedExpected {
			s += " (recorded)"
		}
		parts = append(parts, s)
	}
	if t.Check != nil {
		parts = append(parts, "black-box check")
	}
	switch {
	case t.Tests.Command == "":
	case t.Tests.Report == "":
		parts = append(parts, "exit status only")
	default:
		r := v.Record
		if r == nil {
			r = t.Record
		}
		s := t.Tests.Report
		if r != nil {
			s = fmt.Sprintf("%d+%d %s", len(r.FailToPass), len(r.PassToPass), t.Tests.Report)
		}
		if v.Recorded {
			s += " (recorded)"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " + ")
}

func passFail(ok bool) string {
	if ok {
		return "pass"
	}
	return "fail"
}
