package runner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/agent/mcp"
	"github.com/benchhq/bench/overhead"
	"github.com/benchhq/bench/results"
)

// Runner runs plans against a model and stores the attempts.
type Runner struct {
	// Model answers the agent's chat requests.
	Model agent.Model
	// Store receives every finished attempt.
	Store *results.Store
	// Progress, when set, receives a live progress bar.
	Progress io.Writer
	// Log receives warnings and notices (nil discards them).
	Log io.Writer
	// TempDir is where attempt folders are made ("" for the system's).
	TempDir string
	// Backoff is the wait before retry number try (1-based) of an attempt
	// cut short by an infrastructure failure. Nil means 2s, 4s, 8s, 16s...
	// (capped at a minute): with the default five tries, an attempt rides
	// out half a minute of a model server restarting.
	Backoff func(try int) time.Duration
	// BenchPath is the bench executable, for the {bench} placeholder of
	// MCP server commands.
	BenchPath string
	// Version is recorded with each run.
	Version string
	// Sandbox isolates commands (and servers that ask for it); nil runs
	// them in the confined mode only.
	Sandbox *agent.Sandbox

	approvers map[string]agent.Approver
	// flags keeps the MCP tools' description flags: each distinct tool of
	// the run is flagged once, not once an attempt.
	flags *mcp.FlagCache
	// removing counts the attempt folders being removed (removeLater);
	// removeAll removes one (os.RemoveAll when nil).
	removing  sync.WaitGroup
	removeAll func(string) error
}

// Outcome is what a run did.
type Outcome struct {
	Run *results.Run
	// Ran counts attempts run now; Skipped those already finished before
	// (a resumed run); InfraErrors those left marked as infrastructure
	// failures after their retries.
	Ran, Skipped, InfraErrors int
	// Interrupted is true when the context ended the run early.
	Interrupted bool
	// ZeroVarianceShare is the share of groups (task × arm) whose attempts
	// all got the same reward: they carry no training signal.
	ZeroVarianceShare float64
}

// ErrPreflight wraps a failure found before the first attempt: nothing of
// the run has been stored.
var ErrPreflight = errors.New("preflight")

// NewRunID returns a fresh run id: the date and a random suffix, sortable
// and short enough to type.
func NewRunID(now time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return now.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

// Run runs a plan under a new run id, or continues the run of that id if
// the store already holds it: finished attempts are kept, the rest run with
// the same seeds. A Runner runs one plan at a time.
func (r *Runner) Run(ctx context.Context, plan *Plan, runID string) (*Outcome, error) {
	if err := plan.Normalize(); err != nil {
		return nil, err
	}
	r.approvers = map[string]agent.Approver{}
	r.flags = &mcp.FlagCache{}
	for _, a := range plan.Arms {
		ap, err := agent.ParseApprover(a.Approver, plan.BaseDir)
		if err != nil {
			return nil, fmt.Errorf("arm %s: approver: %w", a.Name, err)
		}
		r.approvers[a.Name] = ap
	}
	run, err := r.Store.GetRun(ctx, runID)
	switch {
	case errors.Is(err, results.ErrNoRun):
		run = nil
	case err != nil:
		return nil, fmt.Errorf("load run %s: %w", runID, err)
	default:
		if err := compatible(run, plan); err != nil {
			return nil, fmt.Errorf("resume run %s: %w", runID, err)
		}
	}
	// Before the first attempt, and before anything is stored: each arm's
	// tools (its servers started once), what they cost in prompt tokens
	// (which also checks the model server, the model and its tool
	// support), and each task's own servers with no name colliding.
	armSets := map[string][]overhead.ToolSet{}
	for _, arm := range plan.Arms {
		sets, err := r.ToolSets(ctx, arm, arm.Servers, plan.Suite.Tasks[0])
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrPreflight, err)
		}
		armSets[arm.Name] = sets
	}
	reps, err := r.measureOverhead(ctx, plan, armSets)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPreflight, err)
	}
	if err := r.checkTaskServers(ctx, plan, armSets); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPreflight, err)
	}
	if run == nil {
		run = r.newRun(plan, runID)
		if err := r.Store.CreateRun(ctx, run); err != nil {
			return nil, fmt.Errorf("create run %s: %w", runID, err)
		}
	}
	if err := r.saveOverhead(ctx, run.ID, reps); err != nil {
		return nil, err
	}
	done, err := r.Store.FinishedKeys(ctx, run.ID)
	if err != nil {
		return nil, fmt.Errorf("resume run %s: %w", run.ID, err)
	}
	var todo []Job
	out := &Outcome{Run: run}
	for _, j := range plan.Jobs() {
		if done[results.AttemptKey{Arm: j.Arm.Name, Task: j.Task.ID, Index: j.Index}] {
			out.Skipped++
			continue
		}
		todo = append(todo, j)
	}

	bar := newProgress(r.Progress, len(todo)+out.Skipped, out.Skipped)
	// A failure to store stops the run: no attempt starts after it.
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	saves := newSaver(ctx, r.Store, plan.Concurrency, func(a *results.Attempt) {
		out.Ran++
		if a.Status == results.StatusInfraError {
			out.InfraErrors++
		}
		bar.add(a)
	}, stopRun)
	g, gctx := errgroup.WithContext(runCtx)
	g.SetLimit(plan.Concurrency)
	for _, j := range todo {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error {
			a, err := r.attemptWithRetries(gctx, plan, run, j)
			if err != nil {
				return err
			}
			if a.Status == results.StatusCanceled {
				return nil // not saved as a result: the resume runs it again
			}
			saves.save(a)
			return nil
		})
	}
	err = g.Wait()
	if serr := saves.close(); err == nil {
		err = serr
	}
	r.removing.Wait()
	bar.finish()
	if err != nil {
		_ = r.Store.FinishRun(context.WithoutCancel(ctx), run.ID, results.RunInterrupted)
		return out, err
	}
	if ctx.Err() != nil {
		out.Interrupted = true
		_ = r.Store.FinishRun(context.WithoutCancel(ctx), run.ID, results.RunInterrupted)
		return out, nil
	}
	if out.ZeroVarianceShare, err = StoreAdvantages(ctx, r.Store, run.ID, plan.Advantage); err != nil {
		return out, err
	}
	if err := r.Store.FinishRun(ctx, run.ID, results.RunFinished); err != nil {
		return out, fmt.Errorf("finish run %s: %w", run.ID, err)
	}
	return out, nil
}

