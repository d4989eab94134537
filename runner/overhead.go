package runner

import (
	"context"
	"fmt"

	"github.com/benchhq/bench/overhead"
	"github.com/benchhq/bench/results"
)

// measureOverhead measures, per arm, the prompt tokens its tool sets add
// to every request: one minimal request per configuration against the
// run's model, on one endpoint (the first in service): the tokens are the
// model's, not the server's, and checkModel made sure that every endpoint
// serves the same one. Its first requests are also the check of the model
// before the first attempt: a server that is down, a model that is not
// pulled or one that cannot take tools stops the run here, with what to do.
func (r *Runner) measureOverhead(ctx context.Context, plan *Plan, armSets map[string][]overhead.ToolSet) ([]*overhead.Report, error) {
	model := r.pool.First().Model
	var reps []*overhead.Report
	for _, arm := range plan.Arms {
		r.logf("arm %s: measuring what its tools cost in prompt tokens (one short request per tool and tool set)", arm.Name)
		rep, err := overhead.Measure(ctx, model, plan.Model, plan.Options, armSets[arm.Name])
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

// checkModel asks every endpoint which weights it serves under the plan's
// model name (endpoint.Pool.Check) and returns what to store with the
// run. Endpoints that disagree, or that serve other weights than a
// resumed run started with, stop the run unless AllowMixedModels.
func (r *Runner) checkModel(ctx context.Context, plan *Plan, run *results.Run) (string, error) {
	digest, warnings, err := r.pool.Check(ctx, plan.Model, r.AllowMixedModels)
	if err != nil {
		return "", fmt.Errorf("model %s: %w", plan.Model, err)
	}
	for _, w := range warnings {
		r.logf("warning: %s", w)
	}
	if run != nil && run.ModelDigest != "" && digest != "" && run.ModelDigest != digest {
		msg := fmt.Sprintf("run %s started on %s (%s); the endpoints now serve %s", run.ID, plan.Model, run.ModelDigest, digest)
		if !r.AllowMixedModels {
			return "", fmt.Errorf("%s: its attempts would not be comparable (pass --allow-mixed-models to go on anyway)", msg)
		}
		r.logf("warning: %s (allowed by --allow-mixed-models)", msg)
	}
	return digest, nil
}
