package evaluator

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/benchhq/bench/tasks"
)

// Validation is the check of one task without a model: its reference
// solution must pass the hidden tests and its untouched workspace must fail
// them; otherwise the task cannot tell a good attempt from a bad one.
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
}

// OK reports whether the task is valid.
func (v *Validation) OK() bool { return len(v.Problems) == 0 }

// SolveTimeout bounds a reference solution's run.
const SolveTimeout = 5 * time.Minute

// Validate checks one task in fresh temp folders under tmp ("" for the
// system's). solution/solve.sh runs with /bin/sh, the fresh workspace copy
// as its working folder and BENCH_TASK_DIR set to the task folder. The
// hidden tests run as in a run: under wrap when it is set (the sandbox),
// so that a task valid here is valid there.
func Validate(ctx context.Context, t *tasks.Task, tmp string, wrap Wrap) (*Validation, error) {
	v := &Validation{Task: t}
	if _, err := os.Stat(filepath.Join(t.SolutionDir(), "solve.sh")); err != nil {
		v.Problems = append(v.Problems, "no solution/solve.sh")
	} else {
		dir, err := freshCopy(t, tmp)
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		out, err := RunCommand(ctx, `/bin/sh "$BENCH_TASK_DIR/solution/solve.sh"`, dir, SolveTimeout, "BENCH_TASK_DIR="+t.Dir)
		if err != nil {
			return nil, fmt.Errorf("validate %s: run solve.sh: %w", t.ID, err)
		}
		if !out.Passed {
			v.SolveOutput = out.Output
			v.Problems = append(v.Problems, fmt.Sprintf("solution/solve.sh failed (exit %d)", out.ExitCode))
		} else {
			res, err := RunHiddenTests(ctx, t, dir, wrap)
			if err != nil {
				return nil, fmt.Errorf("validate %s: %w", t.ID, err)
			}
			v.Solution = res
			if !res.Passed {
				v.Problems = append(v.Problems, fmt.Sprintf("the reference solution fails the hidden tests (exit %d)", res.ExitCode))
			}
		}
	}
	dir, err := freshCopy(t, tmp)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	res, err := RunHiddenTests(ctx, t, dir, wrap)
	if err != nil {
		return nil, fmt.Errorf("validate %s: %w", t.ID, err)
	}
	v.Untouched = res
	if res.Passed {
		v.Problems = append(v.Problems, "the untouched workspace passes the hidden tests: they do not test the task")
	}
	return v, nil
}

func freshCopy(t *tasks.Task, tmp string) (string, error) {
	dir, err := os.MkdirTemp(tmp, "bench-validate-")
	if err != nil {
		return "", fmt.Errorf("validate %s: %w", t.ID, err)
	}
	if err := t.CopyWorkspace(dir); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}
