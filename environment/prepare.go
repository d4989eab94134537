package environment

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/benchhq/bench/evaluator"
	"github.com/benchhq/bench/internal/procio"
	"github.com/benchhq/bench/internal/tree"
	"github.com/benchhq/bench/sandbox"
	"github.com/benchhq/bench/tasks"
)

// maxStepOutput bounds the output kept of a failed step.
const maxStepOutput = 4 << 10

// build prepares both layers of t's environment in tmp:
//
//  1. a copy of the workspace, and an empty HOME;
//  2. the task's set-up step, if any, in the sandbox (with the network if
//     the task asks for it);
//  3. the tools' own warm-up on the untouched workspace (a Go module:
//     go test, which builds the packages and the tests' dependencies
//     into the build cache): HOME is then the home layer;
//  4. a copy of it, the HOME of the hidden tests run twice on the
//     reference solution (the first run warms, the second is timed):
//     the scoring layer.
func (c *Cache) build(ctx context.Context, t *tasks.Task, tmp string) (*Meta, error) {
	meta := &Meta{Task: t.ID, TaskDir: t.Dir, TaskHash: t.Hash, Toolchain: c.Toolchain(ctx), Setup: t.Environment.Setup}
	work, home := filepath.Join(tmp, "work"), filepath.Join(tmp, HomeLayer)
	for _, d := range []string{work, home} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return nil, err
		}
	}
	if err := t.CopyWorkspace(work); err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(work, "go.mod")); err == nil && lookIn(evaluator.SystemPath(c.Spec), "go") != "" {
		// A Go task starts from the standard library built once for all.
		base, err := c.goBase(ctx)
		if err != nil {
			return nil, err
		}
		if err := os.Remove(home); err != nil {
			return nil, err
		}
		if err := copyTree(base, home); err != nil {
			return nil, err
		}
		meta.Steps = append(meta.Steps, Step{Name: "start from the Go base environment", Command: "copy " + base})
	}
	user := c.Sandbox.NewUser()
	defer c.Sandbox.KillAll(context.WithoutCancel(ctx), user) //nolint:errcheck // each step waited for its processes
	spec := c.Spec
	spec.Dir, spec.Home, spec.User = work, home, user
	env := evaluator.TestEnv(t, spec, work)
	timeout := t.Environment.TimeoutOr()
	if s := t.Environment.Setup; s != "" {
		setup := spec
		setup.Network = t.Environment.Network
		st, err := c.step(ctx, "setup", s, setup, env, timeout)
		if err != nil {
			return nil, err
		}
		meta.Steps = append(meta.Steps, st)
		if st.ExitCode != 0 {
			return nil, fmt.Errorf("[environment] setup %q failed (exit %d):\n%s", s, st.ExitCode, st.Output)
		}
	}
	spec.Network = false
	if _, err := os.Stat(filepath.Join(work, "go.mod")); err == nil {
		// The workspace's own packages and tests, built and run: a failing
		// test is expected (the task is to fix it), a build that fails
		// only warms less.
		st, err := c.step(ctx, "warm go", "go test -count=1 ./...", spec, env, timeout)
		if err != nil {
			return nil, err
		}
		meta.Steps = append(meta.Steps, st)
	}
	if err := tree.Remove(work); err != nil {
		return nil, err
	}
	scoring := filepath.Join(tmp, ScoringLayer)
	if err := copyTree(home, scoring); err != nil {
		return nil, err
	}
	if err := c.warmScoring(ctx, t, tmp, scoring, meta); err != nil {
		return nil, err
	}
	return meta, nil
}

// step runs one command of the preparation in the sandbox.
func (c *Cache) step(ctx context.Context, name, command string, spec sandbox.Spec, env []string, timeout time.Duration) (Step, error) {
	st := Step{Name: name, Command: command}
	sctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd, err := c.Sandbox.Command(sctx, spec, []string{"/bin/sh", "-c", command}, env)
	if err != nil {
		return st, err
	}
	out := procio.New(maxStepOutput, maxStepOutput/4)
	cmd.Stdout, cmd.Stderr = out, out
	start := time.Now()
	err = cmd.Run()
	st.Took = time.Since(start)
	if ctx.Err() != nil {
		return st, ctx.Err()
	}
	if err != nil {
		st.ExitCode = -1
		if cmd.ProcessState != nil && cmd.ProcessState.ExitCode() >= 0 {
			st.ExitCode = cmd.ProcessState.ExitCode()
		}
		if sctx.Err() != nil {
			st.Output = fmt.Sprintf("[killed after %s]\n", timeout)
		}
		st.Output += out.String()
	}
	return st, nil
}

// warmScoring runs the hidden tests on the reference solution with the
// scoring layer as HOME: once to warm it, once to time them warm.
func (c *Cache) warmScoring(ctx context.Context, t *tasks.Task, tmp, scoring string, meta *Meta) error {
	solved, err := os.MkdirTemp(tmp, "solution-")
	if err != nil {
		return err
	}
	defer tree.Remove(solved) // never kept with the environment
	change, ok, err := Solution(ctx, t, solved)
	if err != nil || !ok {
		return err
	}
	scorer := &evaluator.Scorer{Sandbox: c.Sandbox, Spec: c.Spec, TempDir: c.TempDir}
	for i := range 2 {
		res, err := scorer.RunWithHome(ctx, t, change, scoring)
		if err != nil {
			return err
		}
		if i == 1 {
			// A golden task being recorded has nothing to be judged by
			// yet: bench validate judges its reference.
			meta.RefTest, meta.RefPassed = res.Duration, res.Passed || res.Unjudged
		}
		meta.Steps = append(meta.Steps, Step{Name: fmt.Sprintf("hidden tests on the solution (%d)", i+1), Command: res.Command,
			ExitCode: res.ExitCode, Took: res.Duration, Output: failedOutput(res)})
	}
	return nil
}

func failedOutput(res *evaluator.TestResult) string {
	if res.Passed {
		return ""
	}
	s := res.Output
	if len(s) > maxStepOutput {
		s = "..." + s[len(s)-maxStepOutput:]
	}
	return s
}

// Solution applies the task's reference solution (solution/solve.sh, run
// on the host: it is the task author's) to a fresh copy of its workspace
// in a scratch folder under dir (which the caller removes, once done with
// the change: it reads the files from there), and returns what of it
// scoring carries. ok is false when the task has no solution.
func Solution(ctx context.Context, t *tasks.Task, dir string) (*evaluator.Change, bool, error) {
	if _, err := os.Stat(filepath.Join(t.SolutionDir(), "solve.sh")); err != nil {
		return nil, false, nil
	}
	solved, err := os.MkdirTemp(dir, "solved-")
	if err != nil {
		return nil, false, err
	}
	if err := t.CopyWorkspace(solved); err != nil {
		return nil, false, err
	}
	out, err := evaluator.RunCommand(ctx, `/bin/sh "$BENCH_TASK_DIR/solution/solve.sh"`, solved, evaluator.SolveTimeout, "BENCH_TASK_DIR="+t.Dir)
	if err != nil {
		return nil, false, fmt.Errorf("run solve.sh: %w", err)
	}
	if !out.Passed {
		return nil, false, fmt.Errorf("solution/solve.sh failed (exit %d): %s", out.ExitCode, strings.TrimSpace(out.Output))
	}
	change, err := evaluator.CollectChange(t, solved)
	if err != nil {
		return nil, false, err
	}
	return change, true, nil
}

// copyTree copies src into dst (which it makes), keeping links as links.
func copyTree(src, dst string) error { return cloneTree(src, dst, false) }
