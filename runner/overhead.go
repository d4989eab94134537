package runner

import (
	"context"
	"fmt"

	"github.com/benchhq/bench/overhead"
)

// measureOverhead measures, per arm, the prompt tokens its tool sets add
// to every request: one minimal request per configuration against the
// run's model. Its first requests are also the check of the model before
// the first attempt: a server that is down, a model that is not pulled or
// one that cannot take tools stops the run here, with what to do.
func (r *Runner) measureOverhead(ctx context.Context, plan *Plan, armSets map[string][]overhead.ToolSet) ([]*overhead.Report, error) {
	var reps []*overhead.Report
	for _, arm := range plan.Arms {
		r.logf("arm %s: measuring what its tools cost in prompt tokens (one short request per tool and tool set)", arm.Name)
		rep, err := overhead.Measure(ctx, r.Model, plan.Model, plan.Options, armSets[arm.Name])
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

// saveOverhead stores the measurements of a run's arms, replacing those of
// an earlier start of the same run.
func (r *Runner) saveOverhead(ctx context.Context, runID string, reps []*overhead.Report) error {
	for _, rep := range reps {
		if err := r.Store.SaveOverhead(ctx, runID, rep.Record()); err != nil {
			return fmt.Errorf("save tool overhead of arm %s: %w", rep.Arm, err)
		}
	}
	return nil
}
