package runner

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/agent/mcp"
	"github.com/benchhq/bench/endpoint"
	"github.com/benchhq/bench/environment"
	"github.com/benchhq/bench/evaluator"
	"github.com/benchhq/bench/internal/tree"
	"github.com/benchhq/bench/results"
	"github.com/benchhq/bench/sandbox"
	"github.com/benchhq/bench/tasks"
)

// attempt runs one attempt end to end: a fresh workspace copy, the tools,
// the agent loop, the hidden tests. The returned error is reserved for
// failures of the harness itself (the disk, a broken task folder); the
// model's failures are in the attempt's status.
//
// take waits for a model slot, just before the agent loop, and give gives
// it back when the loop ends: setting up and scoring hold none. toScore
// waits for the attempt's place among those being scored (stages), once
// its processes are ended; the wait is no part of the attempt's time.
func (r *Runner) attempt(ctx context.Context, plan *Plan, run *results.Run, j Job, take func(context.Context) (agent.Model, error), give, toScore func()) (*results.Attempt, error) {
	a := &results.Attempt{
		RunID:     run.ID,
		Key:       results.AttemptKey{Arm: j.Arm.Name, Task: j.Task.ID, Index: j.Index},
		Seed:      j.Seed,
		StartedAt: time.Now().UTC(),
	}
	dir, err := os.MkdirTemp(r.scratch, "bench-attempt-")
	if err != nil {
		return nil, fmt.Errorf("attempt %s/%s#%d: make temp folder: %w", j.Arm.Name, j.Task.ID, j.Index, err)
	}
	if plan.KeepWorkspaces {
		r.logf("attempt %s/%s#%d: workspace kept in %s", j.Arm.Name, j.Task.ID, j.Index, dir)
	} else {
		defer r.removeLater(dir)
	}
	wsDir := filepath.Join(dir, "workspace")
	// A task with a root file system of its own: its world is a copy of
	// its prepared environment, not a workspace folder (rooted.go).
	var world RootedAttempt
	if rt := r.rooted(j.Task); rt != nil {
		if world, err = rt.Attempt(ctx, j.Task, dir); err != nil {
			return infraFailure(a, nil, err), nil
		}
		defer r.later(func() { _ = world.Close() })
		wsDir = world.Workspace()
	} else if err := os.Mkdir(wsDir, 0o755); err != nil {
		return nil, fmt.Errorf("attempt %s/%s#%d: %w", j.Arm.Name, j.Task.ID, j.Index, err)
	} else if err := j.Task.CopyWorkspace(wsDir); err != nil {
		return nil, err
	}
	ws, err := agent.NewWorkspace(wsDir)
	if err != nil {
		return nil, fmt.Errorf("attempt %s/%s#%d: %w", j.Arm.Name, j.Task.ID, j.Index, err)
	}
	prof, err := plan.Profiles.Lookup(j.Arm.Profile)
	if err != nil {
		return nil, fmt.Errorf("arm %s: %w", j.Arm.Name, err)
	}
	// HOME: a private view of the task's prepared environment, its warm
	// caches included.
	env := r.envs[j.Task.Dir]
	home := filepath.Join(dir, "home")
	if env != nil {
		view, release, err := env.HomeView()
		if err != nil {
			return nil, fmt.Errorf("attempt %s/%s#%d: %w", j.Arm.Name, j.Task.ID, j.Index, err)
		}
		defer r.later(release) // off the attempt's path, as its folder
		home = view
	} else if err := os.Mkdir(home, 0o700); err != nil {
		return nil, fmt.Errorf("attempt %s/%s#%d: %w", j.Arm.Name, j.Task.ID, j.Index, err)
	}
	// Every process of the attempt (its commands, its sandboxed servers)
	// runs as one user of its own, which ends them all before scoring.
	spec := plan.Sandbox.Spec(prof.Network())
	spec.Home, spec.Hide, spec.User = home, r.hidden(plan), r.Sandbox.NewUser()
	serverBase := spec
	launch := func(ctx context.Context, dir string, argv, env []string) (*exec.Cmd, error) {
		s := spec
		s.Dir = dir
		return r.Sandbox.Command(ctx, s, argv, env)
	}
	if world != nil {
		spec = world.Spec(prof.Network())
		spec.Limits = serverBase.Limits
		launch = func(ctx context.Context, dir string, argv, env []string) (*exec.Cmd, error) {
			s := spec
			s.Dir = world.InRoot(dir)
			return r.Sandbox.Command(ctx, s, argv, append(env, world.Env()...))
		}
	}
	reg, err := builtinRegistry(r.schemas, ws, j.Arm, agent.BuiltinOptions{Launch: launch})
	if err != nil {
		return nil, err
	}
	// MCP servers: started fresh for the attempt, kept for all of it, shut
	// down at its end. A server that cannot start now (it passed the
	// preflight) is an infrastructure failure of this attempt.
	// What a server started (a wrapped server in the Off mode has no
	// namespace to end it with) is ended with the attempt's user, however
	// the attempt ends.
	failed := func(conns []*attached, err error) (*results.Attempt, error) {
		a := infraFailure(a, conns, err)
		_ = r.Sandbox.KillAll(context.WithoutCancel(ctx), spec.User)
		return a, nil
	}
	serverBase.User = spec.User // ended with the attempt's user
	conns, err := r.connect(ctx, servers(j.Task, j.Arm), r.vars(j.Task, wsDir), reg.Names(), r.serverWrap(serverSpec(serverBase, wsDir, j.Task)))
	if err != nil {
		return failed(nil, err)
	}
	if err := addServerTools(reg, conns); err != nil {
		// The names were checked before the run; a server that now lists
		// other tools is an infrastructure failure of this attempt.
		return failed(conns, err)
	}

	waitFrom := time.Now()
	model, err := take(ctx)
	if err != nil {
		// The run was interrupted while the attempt waited for a slot.
		a.Servers = closeAll(conns)
		_ = r.Sandbox.KillAll(context.WithoutCancel(ctx), spec.User)
		a.Status, a.Error = results.StatusCanceled, "interrupted while waiting for a model slot"
		return a, nil
	}
	// The wait for a slot is no part of the attempt's time.
	a.StartedAt = a.StartedAt.Add(time.Since(waitFrom))

	weights, err := r.weightsBefore(ctx, plan, model)
	if err != nil {
		give()
		return failed(conns, err)
	}
	turns, tokens, wall := plan.limits(j.Task)
	opts := maps.Clone(plan.Options)
	opts["seed"] = j.Seed
	tr := agent.Run(ctx, agent.Config{
		Model:       model,
		ModelName:   plan.Model,
		Options:     opts,
		System:      plan.System,
		Instruction: j.Task.Instruction,
		Tools:       reg,
		Policy: &agent.ProfilePolicy{
			Profile:   prof,
			Approver:  r.approvers[j.Arm.Name],
			Workspace: ws,
			Labels:    map[string]string{"arm": j.Arm.Name, "task": j.Task.ID, "attempt": strconv.Itoa(j.Index)},
		},
		MaxTurns:  turns,
		MaxTokens: tokens,
		WallTime:  wall,

		RequestTimeout: plan.RequestTimeout,
		ContextLength:  r.modelCtx,
		CutIsAnError:   plan.API == string(endpoint.OpenAI),
		Tokens:         plan.Tokens,
		// A server whose tool list changed is listed again before the
		// next turn (mcp.Refresher).
		Refresh: mcp.Refresher(connsOf(conns)),
	})
	werr := r.weightsAfter(ctx, plan, weights, tr)
	give()
	// Servers go down, and every process of the attempt is ended, before
	// anything is scored: nothing of the agent's world keeps running, or
	// writing its workspace, while its result is read.
	a.Servers = closeAll(conns)
	if err := r.Sandbox.KillAll(context.WithoutCancel(ctx), spec.User); err != nil {
		a.Trajectory = tr
		a.Status, a.Error = results.StatusInfraError, err.Error()
		a.FinishedAt = time.Now().UTC()
		return a, nil
	}
	if werr != nil && tr.Stop != agent.StopCanceled {
		a.Trajectory = tr
		a.Status, a.Error = results.StatusInfraError, werr.Error()
		a.FinishedAt = time.Now().UTC()
		return a, nil
	}
	if n := tr.TruncatedTurns(); n > 0 {
		r.logf("warning: attempt %s/%s#%d: %d of %d turns outgrew the context (%s; Ollama cut the prompt silently)", j.Arm.Name, j.Task.ID, j.Index, n, len(tr.Turns), r.contextText(plan))
	}
	a.Trajectory = tr
	a.FinishedAt = time.Now().UTC()
	switch tr.Stop {
	case agent.StopInfraError:
		a.Status, a.Error = results.StatusInfraError, tr.Err
		return a, nil
	case agent.StopCanceled:
		a.Status, a.Error = results.StatusCanceled, tr.Err
		return a, nil
	}
	// The hidden tests run on the agent's result, in a scoring folder of
	// their own, as a fresh sandbox user without network, once there is
	// room for them (the wait is no part of the attempt's time).
	waitFrom = time.Now()
	toScore()
	a.StartedAt = a.StartedAt.Add(time.Since(waitFrom))
	if world != nil {
		return r.scoreRooted(ctx, a, world)
	}
	scorer := &evaluator.Scorer{Sandbox: r.Sandbox, Spec: testSpec(spec), TempDir: r.scratch, Remove: r.removeLater}
	if env != nil {
		scorer.Home = func(context.Context, *tasks.Task) (string, func(), error) {
			dir, release, err := env.ScoringView()
			if err != nil {
				return "", nil, err
			}
			return dir, func() { r.later(release) }, nil
		}
	}
	res, err := scorer.Score(ctx, j.Task, wsDir)
	switch {
	case ctx.Err() != nil:
		// Stopped while scoring: not scored, run again on resume.
		a.Status, a.Error = results.StatusCanceled, "interrupted while the hidden tests ran"
		a.FinishedAt = time.Now().UTC()
		return a, nil
	case err != nil:
		return nil, fmt.Errorf("attempt %s/%s#%d: hidden tests: %w", j.Arm.Name, j.Task.ID, j.Index, err)
	}
	if res.TimedOut {
		why := r.timeoutIsTheMachines(ctx, scorer, j.Task, env, res)
		if ctx.Err() != nil {
			// Stopped while the reference ran: the timeout is not judged.
			a.Status, a.Error = results.StatusCanceled, "interrupted while the reference solution's tests ran, after the hidden tests timed out"
			a.FinishedAt = time.Now().UTC()
			return a, nil
		}
		if why != "" {
			a.Test = res
			a.Status, a.Error = results.StatusInfraError, why
			a.FinishedAt = time.Now().UTC()
			return a, nil
		}
	}
	reward := res.Reward()
	a.Test = res
	a.Reward = &reward
	a.Status = results.StatusFinished
	a.FinishedAt = time.Now().UTC()
	return a, nil
}

