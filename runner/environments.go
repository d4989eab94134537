package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/benchhq/bench/environment"
	"github.com/benchhq/bench/internal/tree"
	"github.com/benchhq/bench/tasks"
)

// envCache is the cache of the tasks' environments of a plan: set-up and
// warming steps run under the plan's sandbox limits, hiding its tasks.
func (r *Runner) envCache(plan *Plan) *environment.Cache {
	spec := plan.Sandbox.Spec(false)
	spec.Hide = r.hidden(plan)
	return &environment.Cache{Dir: r.EnvDir, Sandbox: r.Sandbox, Spec: spec, TempDir: r.TempDir}
}

// prepareEnvs prepares the environment of every task of the plan (those
// the cache holds already are only read), as many at once as the plan
// runs attempts, and says which it prepared and how long each took. They
// stay in use (bench cache clear leaves them alone) until release.
func (r *Runner) prepareEnvs(ctx context.Context, plan *Plan) (envs map[string]*environment.Env, release func(), err error) {
	cache := r.envCache(plan)
	if !r.Sandbox.Isolated() {
		// Views on the host, reachable by the sandbox user through the
		// run's temp folder, not through the operator's home.
		if cache.ViewsDir, err = os.MkdirTemp(r.scratch, "bench-views-"); err != nil {
			return nil, nil, fmt.Errorf("make the folder of the environments' views: %w", err)
		}
		tree.Spread(cache.ViewsDir) // two views an attempt (see tree.Scratch)
	}
	closeAll := func() {
		cache.Close()
		if cache.ViewsDir != "" {
			tree.Remove(cache.ViewsDir)
		}
	}
	defer func() {
		if err != nil {
			closeAll()
		}
	}()
	out := map[string]*environment.Env{}
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(plan.Concurrency, 2))
	start := time.Now()
	prepared := 0
	for _, t := range plan.Suite.Tasks {
		if rt := r.rooted(t); rt != nil {
			g.Go(func() error { return rt.Prepare(gctx, t) })
			continue
		}
		g.Go(func() error {
			t0 := time.Now()
			e, err := cache.Prepare(gctx, t)
			if err != nil {
				return err
			}
			if err := refPassed(t, e); err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			out[t.Dir] = e
			if e.Fresh {
				prepared++
				r.logf("environment of %s prepared in %s (%s; its hidden tests take %s warm)", t.ID, time.Since(t0).Round(100*time.Millisecond), environment.SizeText(e.Meta.Bytes), e.Meta.RefTest.Round(time.Millisecond))
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	if prepared > 0 {
		r.logf("environments: %d prepared in %s, %d from the cache %s", prepared, time.Since(start).Round(100*time.Millisecond), len(out)-prepared, cache.Dir)
	}
	return out, closeAll, nil
}

// refPassed refuses a task whose reference solution failed its hidden
// tests when its environment was prepared: every reward of the task would
// rest on tests that a correct solution fails there. An impossible task
// (tasks.TagImpossible) is built so that its reference fails: it runs.
func refPassed(t *tasks.Task, e *environment.Env) error {
	if e.Meta.RefPassed || t.Impossible() {
		return nil
	}
	if _, err := os.Stat(filepath.Join(t.SolutionDir(), "solve.sh")); err != nil {
		return nil // no reference solution: nothing to compare with
	}
	var last environment.Step
	for _, st := range e.Meta.Steps {
		if strings.HasPrefix(st.Name, "hidden tests on the solution") {
			last = st
		}
	}
	msg := fmt.Sprintf("task %s: its reference solution failed the hidden tests in its prepared environment", t.ID)
	if last.Name != "" {
		msg += fmt.Sprintf(" (exit %d)", last.ExitCode)
		if out := strings.TrimSpace(last.Output); out != "" {
			msg += ":\n" + out
		}
	}
	return fmt.Errorf("%s\ncheck the task with: bench validate %s; if it passes there, the environment was prepared on a bad day: bench cache clear --task %s", msg, t.Dir, t.ID)
}
