package evaluator

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/benchhq/bench/evaluator/testreport"
	"github.com/benchhq/bench/internal/tree"
	"github.com/benchhq/bench/tasks"
)

// Validation is the check of one task without a model: its reference
// solution must pass the hidden tests and its untouched workspace must fail
// them; otherwise the task cannot tell a good attempt from a bad one. Both
// are scored as an attempt is: in a fresh scoring folder, the solution's
// change carried by the task's result rule.
type Validation struct {
	Task *tasks.Task
	// Solution is the hidden tests' result on the solved workspace; nil if
	// the solution could not be applied.
	Solution *TestResult
	// Untouched is the hidden tests' result on the untouched workspace.
	Untouched *TestResult
	// SolveOutput is what solve.sh printed, when it failed.
	SolveOutput string
	// Problems lists why the task is invalid; empty means valid.
	Problems []string
	// Record is the record the two runs make (a task with a per-test
	// report): the tests that fail untouched and pass solved, and those
	// that pass on both.
	Record *tasks.Record
	// Recorded is true when Validate wrote Record as the task's record.
	Recorded bool
	// RecordedExpected is true when Validate wrote the golden task's
	// expected observations (tasks.ExpectedFile).
	RecordedExpected bool
}

// OK reports whether the task is valid.
func (v *Validation) OK() bool { return len(v.Problems) == 0 }

// SolveTimeout bounds a reference solution's run.
const SolveTimeout = 5 * time.Minute

// ValidateOptions are the choices of Validate.
type ValidateOptions struct {
	// TempDir is where folders are made ("" for the system's).
	TempDir string
	// Record writes the task's record of its tests (tasks.RecordFile) when
	// the task is valid, replacing the one it has. A task with a per-test
	// report and no record is recorded in any case.
	Record bool
}

// Validate checks one task. solution/solve.sh runs on the host (it is the
// task author's, trusted) with /bin/sh, a fresh workspace copy as its
// working folder and BENCH_TASK_DIR set to the task folder; the hidden
// tests then run under the scorer, as in a run.
//
// With a per-test report, the task's record must say what the two runs
// say; a task without one, or asked to (opts.Record), gets it written.
func Validate(ctx context.Context, t *tasks.Task, s *Scorer, opts ValidateOptions) (*Validation, error) {
	v := &Validation{Task: t}
	if t.Impossible() {
		// An impossible task's records are its reference solution's,
		// mutated by hand (docs/impossible.md): recording them again from
		// that solution would make the task possible.
		opts.Record = false
		if t.Golden != nil && t.Expected == nil {
			v.Problems = append(v.Problems, fmt.Sprintf("an impossible task has no usable %s (missing, or stale since the task changed), and bench validate never records one from its reference solution: record it on the task it was built from, copy it here and mutate one case by hand (docs/impossible.md)", tasks.ExpectedFile))
			return v, nil
		}
	}
	record, expected := t.Record, t.Expected
	if opts.Record || t.Tests.Report == "" {
		t.Record = nil // score by the reports themselves
	}
	defer func() {
		if !v.Recorded {
			t.Record = record
		}
		if !v.RecordedExpected {
			t.Expected = expected
		}
	}()
	if _, err := os.Stat(filepath.Join(t.SolutionDir(), "solve.sh")); err != nil {
		v.Problems = append(v.Problems, "no solution/solve.sh")
	} else {
		dir, err := os.MkdirTemp(opts.TempDir, "bench-validate-")
		if err != nil {
			return nil, fmt.Errorf("validate %s: %w", t.ID, err)
		}
		defer tree.Remove(dir)
		if err := t.CopyWorkspace(dir); err != nil {
			return nil, err
		}
		out, err := RunCommand(ctx, `/bin/sh "$BENCH_TASK_DIR/solution/solve.sh"`, dir, SolveTimeout, "BENCH_TASK_DIR="+t.Dir)
		if err != nil {
			return nil, fmt.Errorf("validate %s: run solve.sh: %w", t.ID, err)
		}
		if !out.Passed {
			v.SolveOutput = out.Output
			v.Problems = append(v.Problems, fmt.Sprintf("solution/solve.sh failed (exit %d)", out.ExitCode))
		} else {
			change, err := CollectChange(t, dir)
			if err != nil {
				return nil, fmt.Errorf("validate %s: %w", t.ID, err)
			}
			if t.Golden != nil {
				if err := v.expect(ctx, s, change, opts.Record || expected == nil); err != nil {
					return nil, err
				}
			}
			if v.OK() {
				if v.Solution, err = s.RunScored(ctx, t, change); err != nil {
					return nil, fmt.Errorf("validate %s: %w", t.ID, err)
				}
				v.Solution.Change = change
			}
		}
	}
	if t.Golden != nil && t.Expected == nil {
		// Nothing to compare the untouched workspace with: the solution's
		// observations were not usable (the problems say why).
		if v.OK() {
			v.Problems = append(v.Problems, "no expected observations: the reference solution could not be observed")
		}
		return v, nil
	}
	var err error
	if v.Untouched, err = s.Run(ctx, t, nil); err != nil {
		return nil, fmt.Errorf("validate %s: %w", t.ID, err)
	}
	v.judge(record)
	if v.OK() && v.Record != nil && (opts.Record || record == nil) {
		if err := t.WriteRecord(v.Record); err != nil {
			return nil, err
		}
		v.Recorded = true
	}
	if v.OK() && t.Golden != nil && (opts.Record || expected == nil) {
		if err := t.WriteExpected(); err != nil {
			return nil, err
		}
		v.RecordedExpected = true
	}
	return v, nil
}

