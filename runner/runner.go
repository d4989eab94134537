package runner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/agent/mcp"
	"github.com/benchhq/bench/endpoint"
	"github.com/benchhq/bench/environment"
	"github.com/benchhq/bench/evaluator"
	"github.com/benchhq/bench/internal/tree"
	"github.com/benchhq/bench/overhead"
	"github.com/benchhq/bench/results"
	"github.com/benchhq/bench/sandbox"
)

// Runner runs plans against a model and stores the attempts.
type Runner struct {
	// Model answers the agent's chat requests when Endpoints is nil.
	Model agent.Model
	// Endpoints, when set, are the model servers the attempts share:
	// each attempt runs on an endpoint with a free slot, an endpoint that
	// fails is taken out for a while and its attempts retried on the
	// others. Before the first attempt, every endpoint is asked which
	// weights it serves under the plan's model name.
	Endpoints *endpoint.Pool
	// AllowMixedModels lets a run start when its endpoints serve
	// different weights under the model's name (or other weights than a
	// resumed run started with). They are refused otherwise.
	AllowMixedModels bool
	// Store receives every finished attempt.
	Store *results.Store
	// Progress, when set, receives a live progress bar (for a terminal).
	Progress io.Writer
	// Lines, when set, receives one line per finished attempt: task, arm,
	// index, reward, turns and time (for a log, or output that is not a
	// terminal).
	Lines io.Writer
	// Log receives warnings and notices (nil discards them), a line at a
	// time: the runner's goroutines take turns at it.
	Log io.Writer
	// TempDir is where attempt folders are made ("" for the system's).
	TempDir string
	// Backoff is the wait before retry number try (1-based) of an attempt
	// cut short by an infrastructure failure. Nil means 2s, 4s, 8s, 16s...
	// (capped at a minute): with the default five tries, an attempt rides
	// out half a minute of a model server restarting.
	Backoff func(try int) time.Duration
	// Cooldown, when set, is how long the model server of Model stays out
	// of service after its n-th failure in a row (endpoint.Pool's
	// Cooldown; nil is the pool's default). Endpoints carry their own.
	Cooldown func(n int) time.Duration
	// MaxWait bounds how long in all an attempt waits for a model server
	// while every endpoint is out of service (0: DefaultMaxWait). Such a
	// wait uses none of its tries: it is not tried while no endpoint
	// answers, and an outage shorter than MaxWait costs it nothing.
	MaxWait time.Duration
	// BenchPath is the bench executable, for the {bench} placeholder of
	// MCP server commands.
	BenchPath string
	// Version is recorded with each run.
	Version string
	// Sandbox runs the attempts' commands, their sandboxed servers and the
	// hidden tests (required; its Off mode isolates nothing).
	Sandbox *sandbox.Sandbox

	// StartTimeout bounds an MCP server's start: starting, negotiating and
	// listing its tools (0: mcp.DefaultStartTimeout).
	StartTimeout time.Duration
	// EnvDir is where the tasks' prepared environments are kept
	// ("" for environment.DefaultDir()).
	EnvDir string
	// Rooted, when set, runs the tasks that bring a root file system of
	// their own (Harbor's task folders; see rooted.go).
	Rooted Rooted
	// Saved, when set, is called with each attempt once it is stored,
	// from one goroutine, in the order stored: bench serve streams the
	// groups of a request as their attempts finish.
	Saved func(*results.Attempt)

	logMu     sync.Mutex // Log's turn
	approvers map[string]agent.Approver
	pool      *endpoint.Pool
	// looping holds a token for each attempt in its agent loop: at most
	// the plan's concurrency talk to the model at once.
	looping chan struct{}
	envs    map[string]*environment.Env // by task folder
	// modelCtx is the model's own context length (0: unknown), read at
	// the start of a run.
	modelCtx int
	// flags keeps the MCP tools' description flags: each distinct tool of
	// the run is flagged once, not once an attempt.
	flags *mcp.FlagCache
	// auth keeps the OAuth authorizations of the run's HTTP servers: one
	// per server for all attempts, tokens in memory only.
	auth *mcp.Auth
	// schemas resolves the tools' input schemas once a run, not once an
	// attempt.
	schemas *agent.Schemas
	// removals removes folders in the background (removeLater, later),
	// as many at once as its limit; removeAll removes a folder
	// (tree.Remove when nil).
	removals  errgroup.Group
	removeAll func(string) error
	// scratch is the run's folder (tree.Scratch, in TempDir) of its
	// attempts' folders.
	scratch string
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

// Run runs a plan under a new run id ("" for a fresh one), or
// continues the run of that id if the store already holds it: finished attempts are kept, the rest run with
// the same seeds. A Runner runs one plan at a time.
func (r *Runner) Run(ctx context.Context, plan *Plan, runID string) (*Outcome, error) {
	if err := plan.Normalize(); err != nil {
		return nil, err
	}
	if runID == "" {
		// Named before anything runs: the attempts carry it from their start.
		runID = NewRunID(time.Now())
	}
	if r.Sandbox == nil {
		return nil, errors.New("runner: no sandbox: make one with sandbox.New (its Off mode isolates nothing, but still ends every process of an attempt)")
	}
	r.approvers = map[string]agent.Approver{}
	r.flags = &mcp.FlagCache{}
	r.auth = &mcp.Auth{Prompt: func(u string) { r.logf("to authorize bench to an MCP server, open this URL in a browser: %s", u) }}
	r.schemas = &agent.Schemas{}
	for _, a := range plan.Arms {
		ap, err := agent.ParseApprover(a.Approver, plan.BaseDir)
		if err != nil {
			return nil, fmt.Errorf("arm %s: approver: %w", a.Name, err)
		}
		r.approvers[a.Name] = ap
	}
	r.pool = r.Endpoints
	if r.pool == nil {
		name := ""
		if em, ok := r.Model.(agent.EndpointModel); ok {
			name = em.Endpoint()
		}
		r.pool, _ = endpoint.NewPool(endpoint.Of(name, r.Model, 0)) // one endpoint: never an error
		r.pool.Cooldown = r.Cooldown
		defer r.pool.Close()
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
		if was, now := run.Isolation, r.Sandbox.Isolation(); was != "" && (was == "none") != (now == "none") {
			return nil, fmt.Errorf("resume run %s: its attempts ran with isolation %q, these would run with %q: one run mixes no isolation modes (continue it with the same --sandbox, or start a new run)", runID, was, now)
		}
	}
	// Before the first attempt, and before anything is stored: that every
	// endpoint serves the model (the same weights), each arm's tools (its
	// servers started once), what they cost in prompt tokens (which also
	// checks the model server, the model and its tool support), and each
	// task's own servers with no name colliding.
	digest, err := r.checkModel(ctx, plan, run)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPreflight, err)
	}
	// One process runs a run at a time; the lock also tells `bench runs`
	// that the run is alive (a killed bench's run shows as stale).
	lock, err := r.Store.LockRun(runID)
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	// Before the first attempt, and before anything is stored: the model's
	// own context length (a num_ctx above it is lowered silently), each
	// arm's tools (its servers started once), each task's own servers with
	// no name colliding. What the tools cost in prompt tokens (which also
	// checks the model server, the model and its tool support) is measured
	// while the tasks' environments are prepared and the first attempts
	// start, before anything is stored.
	if r.modelCtx, err = r.modelContext(ctx, plan); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPreflight, err)
	}
	armSets := map[string][]overhead.ToolSet{}
	for _, arm := range plan.Arms {
		sets, err := r.ToolSets(ctx, arm, arm.Servers, plan.Suite.Tasks[0])
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrPreflight, err)
		}
		armSets[arm.Name] = sets
	}
	if err := r.checkTaskServers(ctx, plan, armSets); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPreflight, err)
	}
	// Limits the sandbox could not set would fail every command.
	if err := r.Sandbox.CheckLimits(plan.Sandbox.Spec(false).Limits); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPreflight, err)
	}
	// A run continued keeps the measurement of its start: the plan is the
	// same (compatible), and measuring again would only be thrown away.
	measure := plan
	if run != nil {
		if measure, err = r.unmeasured(ctx, run, plan); err != nil {
			return nil, err
		}
	}
	continued := run != nil
	if run == nil {
		run = r.newRun(plan, runID)
		run.ModelDigest = digest
	}
	done, err := r.Store.FinishedKeys(ctx, run.ID)
	if err != nil {
		return nil, fmt.Errorf("resume run %s: %w", run.ID, err)
	}
	var todo []Job
	out := &Outcome{Run: run}
	for pos, j := range plan.Jobs() {
		if !plan.InShard(pos) {
			continue // another shard's
		}
		if done[results.AttemptKey{Arm: j.Arm.Name, Task: j.Task.ID, Index: j.Index}] {
			out.Skipped++
			continue
		}
		todo = append(todo, j)
	}

	// A failure to store, or of the measurement, stops the run: no attempt
	// starts after it.
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	r.looping = make(chan struct{}, plan.Concurrency)
	r.removals.SetLimit(max(2, plan.Concurrency))
	// The tool overhead is measured while the first attempts run: it holds
	// as many model slots as it has requests (up to all of them), and the
	// attempts start on the others rather than wait for it with slots
	// idle. It is still the check of the model: until it is over (and the
	// run is created) nothing is stored, and when it fails the attempts
	// are stopped and thrown away, and the run never existed.
	measureOn := r.pool.First()
	held := min(plan.Concurrency, overheadRequests(measure, armSets))
	if measureOn.Slots > 0 {
		held = min(held, measureOn.Slots) // it measures on that endpoint alone
	}
	for range held {
		r.looping <- struct{}{}
	}
	measuring := make(chan measurement, 1)
	go func() {
		reps, err := r.measureOverhead(runCtx, measure, armSets, measureOn, held)
		if err != nil {
			stopRun() // before the slots go to attempts
		}
		for range held {
			<-r.looping
		}
		measuring <- measurement{reps, err}
	}()
	// The tasks' environments are prepared meanwhile; the attempts start
	// once they are. Their folders are made in a scratch folder of the
	// run, removed at its end unless it keeps workspaces.
	sc, err := newScratch(r.TempDir, run.ID, plan.KeepWorkspaces)
	if err == nil {
		r.scratch = sc.dir
		// Last: the removals in the background are waited for, and the
		// environments' views removed, by the defer after prepareEnvs.
		defer sc.release() // the folder only when empty: kept workspaces stay
		// What a killed bench left of this run goes, in the background.
		for _, d := range leftovers(r.TempDir, run.ID, sc.dir) {
			r.logf("removing %s, left by an earlier start of run %s that was killed", d, run.ID)
			r.removeLater(d)
		}
	}
	var envs map[string]*environment.Env
	var releaseEnvs func()
	if err == nil {
		envs, releaseEnvs, err = r.prepareEnvs(runCtx, plan)
	}
	if err != nil {
		// Stopped already, the preparing failed for the measurement's
		// failure (or an interruption): that is the error to tell. Else
		// its own is, and the measurement fails for being stopped now.
		stoppedFirst := runCtx.Err() != nil
		stopRun()
		if m := <-measuring; m.err != nil && stoppedFirst {
			err = m.err
		}
		return nil, interruptedBefore(ctx, fmt.Errorf("%w: %w", ErrPreflight, err))
	}
	defer func() {
		// Every removal in the background (attempt and scoring folders,
		// scoring views) ends before Run returns, and before the
		// environments those views are of are released.
		_ = r.removals.Wait() // removals report no error: they log it
		releaseEnvs()
	}()
	r.envs = envs
	start := r.storeStart(ctx, run, !continued, measuring, stopRun)

	bar := newProgress(r.Progress, r.Lines, len(todo)+out.Skipped, out.Skipped)
	saves := newSaver(ctx, r.Store, plan.Concurrency, func(a *results.Attempt) {
		if r.Saved != nil {
			r.Saved(a)
		}
		out.Ran++
		if a.Status == results.StatusInfraError {
			out.InfraErrors++
		}
		bar.add(a)
	}, stopRun)
	g, gctx := errgroup.WithContext(runCtx)
	// The plan's concurrency bounds the attempts in their agent loop; a
	// few more set up meanwhile, so that no model slot waits while an
	// attempt copies its workspace or starts its servers, and those past
	// their loop are scored beside them (stages).
	st := newStages(plan.Concurrency)
	for _, j := range todo {
		p, err := st.enter(gctx)
		if err != nil {
			break
		}
		g.Go(func() error {
			defer p.leave()
			a, err := r.attemptWithRetries(gctx, plan, run, j, p)
			if err != nil {
				return err
			}
			if a.Status == results.StatusCanceled {
				return nil // not saved as a result: the resume runs it again
			}
			if start.wait() != nil {
				return nil // the run did not start (or its overhead could not be stored): the attempt is thrown away
			}
			saves.save(a)
			return nil
		})
	}
	err = g.Wait()
	startErr := start.wait()
	if serr := saves.close(); err == nil {
		err = serr
	}
	// The attempts' folders may still be going: Run waits for them when
	// it returns, not before it finishes the run.
	bar.finish()
	if startErr != nil {
		if start.stored {
			return out, startErr // to be resumed
		}
		return nil, interruptedBefore(ctx, startErr)
	}
	if err != nil {
		_ = r.Store.FinishRun(context.WithoutCancel(ctx), run.ID, results.RunInterrupted)
		return out, err
	}
	if ctx.Err() != nil {
		out.Interrupted = true
		_ = r.Store.FinishRun(context.WithoutCancel(ctx), run.ID, results.RunInterrupted)
		return out, nil
	}
	if !plan.Shard.Whole() {
		// A shard holds parts of groups: advantages over them would be
		// wrong. bench merge computes them over the merged groups.
		r.logf("shard %s done: advantages are computed when the shards are merged (bench merge)", plan.Shard)
	} else if out.ZeroVarianceShare, err = StoreAdvantages(ctx, r.Store, run.ID, plan.Advantage); err != nil {
		return out, err
	}
	if err := r.Store.FinishRun(ctx, run.ID, results.RunFinished); err != nil {
		return out, fmt.Errorf("finish run %s: %w", run.ID, err)
	}
	return out, nil
}

