package runner

import (
	"context"
	"fmt"
	"os"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/overhead"
	"github.com/benchhq/bench/results"
)

// measureOverhead measures, once per arm, the prompt tokens its tool set
// adds to every request: one minimal request per configuration against
// the run's model. The reports are saved with the run so that the report
// can put an arm's tool cost beside its pass rate. Arms already measured
// (a resumed run) are skipped.
func (r *Runner) measureOverhead(ctx context.Context, plan *Plan, have map[string]bool) ([]*overhead.Report, error) {
	dir, err := os.MkdirTemp(r.TempDir, "bench-overhead-")
	if err != nil {
		return nil, fmt.Errorf("measure tool overhead: %w", err)
	}
	defer os.RemoveAll(dir)
	ws, err := agent.NewWorkspace(dir)
	if err != nil {
		return nil, fmt.Errorf("measure tool overhead: %w", err)
	}
	var reps []*overhead.Report
	for _, arm := range plan.Arms {
		if have[arm.Name] {
			continue
		}
		reg, err := builtinRegistry(ws, arm, agent.BuiltinOptions{})
		if err != nil {
			return nil, err
		}
		sets := []overhead.ToolSet{{Name: overhead.BuiltinSet, Tools: reg.Tools()}}
		conns, err := r.connectArmServers(ctx, plan, arm, dir)
		if err != nil {
			return nil, err
		}
		for _, c := range conns {
			sets = append(sets, overhead.ToolSet{Name: c.name, Tools: c.tools})
		}
		r.logf("arm %s: measuring what its tools cost in prompt tokens (one short request per tool and tool set)", arm.Name)
		rep, err := overhead.Measure(ctx, r.Model, plan.Model, plan.Options, sets)
		closeAll(conns)
		if err != nil {
			return nil, fmt.Errorf("measure tool overhead of arm %s: %w", arm.Name, err)
		}
		rep.Arm = arm.Name
		r.logf("arm %s: %d tools cost %d prompt tokens a request (%.1f%% of num_ctx %d)", arm.Name, rep.ToolCount(), rep.Total(), 100*rep.Share(rep.Total()), rep.NumCtx)
		for _, w := range rep.Warnings() {
			r.logf("warning: arm %s: %s", arm.Name, w)
		}
		reps = append(reps, rep)
	}
	return reps, nil
}

// saveOverhead stores the measurements of a run's arms.
func (r *Runner) saveOverhead(ctx context.Context, runID string, reps []*overhead.Report) error {
	for _, rep := range reps {
		if err := r.Store.SaveOverhead(ctx, runID, rep.Record()); err != nil {
			return fmt.Errorf("save tool overhead of arm %s: %w", rep.Arm, err)
		}
	}
	return nil
}

// measuredArms lists the arms of a stored run whose overhead is stored.
func measuredArms(ctx context.Context, store *results.Store, runID string) (map[string]bool, error) {
	have := map[string]bool{}
	stored, err := store.Overhead(ctx, runID)
	if err != nil {
		return nil, err
	}
	for _, o := range stored {
		have[o.Arm] = true
	}
	return have, nil
}