// expect runs a golden task's observation command twice on the reference
// solution's change: a case whose observations differ between the two runs
// (as the task's comparison reads them) is nondeterministic, and the task
// is refused. With record, the first run's observations become the task's
// expected ones (in memory: Validate writes them once the task is valid);
// otherwise they must match the recorded ones.
func (v *Validation) expect(ctx context.Context, s *Scorer, change *Change, record bool) error {
	t := v.Task
	var runs [2]*Observations
	for i := range runs {
		home, release, err := s.home(ctx, t)
		if err != nil {
			return err
		}
		runs[i], err = s.observe(ctx, t, change, home)
		release()
		if err != nil {
			return fmt.Errorf("validate %s: %w", t.ID, err)
		}
	}
	ids := runs[0].IDs
	kind := t.Golden.CompareOr()
	same := func(a, b []byte) string {
		if kind == tasks.CompareChecker {
			// What a checker makes of two observations is its own
			// business: the reference must write the same bytes.
			return Match(tasks.CompareExact, 0, a, b)
		}
		return Match(kind, t.Golden.Tolerance, a, b)
	}
	var problems []string
	cases := map[string][]byte{}
	for _, id := range ids {
		first, p1 := runs[0].Got[id], runs[0].Problem[id]
		second, p2 := runs[1].Got[id], runs[1].Problem[id]
		switch {
		case p1 != "" || p2 != "":
			problems = append(problems, fmt.Sprintf("case %s: the reference solution left no usable observation (%s)", id, cmp.Or(p1, p2)))
		case same(second, first) != "":
			problems = append(problems, fmt.Sprintf("case %s: the reference solution's two runs disagree, so it is nondeterministic (%s)", id, same(second, first)))
		case !record && t.Expected != nil:
			want, err := t.Expected.Cases[id].Bytes()
			if err != nil {
				return fmt.Errorf("validate %s: case %s: %w", t.ID, id, err)
			}
			if d := same(first, want); d != "" {
				problems = append(problems, fmt.Sprintf("case %s: the reference solution's observation no longer matches the record (%s); if that is meant, record again: %s", id, d, t.ExpectedCommand()))
			}
		}
		cases[id] = first
	}
	if len(problems) > 0 {
		v.Problems = append(v.Problems, firstN(problems, 5)...)
		if len(problems) > 5 {
			v.Problems = append(v.Problems, fmt.Sprintf("and %d more cases", len(problems)-5))
		}
		if v.SolveOutput == "" {
			v.SolveOutput = runs[0].Run.Output
		}
		return nil
	}
	if record {
		return t.SetExpected(cases)
	}
	return nil
}

