package runner

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/evaluator"
	"github.com/benchhq/bench/results"
	"github.com/benchhq/bench/tasks"
)

// attempt runs one attempt end to end: a fresh workspace copy, the tools,
// the agent loop, the hidden tests. The returned error is reserved for
// failures of the harness itself (the disk, a broken task folder); the
// model's failures are in the attempt's status.
func (r *Runner) attempt(ctx context.Context, plan *Plan, run *results.Run, j Job) (*results.Attempt, error) {
	a := &results.Attempt{
		RunID:     run.ID,
		Key:       results.AttemptKey{Arm: j.Arm.Name, Task: j.Task.ID, Index: j.Index},
		Seed:      j.Seed,
		StartedAt: time.Now().UTC(),
	}
	dir, err := os.MkdirTemp(r.TempDir, "bench-attempt-")
	if err != nil {
		return nil, fmt.Errorf("attempt %s/%s#%d: make temp folder: %w", j.Arm.Name, j.Task.ID, j.Index, err)
	}
	if plan.KeepWorkspaces {
		r.logf("attempt %s/%s#%d: workspace kept in %s", j.Arm.Name, j.Task.ID, j.Index, dir)
	} else {
		defer r.removeLater(dir)
	}
	wsDir := filepath.Join(dir, "workspace")
	if err := os.Mkdir(wsDir, 0o755); err != nil {
		return nil, fmt.Errorf("attempt %s/%s#%d: %w", j.Arm.Name, j.Task.ID, j.Index, err)
	}
	if err := j.Task.CopyWorkspace(wsDir); err != nil {
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
	conf := plan.Sandbox.Confinement(prof.Network())
	reg, err := builtinRegistry(ws, j.Arm, agent.BuiltinOptions{Wrap: r.Sandbox.Command(conf)})
	if err != nil {
		return nil, err
	}
	// MCP servers: started fresh for the attempt, kept for all of it, shut
	// down at its end. A server that cannot start now (it passed the
	// preflight) is an infrastructure failure of this attempt.
	conns, err := r.connect(ctx, servers(j.Task, j.Arm), r.vars(j.Task, wsDir), reg.Names(), r.Sandbox.Server(wsDir, serverConfinement(conf, j.Task)))
	if err != nil {
		return infraFailure(a, nil, err), nil
	}
	if err := addServerTools(reg, conns); err != nil {
		// The names were checked before the run; a server that now lists
		// other tools is an infrastructure failure of this attempt.
		return infraFailure(a, conns, err), nil
	}

	turns, tokens, wall := plan.limits(j.Task)
	opts := maps.Clone(plan.Options)
	opts["seed"] = j.Seed
	tr := agent.Run(ctx, agent.Config{
		Model:       r.Model,
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
	})
	// Servers go down before the hidden tests run: nothing of the agent's
	// world keeps running while it is scored.
	a.Servers = closeAll(conns)
	if n := tr.TruncatedTurns(); n > 0 {
		numCtx, _ := agent.NumCtx(opts) // the loop read it: it is valid
		r.logf("warning: attempt %s/%s#%d: %d of %d turns outgrew num_ctx %d (Ollama cut the prompt silently); raise --num-ctx", j.Arm.Name, j.Task.ID, j.Index, n, len(tr.Turns), numCtx)
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
	// The hidden tests run whatever the run's context says: an attempt the
	// agent finished is scored, even while the run is being interrupted.
	// They run the agent's code: in the sandbox, without network.
	testConf := conf
	testConf.Network = false
	res, err := evaluator.RunHiddenTests(context.WithoutCancel(ctx), j.Task, wsDir, r.Sandbox.Command(testConf))
	if err != nil {
		return nil, fmt.Errorf("attempt %s/%s#%d: hidden tests: %w", j.Arm.Name, j.Task.ID, j.Index, err)
	}
	reward := res.Reward()
	a.Test = res
	a.Reward = &reward
	a.Status = results.StatusFinished
	a.FinishedAt = time.Now().UTC()
	return a, nil
}

// serverConfinement is the sandbox of a task's sandboxed MCP servers:
// the attempt's confinement, plus the task's data folder read-only (never
// the task folder, which holds the hidden tests).
func serverConfinement(c agent.Confinement, t *tasks.Task) agent.Confinement {
	if _, err := os.Stat(t.DataDir()); err == nil {
		c.ReadOnly = append(slices.Clone(c.ReadOnly), t.DataDir())
	}
	return c
}

// builtinRegistry is the arm's subset of the built-in tools (its names
// were checked by Plan.Normalize).
func builtinRegistry(ws *agent.Workspace, arm Arm, opts agent.BuiltinOptions) (*agent.Registry, error) {
	reg := agent.NewRegistry()
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
