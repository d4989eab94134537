package harbor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/benchhq/bench/evaluator"
	"github.com/benchhq/bench/tasks"
)

// Tasks runs a loaded Harbor suite's tasks for bench's runner: each
// environment prepared once, each attempt in a private copy of it, scored
// by the task's verifier. (cmd/bench adapts it to runner.Rooted.) The
// environments are held, out of Clear's reach, as long as the process
// runs.
type Tasks struct {
	rt    *Runtime
	byDir map[string]*Task
	mu    sync.Mutex
	ready map[string]*Prepared
}

// NewTasks makes the runner's view of suite under rt.
func NewTasks(rt *Runtime, suite *Suite) *Tasks {
	h := &Tasks{rt: rt, byDir: map[string]*Task{}, ready: map[string]*Prepared{}}
	for _, t := range suite.Tasks {
		h.byDir[t.Task.Dir] = t
	}
	return h
}

// Owns reports whether t is one of the suite's Harbor tasks.
func (h *Tasks) Owns(t *tasks.Task) bool { _, ok := h.byDir[t.Dir]; return ok }

// Prepare prepares t's environment (Runtime.Prepare), once.
func (h *Tasks) Prepare(ctx context.Context, t *tasks.Task) error {
	_, err := h.prepared(ctx, t)
	return err
}

func (h *Tasks) prepared(ctx context.Context, t *tasks.Task) (*Prepared, error) {
	ht, ok := h.byDir[t.Dir]
	if !ok {
		return nil, fmt.Errorf("task %s: not a Harbor task of this suite", t.ID)
	}
	h.mu.Lock()
	p := h.ready[t.Dir]
	h.mu.Unlock()
	if p != nil {
		return p, nil
	}
	p, err := h.rt.Prepare(ctx, ht)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	h.ready[t.Dir] = p
	h.mu.Unlock()
	return p, nil
}

// Attempt makes an attempt's private copy of t's prepared environment,
// under tmpDir.
func (h *Tasks) Attempt(ctx context.Context, t *tasks.Task, tmpDir string) (*Attempt, error) {
	p, err := h.prepared(ctx, t)
	if err != nil {
		return nil, err
	}
	return h.rt.NewAttempt(p, tmpDir)
}

// InRoot is where the attempt's sandbox sees the host folder dir, which
// lies in the attempt's root (its working folder when it does not).
func (a *Attempt) InRoot(dir string) string {
	rel, err := filepath.Rel(a.Root, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return a.p.Meta.Workdir
	}
	return "/" + filepath.ToSlash(rel)
}

// Score runs the verifier (Verify) and gives its verdict as bench's test
// result: passed at bench's threshold, the reward as written and its
// metrics, ctrf.json's cases as the per-test verdicts, the reason of a 0
// as the report error. An error is bench's own failure only.
//
// A verifier past its timeout is compared with the reference solution's
// run right after, in a fresh copy: when that one takes as long, the
// machine is overloaded and the timeout says nothing of the agent (an
// error, so the attempt is retried, never scored 0).
func (a *Attempt) Score(ctx context.Context) (*evaluator.TestResult, error) {
	v, log, err := a.Verify(ctx)
	if err != nil {
		return nil, err
	}
	res := TestResult(v, log)
	if v.TimedOut {
		ref, err := a.referenceTime(ctx)
		switch {
		case err != nil:
			return nil, err
		case ref.took >= a.p.Task.Task.Tests.TimeoutOr() || ref.timedOut:
			return nil, fmt.Errorf("task %s: the verifier ran past its timeout of %s, and so did it on the reference solution right after (%s): the machine is overloaded, the timeout says nothing of the agent",
				a.p.Task.Task.ID, a.p.Task.Task.Tests.TimeoutOr(), ref.took.Round(time.Millisecond))
		}
		res.RefDuration = ref.took
	}
	return res, nil
}

type refRun struct {
	took     time.Duration
	timedOut bool
}

// referenceTime runs solve.sh and the verifier in a fresh copy and says
// how long the verifier took; zero when the task has no solve.sh.
func (a *Attempt) referenceTime(ctx context.Context) (refRun, error) {
	if fi, err := os.Stat(filepath.Join(a.p.Task.Task.Dir, SolveScript)); err != nil || !fi.Mode().IsRegular() {
		return refRun{}, nil // nothing to compare with: the agent's timeout stands
	}
	b, err := a.rt.NewAttempt(a.p, filepath.Dir(a.dir))
	if err != nil {
		return refRun{}, err
	}
	defer b.Close() //nolint:errcheck // a temporary copy
	if _, err := b.Solve(ctx); err != nil {
		return refRun{}, err
	}
	v, log, err := b.Verify(ctx)
	if err != nil {
		return refRun{}, err
	}
	return refRun{took: log.Took, timedOut: v.TimedOut}, nil
}

// TestResult is a verifier's verdict as bench's test result.
func TestResult(v Verdict, log StepLog) *evaluator.TestResult {
	head := "harbor verifier: "
	switch {
	case v.Reason != "":
		head += "reward 0: " + v.Reason
	default:
		head += fmt.Sprintf("reward %v from %s (pass at %v: %v)", v.Value, v.Source, Threshold, v.Passed)
		if len(v.Metrics) > 0 {
			head += fmt.Sprintf("; metrics %v", v.Metrics)
		}
	}
	var value *float64
	if v.Source != "" {
		value = &v.Value
	}
	return &evaluator.TestResult{
		Value:       value,
		Metrics:     v.Metrics,
		Command:     TestCommand,
		ExitCode:    log.Exit,
		Passed:      v.Passed,
		TimedOut:    v.TimedOut,
		Output:      head + "\n" + log.Output,
		Duration:    log.Took,
		Basis:       evaluator.BasisExitStatus,
		Verdict:     v.Kind,
		Cases:       v.Cases,
		ReportError: v.Reason,
	}
}
