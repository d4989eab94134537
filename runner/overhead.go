package runner

import (
	"context"
	"fmt"
	"sync"

	"golang.org/x/sync/semaphore"

	"github.com/benchhq/bench/overhead"
)

// measureOverhead measures, per arm, the prompt tokens its tool sets add
// to every request: one minimal request per configuration against the
// run's model. Its first requests are also the check of the model before
// the first attempt: a server that is down, a model that is not pulled or
// one that cannot take tools stops the run here, with what to do.
//
// The requests of every arm go at once, as many in flight as the plan's
// concurrency (the model server's parallel slots, as the attempts use
// them): the measurement takes the time of a few requests, not of all.
func (r *Runner) measureOverhead(ctx context.Context, plan *Plan, armSets map[string][]overhead.ToolSet) ([]*overhead.Report, error) {
	slots := semaphore.NewWeighted(int64(plan.Concurrency))
	reps := make([]*overhead.Report, len(plan.Arms))
	errs := make([]error, len(plan.Arms))
	var wg sync.WaitGroup
	for i, arm := range plan.Arms {
		r.logf("arm %s: measuring what its tools cost in prompt tokens (one short request per tool and tool set)", arm.Name)
		wg.Go(func() {
			reps[i], errs[i] = overhead.MeasureLimited(ctx, slots, r.Model, plan.Model, plan.Options, armSets[arm.Name])
		})
	}
	wg.Wait()
	for i, arm := range plan.Arms {
		if errs[i] != nil {
			return nil, fmt.Errorf("measure tool overhead of arm %s: %w", arm.Name, errs[i])
		}
		rep := reps[i]
		rep.Arm = arm.Name
		r.logf("arm %s: %d tools cost %d prompt tokens a request (%.1f%% of num_ctx %d)", arm.Name, rep.ToolCount(), rep.Total(), 100*rep.Share(rep.Total()), rep.NumCtx)
		for _, w := range rep.Warnings() {
			r.logf("warning: arm %s: %s", arm.Name, w)
		}
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