// interruptedBefore is err, or, when ctx ended (the run was interrupted
// while the model was checked or the environments prepared), a preflight
// error that says so rather than ctx's own.
func interruptedBefore(ctx context.Context, err error) error {
	if ctx.Err() != nil && errors.Is(err, ErrPreflight) {
		return fmt.Errorf("%w: interrupted before the run started (%v)", ErrPreflight, context.Cause(ctx))
	}
	return err
}

// removeLater removes an attempt's folder, or a scoring folder, off the
// attempt's path (later): its slot goes to the next attempt at once,
// rather than after the removal of thousands of files.
func (r *Runner) removeLater(dir string) {
	remove := r.removeAll
	if remove == nil {
		remove = tree.Remove
	}
	r.later(func() {
		if err := remove(dir); err != nil {
			r.logf("warning: remove %s: %v", dir, err)
		}
	})
}

// later runs a removal in the background, as many at once as the run's
// concurrency (at least two); when that many are running already, it
// runs it now, so that folders waiting to go never pile up behind a slow
// disk. Run waits for every removal before it returns.
func (r *Runner) later(remove func()) {
	if !r.removals.TryGo(func() error { remove(); return nil }) {
		remove()
	}
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
		Isolation:       r.Sandbox.Isolation(),
		Shard:           plan.Shard.String(),
	}
	for i, a := range plan.Arms {
		ac, _ := json.Marshal(a)
		run.Arms = append(run.Arms, results.Arm{Name: a.Name, Index: i, Config: string(ac)})
	}
	for _, t := range plan.Suite.Tasks {
		verdict := evaluator.TaskVerdict(t)
		if r.Rooted != nil && r.Rooted.Owns(t) {
			// A task's own verifier writes its reward beside the agent's
			// result (Harbor's reward.txt).
			verdict = evaluator.VerdictInProcess
		}
		run.Tasks = append(run.Tasks, results.TaskInfo{ID: t.ID, Dir: t.Dir, Hash: t.Hash, Instruction: t.Instruction, Report: t.Tests.Report,
			Verdict: verdict, Tags: t.Tags})
	}
	return run
}