// judge sets the problems of a validation from its two results.
func (v *Validation) judge(record *tasks.Record) {
	t, sol, unt := v.Task, v.Solution, v.Untouched
	if sol != nil && !sol.Passed {
		msg := fmt.Sprintf("the reference solution fails the hidden tests (exit %d", sol.ExitCode)
		switch {
		case sol.ReportError != "":
			msg += "; " + sol.ReportError
		case len(sol.Failed) > 0:
			msg += "; failing: " + strings.Join(firstN(sol.Failed, 5), ", ")
			for _, c := range sol.Cases {
				if c.ID == sol.Failed[0] && c.Message != "" {
					msg += "; " + c.ID + ": " + c.Message
				}
			}
		}
		msg += ")"
		if sol.Change != nil && len(sol.Change.LeftOut) > 0 {
			var names []string
			for _, l := range firstN(sol.Change.LeftOut, 5) {
				names = append(names, l.Path+" ("+l.Reason+")")
			}
			msg += "; its change left out of scoring: " + strings.Join(names, ", ")
		}
		v.Problems = append(v.Problems, msg)
	}
	outOfProcess := t.Golden != nil || t.Check != nil
	if t.Tests.Report == "" || outOfProcess {
		if unt.Passed {
			v.Problems = append(v.Problems, "the untouched workspace passes: the hidden tests, cases or checks do not test the task")
		}
	}
	if t.Tests.Report == "" {
		return
	}
	if sol == nil || !sol.Passed {
		return
	}
	// An untouched workspace may well break the report (a syntax error, a
	// crash): it then has no cases, and all its tests count as failing.
	up := map[string]bool{}
	for _, c := range unt.Cases {
		if c.Outcome == testreport.Pass {
			up[c.ID] = true
		}
	}
	r := &tasks.Record{Report: t.Tests.Report}
	for _, c := range sol.Cases {
		switch {
		case strings.HasPrefix(c.ID, GoldenPrefix) || strings.HasPrefix(c.ID, CheckPrefix):
			// Judged out of process: not the hidden tests' record.
		case c.Outcome != testreport.Pass:
		case up[c.ID]:
			r.PassToPass = append(r.PassToPass, c.ID)
		default:
			r.FailToPass = append(r.FailToPass, c.ID)
		}
	}
	if len(r.FailToPass) == 0 && !outOfProcess {
		v.Problems = append(v.Problems, "no test fails on the untouched workspace and passes with the solution: the tests do not test the task")
		return
	}
	v.Record = r
	if record != nil {
		if d := recordDiff(record, r); d != "" {
			v.Problems = append(v.Problems, fmt.Sprintf("the tests no longer do what the record says (%s); if that is meant, refresh it: %s", d, t.RecordCommand()))
		}
	}
}

// recordDiff words how two records differ, or "".
func recordDiff(was, now *tasks.Record) string {
	var parts []string
	for _, l := range []struct {
		name     string
		was, now []string
	}{{"fail_to_pass", was.FailToPass, now.FailToPass}, {"pass_to_pass", was.PassToPass, now.PassToPass}} {
		for _, id := range l.was {
			if !slices.Contains(l.now, id) {
				parts = append(parts, fmt.Sprintf("%s no longer %s", id, l.name))
			}
		}
		for _, id := range l.now {
			if !slices.Contains(l.was, id) {
				parts = append(parts, fmt.Sprintf("%s now %s", id, l.name))
			}
		}
	}
	return strings.Join(firstN(parts, 5), "; ")
}

func firstN[T any](s []T, n int) []T {
	if len(s) > n {
		return s[:n]
	}
	return s
}