// timeoutIsTheMachines decides whether hidden tests that timed out say
// something about the agent: not when the reference solution's tests,
// run now in the same prepared environment, time out too (the machine is
// overloaded), nor when there is no prepared environment to compare with.
// It returns why the timeout is an infrastructure failure, or "": also
// when the reference could not be run at all. The reference's time, when
// it ran, is kept in res.RefDuration.
func (r *Runner) timeoutIsTheMachines(ctx context.Context, scorer *evaluator.Scorer, t *tasks.Task, env *environment.Env, res *evaluator.TestResult) string {
	limit := evaluator.ScoringTimeout(t)
	if env == nil {
		return fmt.Sprintf("the hidden tests ran past their timeout of %s in an environment that was not prepared", limit)
	}
	tmp, err := os.MkdirTemp(r.scratch, "bench-ref-")
	if err != nil {
		return fmt.Sprintf("the hidden tests ran past their timeout of %s, and the reference solution could not be run to compare: %v", limit, err)
	}
	defer tree.Remove(tmp)
	change, ok, err := environment.Solution(ctx, t, tmp)
	switch {
	case ctx.Err() != nil:
		return ""
	case err != nil:
		return fmt.Sprintf("the hidden tests ran past their timeout of %s, and the reference solution could not be made to compare: %v", limit, err)
	case !ok:
		return "" // the task has no reference to compare with: the agent's timeout stands
	}
	// A timeout of the canary run is compared with the reference's canary
	// run, instrumented the same way.
	run, took := scorer.Run, func(r *evaluator.TestResult) time.Duration { return r.Duration }
	if res.CanaryTimedOut {
		run, took = scorer.RunScored, func(r *evaluator.TestResult) time.Duration { return max(r.Duration, r.CanaryDuration) }
	}
	ref, err := run(ctx, t, change)
	switch {
	case ctx.Err() != nil:
		return ""
	case err != nil:
		return fmt.Sprintf("the hidden tests ran past their timeout of %s, and the reference solution's could not be run to compare: %v", limit, err)
	}
	res.RefDuration = took(ref)
	if ref.TimedOut || res.RefDuration >= limit {
		return fmt.Sprintf("the hidden tests ran past their timeout of %s, and so did the reference solution's right after (%s; %s when the environment was prepared): the machine is overloaded, the timeout says nothing of the agent",
			limit, res.RefDuration.Round(time.Millisecond), env.Meta.RefTest.Round(time.Millisecond))
	}
	return ""
}