// spareAttempts is how many attempts beyond the plan's concurrency may be
// setting up for a slot, and being scored beside those in their loop.
func spareAttempts(concurrency int) int { return max(1, concurrency/2) }

// modelSlot is an attempt's right to talk to the model: one of the plan's
// concurrency, and a lease on an endpoint with a free slot, taken when its
// agent loop starts and given back when the loop ends.
type modelSlot struct {
	r     *Runner
	lease *endpoint.Lease
}

// take waits for a slot and returns the model to talk to.
func (s *modelSlot) take(ctx context.Context) (agent.Model, error) {
	select {
	case s.r.looping <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	lease, err := s.r.pool.Acquire(ctx)
	if err != nil {
		<-s.r.looping
		return nil, err
	}
	s.lease = lease
	return lease.Model(), nil
}

// give gives the slot back; a slot not taken, or given back already, is
// left alone. The attempt that waited for the slot then runs first:
// handed the slot, it is queued on this goroutine's processor, and unless
// an idle one takes it, it waits until this one blocks, which the scoring
// that follows may do only once it has copied the workspace and started
// the hidden tests. At --concurrency 16 on two
// cores, that wait was half of the time a slot stood idle between two
// attempts (BenchmarkThroughput, docs/performance.md).
func (s *modelSlot) give() {
	if s.lease == nil {
		return
	}
	s.lease.Release()
	s.lease = nil
	<-s.r.looping
	runtime.Gosched()
}

// attemptWithRetries runs one attempt on an endpoint with a free slot,
// retrying it while it ends in an infrastructure failure, up to the
// plan's bound: at once on another endpoint when its own failed and
// another is in service, else after a backoff. p is the attempt's place
// in the run's stages: each try passes to its scoring with it, and a
// retry takes a place ahead again.
func (r *Runner) attemptWithRetries(ctx context.Context, plan *Plan, run *results.Run, j Job, p *place) (*results.Attempt, error) {
	var a *results.Attempt
	var waited time.Duration // for an endpoint in service, in all
	for try := 1; ; try++ {
		slot := &modelSlot{r: r}
		var lease *endpoint.Lease
		var err error
		a, err = r.attempt(ctx, plan, run, j, func(ctx context.Context) (agent.Model, error) {
			m, err := slot.take(ctx)
			lease = slot.lease
			return m, err
		}, slot.give, func() { p.pass(ctx) })
		slot.give()
		if err != nil {
			return nil, err
		}
		a.Tries = try
		if a.Status != results.StatusInfraError || try >= plan.MaxTries || ctx.Err() != nil {
			return a, nil
		}
		if r.pool.InService() == 0 {
			// Every endpoint is out: a try now would fail at once and be
			// lost to the outage. The attempt waits for one to answer its
			// probe instead, and then tries again.
			p.scored() // its place to be scored is another's meanwhile
			ok, err := r.waitForService(ctx, j, &waited, a.Error)
			if err != nil || !ok {
				return a, nil
			}
			if p.again(ctx) != nil {
				return a, nil
			}
			continue
		}
		if lease != nil && lease.Failed() && r.pool.InService() > 0 {
			r.logf("attempt %s/%s#%d: endpoint %s failed (%s); retry %d of %d on another endpoint", j.Arm.Name, j.Task.ID, j.Index, lease.Endpoint(), a.Error, try, plan.MaxTries-1)
			if p.again(ctx) != nil {
				return a, nil
			}
			continue
		}
		wait := r.backoff(try)
		r.logf("attempt %s/%s#%d: infrastructure failure (%s); retry %d of %d in %s", j.Arm.Name, j.Task.ID, j.Index, a.Error, try, plan.MaxTries-1, wait)
		p.scored() // its place to be scored is another's during the backoff
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return a, nil
		}
		if p.again(ctx) != nil {
			return a, nil
		}
	}
}