// removeLater removes an attempt's folder in the background: the attempt's
// slot goes to the next attempt at once, rather than after the removal of
// thousands of files. Run waits for every removal before it returns.
func (r *Runner) removeLater(dir string) {
	remove := r.removeAll
	if remove == nil {
		remove = os.RemoveAll
	}
	r.removing.Go(func() {
		if err := remove(dir); err != nil {
			r.logf("warning: remove attempt folder %s: %v", dir, err)
		}
	})
}

func (r *Runner) newRun(plan *Plan, runID string) *results.Run {
	cfg, _ := json.Marshal(storedPlanOf(plan))
	run := &results.Run{
		ID:              runID,
		Name:            plan.Name,
		CreatedAt:       time.Now().UTC(),
		Model:           plan.Model,
		Options:         plan.Options,
		Seed:            plan.Seed,
		AttemptsPerTask: plan.Attempts,
		Suite:           plan.Suite.Name,
		SuiteDir:        plan.Suite.Dir,
		Config:          string(cfg),
		Status:          results.RunRunning,
		BenchVersion:    r.Version,
	}
	for i, a := range plan.Arms {
		ac, _ := json.Marshal(a)
		run.Arms = append(run.Arms, results.Arm{Name: a.Name, Index: i, Config: string(ac)})
	}
	for _, t := range plan.Suite.Tasks {
		run.Tasks = append(run.Tasks, results.TaskInfo{ID: t.ID, Dir: t.Dir, Hash: t.Hash, Instruction: t.Instruction})
	}
	return run
}

// attemptWithRetries runs one attempt, retrying it with backoff while it
// ends in an infrastructure failure, up to the plan's bound.
func (r *Runner) attemptWithRetries(ctx context.Context, plan *Plan, run *results.Run, j Job) (*results.Attempt, error) {
	var a *results.Attempt
	for try := 1; ; try++ {
		var err error
		a, err = r.attempt(ctx, plan, run, j)
		if err != nil {
			return nil, err
		}
		a.Tries = try
		if a.Status != results.StatusInfraError || try >= plan.MaxTries || ctx.Err() != nil {
			return a, nil
		}
		wait := r.backoff(try)
		r.logf("attempt %s/%s#%d: infrastructure failure (%s); retry %d of %d in %s", j.Arm.Name, j.Task.ID, j.Index, a.Error, try, plan.MaxTries-1, wait)
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return a, nil
		}
	}
}

func (r *Runner) backoff(try int) time.Duration {
	if r.Backoff != nil {
		return r.Backoff(try)
	}
	return min(time.Duration(1<<min(try, 6))*time.Second, time.Minute)
}

func (r *Runner) logf(format string, args ...any) {
	if r.Log != nil {
		fmt.Fprintf(r.Log, format+"\n", args...)
	}
}

// storageHint adds what a person should check to a failed write.
func storageHint(err error) string {
	msg := strings.ToLower(err.Error())
	switch {
	case strings.Contains(msg, "disk is full"):
		return " (free some space, or move the database and its -wal file elsewhere)"
	case strings.Contains(msg, "readonly"), strings.Contains(msg, "read-only"), strings.Contains(msg, "disk i/o error"):
		return " (the database file or its folder cannot be written: is it read-only, immutable or on a failing disk?)"
	}
	return ""
}
