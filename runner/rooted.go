package runner

import (
	"context"
	"time"

	"github.com/benchhq/bench/evaluator"
	"github.com/benchhq/bench/results"
	"github.com/benchhq/bench/sandbox"
	"github.com/benchhq/bench/tasks"
)

// Rooted runs the tasks that bring a root file system of their own
// (Harbor's task folders, package harbor): their environment is an
// image, prepared by it once, each attempt runs in a private copy of it,
// and it scores the attempt with the task's own verifier. The runner asks
// it about every task; the others are bench's own.
type Rooted interface {
	// Owns reports whether t is one of its tasks.
	Owns(t *tasks.Task) bool
	// Prepare prepares t's environment, before its first attempt.
	Prepare(ctx context.Context, t *tasks.Task) error
	// Attempt makes an attempt's world, under the folder tmpDir.
	Attempt(ctx context.Context, t *tasks.Task, tmpDir string) (RootedAttempt, error)
}

// RootedAttempt is one attempt's world of a Rooted task.
type RootedAttempt interface {
	// Workspace is the host folder the agent's file tools work in (its
	// working folder, inside the attempt's root).
	Workspace() string
	// Spec is the sandbox of its commands: its root, network as the
	// profile says.
	Spec(network bool) sandbox.Spec
	// InRoot is where the sandbox sees a host folder under its root.
	InRoot(hostDir string) string
	// Env is the environment of its commands.
	Env() []string
	// Score runs the task's verifier once the agent has stopped. An error
	// is the harness's failure, never the agent's.
	Score(ctx context.Context) (*evaluator.TestResult, error)
	// Close removes the attempt's world.
	Close() error
}

// rooted returns the Rooted that owns t, or nil.
func (r *Runner) rooted(t *tasks.Task) Rooted {
	if r.Rooted != nil && r.Rooted.Owns(t) {
		return r.Rooted
	}
	return nil
}

// scoreRooted scores an attempt of a Rooted task with its verifier.
func (r *Runner) scoreRooted(ctx context.Context, a *results.Attempt, world RootedAttempt) (*results.Attempt, error) {
	res, err := world.Score(ctx)
	switch {
	case ctx.Err() != nil:
		a.Status, a.Error = results.StatusCanceled, "interrupted while the verifier ran"
	case err != nil:
		// The harness's failure (a sandbox that cannot start): retried,
		// never scored.
		a.Status, a.Error = results.StatusInfraError, err.Error()
	default:
		reward := res.Reward()
		a.Test, a.Reward, a.Status = res, &reward, results.StatusFinished
	}
	a.FinishedAt = time.Now().UTC()
	return a, nil
}