// DefaultMaxWait is Runner.MaxWait's default: long enough for a model
// server to be restarted and load its model, short enough that a run
// with a server gone for good ends the same day.
const DefaultMaxWait = 10 * time.Minute

// serviceCheck is how often an attempt waiting for service looks again.
const serviceCheck = 250 * time.Millisecond

// waitForService waits until an endpoint of the pool is in service again,
// adding the time to *waited. It returns false when the attempt has
// waited MaxWait in all (it then stays an infrastructure failure), and
// ctx's error when the run ends first.
func (r *Runner) waitForService(ctx context.Context, j Job, waited *time.Duration, why string) (bool, error) {
	limit := r.MaxWait
	if limit <= 0 {
		limit = DefaultMaxWait
	}
	if *waited >= limit {
		return false, nil
	}
	r.logf("attempt %s/%s#%d: no model server in service (%s); waiting for one (at most %s more, --max-wait), without using a try", j.Arm.Name, j.Task.ID, j.Index, why, (limit - *waited).Round(time.Second))
	t := time.NewTicker(serviceCheck)
	defer t.Stop()
	start := time.Now()
	defer func() { *waited += time.Since(start) }()
	for r.pool.InService() == 0 {
		if *waited+time.Since(start) >= limit {
			r.logf("attempt %s/%s#%d: no model server in service for %s (--max-wait): it stays an infrastructure failure, not scored", j.Arm.Name, j.Task.ID, j.Index, limit)
			return false, nil
		}
		select {
		case <-t.C:
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
	return true, nil
}

func (r *Runner) backoff(try int) time.Duration {
	if r.Backoff != nil {
		return r.Backoff(try)
	}
	return min(time.Duration(1<<min(try, 6))*time.Second, time.Minute)
}

func (r *Runner) logf(format string, args ...any) {
	if r.Log == nil {
		return
	}
	line := fmt.Sprintf(format+"\n", args...)
	r.logMu.Lock()
	defer r.logMu.Unlock()
	io.WriteString(r.Log, line) //nolint:errcheck // a warning that cannot be written is dropped
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
