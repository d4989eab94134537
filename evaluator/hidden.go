// Package evaluator scores attempts: it runs a task's hidden tests after the
// agent stops, turns the outcome into a reward, and computes the statistics
// built on rewards (group-relative advantages, pass@k, intervals, comparisons).
package evaluator

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/benchhq/bench/internal/procio"
	"github.com/benchhq/bench/tasks"
)

// MaxTestOutput caps the hidden-test output kept, head and tail.
const MaxTestOutput = 64 << 10

// TestResult is the outcome of one run of a task's hidden tests.
type TestResult struct {
	// Command is the shell command that ran.
	Command string
	// ExitCode is the command's exit status; -1 if it did not exit (timeout, signal).
	ExitCode int
	// Passed is true when the command exited 0: reward 1.
	Passed bool
	// TimedOut marks a test killed at its timeout.
	TimedOut bool
	// Output is stdout and stderr interleaved, capped at MaxTestOutput.
	Output string
	// Duration is how long the tests ran.
	Duration time.Duration
}

// Reward is 1 if the hidden tests passed, 0 otherwise.
func (r *TestResult) Reward() int {
	if r != nil && r.Passed {
		return 1
	}
	return 0
}

// Wrap turns the argv of a command run in dir into one that runs it in a
// sandbox (agent.Sandbox.Command gives one). Nil runs it as it is.
type Wrap func(dir string, argv []string) []string

// RunHiddenTests copies the task's tests/ into the attempt's workspace and
// runs the task's test command there with its timeout. Only a failure to
// run the tests at all (the copy failed, the shell is missing) is an error;
// a failing or hanging test is a result with reward 0.
//
// With a wrap, the tests run in the sandbox the agent's commands ran in:
// they execute the agent's code, which must not reach the host. Their
// environment is then the command tool's (PATH, LANG, HOME = the
// workspace), not the operator's.
func RunHiddenTests(ctx context.Context, t *tasks.Task, workspace string, wrap Wrap) (*TestResult, error) {
	if err := t.CopyTests(workspace); err != nil {
		if !agentsDoing(err) {
			return nil, err
		}
		// What the agent left in the workspace (a read-only folder, an
		// immutable file) keeps the tests out: the attempt failed them.
		return &TestResult{Command: t.Tests.Command, ExitCode: -1,
			Output: fmt.Sprintf("[bench: the hidden tests could not be placed in the workspace: %v]", err)}, nil
	}
	if wrap == nil {
		return RunCommand(ctx, t.Tests.Command, workspace, t.Tests.TimeoutOr())
	}
	env := []string{"PATH=" + envOr("PATH", "/usr/local/bin:/usr/bin:/bin"), "LANG=" + envOr("LANG", "C.UTF-8"),
		"HOME=" + workspace, "BENCH_WORKSPACE=" + workspace}
	return run(ctx, wrap(workspace, []string{"/bin/sh", "-c", t.Tests.Command}), t.Tests.Command, workspace, t.Tests.TimeoutOr(), env)
}

// agentsDoing reports whether a failure to place the hidden tests comes
// from the state the agent left the workspace in (permissions, a file of
// the wrong kind) rather than from the machine (a full or failing disk),
// which is an infrastructure failure and must not be scored.
func agentsDoing(err error) bool {
	for _, e := range []error{syscall.EACCES, syscall.EPERM, syscall.ENOTDIR, syscall.EISDIR, syscall.EEXIST, syscall.ENOTEMPTY, syscall.ELOOP, syscall.ENAMETOOLONG} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// RunCommand runs a shell command in dir with a timeout, the way hidden
// tests and reference solutions run, with the operator's environment plus
// BENCH_WORKSPACE and env ("KEY=value"). The whole process group is killed
// at the timeout so that a test's children cannot outlive it.
func RunCommand(ctx context.Context, command, dir string, timeout time.Duration, env ...string) (*TestResult, error) {
	return run(ctx, []string{"/bin/sh", "-c", command}, command, dir, timeout,
		append(append(os.Environ(), "BENCH_WORKSPACE="+dir), env...))
}

// run runs argv in dir with exactly env, killing its process group at the
// timeout; command is what the result reports as having run.
func run(ctx context.Context, argv []string, command, dir string, timeout time.Duration, env []string) (*TestResult, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = env
	procio.KillGroupOnCancel(cmd, 2*time.Second)
	out := procio.New(MaxTestOutput, MaxTestOutput/2)
	cmd.Stdout = out
	cmd.Stderr = out
	start := time.Now()
	err := cmd.Run()
	res := &TestResult{Command: command, Duration: time.Since(start), Output: out.String()}
	var exit *exec.ExitError
	switch {
	case err == nil:
		res.ExitCode = 0
		res.Passed = true
	case ctx.Err() == context.DeadlineExceeded:
		res.ExitCode = -1
		res.TimedOut = true
		res.Output += fmt.Sprintf("\n[bench: hidden tests killed after %s]", timeout)
	case errors.As(err, &exit):
		res.ExitCode = exit.ExitCode()
	case errors.Is(err, exec.ErrWaitDelay):
		// The command exited but a child kept its output open.
		res.ExitCode = cmd.ProcessState.ExitCode()
		res.Passed = res.ExitCode == 0
	default:
		if ctx.Err() != nil {
			return nil, fmt.Errorf("run %q: %w", command, ctx.Err())
		}
		return nil, fmt.Errorf("run %q: %w", command, err)
	}
	return res, nil
}