// hidden are the folders no sandbox of the plan may show, wherever the
// suite is installed: the suite's and every task's (tests/, solution/).
func (r *Runner) hidden(plan *Plan) []string {
	out := []string{plan.Suite.Dir}
	for _, t := range plan.Suite.Tasks {
		if !strings.HasPrefix(t.Dir, plan.Suite.Dir+string(filepath.Separator)) {
			out = append(out, t.Dir)
		}
	}
	return out
}

// testSpec is the sandbox of the hidden tests: the attempt's limits,
// read-only and hidden paths, nothing else of it.
func testSpec(s sandbox.Spec) sandbox.Spec {
	return sandbox.Spec{Limits: s.Limits, ReadOnly: s.ReadOnly, Hide: s.Hide}
}

// serverSpec is the sandbox of a task's sandboxed MCP servers: the
// attempt's, in its workspace, plus the task's data folder read-only
// (never the rest of the task folder, which holds the hidden tests).
func serverSpec(s sandbox.Spec, workspace string, t *tasks.Task) sandbox.Spec {
	s.Dir = workspace
	if _, err := os.Stat(t.DataDir()); err == nil {
		s.ReadOnly = append(slices.Clone(s.ReadOnly), t.DataDir())
	}
	return s
}

// serverWrap is the wrap of sandboxed stdio servers under spec: a sandbox
// that cannot be made turns into a command that says so and fails, never
// into an unsandboxed server.
func (r *Runner) serverWrap(spec sandbox.Spec) func(argv []string) []string {
	return func(argv []string) []string {
		s := spec
		if len(argv) > 0 && filepath.IsAbs(argv[0]) && !sandbox.Shows(s, argv[0]) {
			s.ReadOnly = append(slices.Clone(s.ReadOnly), argv[0])
		}
		out, err := r.Sandbox.Wrap(s, argv)
		if err != nil {
			return []string{"/bin/sh", "-c", `echo "bench sandbox: $1 (a problem of the harness, not of the server)" >&2; exit 125`, "sh", err.Error()}
		}
		return out
	}
}

// builtinRegistry is the arm's subset of the built-in tools (its names
// were checked by Plan.Normalize).
func builtinRegistry(schemas *agent.Schemas, ws *agent.Workspace, arm Arm, opts agent.BuiltinOptions) (*agent.Registry, error) {
	reg := schemas.NewRegistry()
	for _, t := range agent.Builtins(ws, opts) {
		if len(arm.Tools) > 0 && !slices.Contains(arm.Tools, t.Spec().Name) {
			continue
		}
		if err := reg.Add(t); err != nil {
			return nil, fmt.Errorf("arm %s: %w", arm.Name, err)
		}
	}
	return reg, nil
}

// infraFailure ends an attempt that could not start for a reason of the
// infrastructure (its servers), shutting down those already started.
func infraFailure(a *results.Attempt, conns []*attached, err error) *results.Attempt {
	a.Servers = closeAll(conns)
	a.Status, a.Error = results.StatusInfraError, err.Error()
	a.FinishedAt = time.Now().UTC()
	a.Trajectory = &agent.Trajectory{Stop: agent.StopInfraError, Err: err.Error()}
	return a
}
