package harbor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// Validation is what `bench validate` found of a Harbor task: the
// verifier must fail the untouched environment and pass the reference
// solution (solution/solve.sh, Harbor's oracle).
type Validation struct {
	// Task is the task's ID.
	Task string
	// Untouched is the verifier's verdict on the untouched environment.
	Untouched Verdict
	// Solve is solve.sh's run; Solved the verifier's verdict after it.
	Solve  StepLog
	Solved Verdict
	// Verifier is the verifier's run after solve.sh.
	Verifier StepLog
	// Problems are the task's defects, each a sentence; none for a good task.
	Problems []string
}

// OK reports whether the task has no defect.
func (v *Validation) OK() bool { return len(v.Problems) == 0 }

// Validate prepares the task and checks its verifier both ways, each in a
// fresh copy of the environment. An error is bench's own failure or one
// of preparation (a Dockerfile step that fails); a bad verifier or
// solution is a Problem.
func (r *Runtime) Validate(ctx context.Context, t *Task, tmpDir string) (*Validation, error) {
	p, err := r.Prepare(ctx, t)
	if err != nil {
		return nil, err
	}
	defer p.Release()
	val := &Validation{Task: t.Task.ID}

	a, err := r.NewAttempt(p, tmpDir)
	if err != nil {
		return nil, err
	}
	val.Untouched, _, err = a.Verify(ctx)
	a.Close() //nolint:errcheck // a temporary copy
	if err != nil {
		return nil, err
	}
	if val.Untouched.Passed {
		val.Problems = append(val.Problems, fmt.Sprintf("the verifier passes the untouched environment (reward %v from %s): it cannot tell a solution from none", val.Untouched.Value, val.Untouched.Source))
	}

	if fi, err := os.Stat(filepath.Join(t.Task.Dir, SolveScript)); err != nil || !fi.Mode().IsRegular() {
		val.Problems = append(val.Problems, "no solution/solve.sh: the verifier cannot be checked on a reference solution")
		return val, nil
	}
	b, err := r.NewAttempt(p, tmpDir)
	if err != nil {
		return nil, err
	}
	defer b.Close() //nolint:errcheck // a temporary copy
	if val.Solve, err = b.Solve(ctx); err != nil {
		return nil, err
	}
	if val.Solve.Exit != 0 {
		val.Problems = append(val.Problems, fmt.Sprintf("solution/solve.sh exited %d: %s", val.Solve.Exit, lastLines(val.Solve.Output, 10)))
	}
	if val.Solved, val.Verifier, err = b.Verify(ctx); err != nil {
		return nil, err
	}
	switch {
	case val.Solved.Reason != "":
		val.Problems = append(val.Problems, "the verifier fails on the reference solution: "+val.Solved.Reason+verifierTail(val.Verifier))
	case !val.Solved.Passed:
		val.Problems = append(val.Problems, fmt.Sprintf("the verifier gives the reference solution %v (from %s), below the pass threshold %v%s", val.Solved.Value, val.Solved.Source, Threshold, verifierTail(val.Verifier)))
	}
	return val, nil
}

func verifierTail(l StepLog) string {
	if l.Output == "" {
		return ""
	}
	return "; its output ends: " + lastLines(l.Output, 10)
}
