package runner

import (
	"context"
	"fmt"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/endpoint"
)

// weights is what an attempt's endpoint said of the weights it serves
// before the attempt's loop.
type weights struct {
	ep     *endpoint.Endpoint
	before string
}

// weightsBefore asks the endpoint of an attempt's model which weights it
// serves, when the plan wants token data or requires a digest: a
// mismatch with Plan.ModelDigest is an error (the attempt is then an
// infrastructure failure, never run). Nil when not asked or not known.
func (r *Runner) weightsBefore(ctx context.Context, plan *Plan, model agent.Model) (*weights, error) {
	if !plan.Tokens && plan.ModelDigest == "" {
		return nil, nil
	}
	em, ok := model.(agent.EndpointModel)
	if !ok {
		return nil, nil
	}
	ep := r.pool.Named(em.Endpoint())
	if ep == nil {
		return nil, nil
	}
	id, err := ep.Identify(ctx, plan.Model)
	if err != nil {
		return nil, fmt.Errorf("ask which weights serve %s: %w", plan.Model, err)
	}
	if plan.ModelDigest != "" && id != plan.ModelDigest {
		return nil, fmt.Errorf("endpoint %s serves %s as %q, the request requires %q", ep.Name, plan.Model, id, plan.ModelDigest)
	}
	return &weights{ep: ep, before: id}, nil
}

// weightsAfter asks the endpoint again once the loop is over, and records
// on each turn the weights that served it. Weights that changed during
// the attempt are recorded as "A -> B" (no turn can be told to be of
// either) and, when the plan requires a digest, are an error.
func (r *Runner) weightsAfter(ctx context.Context, plan *Plan, w *weights, tr *agent.Trajectory) error {
	if w == nil || len(tr.Turns) == 0 {
		return nil
	}
	after, err := w.ep.Identify(context.WithoutCancel(ctx), plan.Model)
	if err != nil {
		return fmt.Errorf("ask which weights served %s after the attempt: %w", plan.Model, err)
	}
	digest := after
	if after != w.before {
		digest = w.before + " -> " + after
	}
	for i := range tr.Turns {
		tr.Turns[i].ModelDigest = digest
	}
	if plan.ModelDigest != "" && after != plan.ModelDigest {
		return fmt.Errorf("endpoint %s served %s as %q by the end of the attempt (it was %q before), the request requires %q", w.ep.Name, plan.Model, after, w.before, plan.ModelDigest)
	}
	return nil
}
