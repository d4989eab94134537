package runner

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ollama/ollama/api"
	"golang.org/x/sync/semaphore"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/bound"
	"github.com/benchhq/bench/endpoint"
	"github.com/benchhq/bench/overhead"
	"github.com/benchhq/bench/results"
)

// modelContext reads the model's own context length, and warns when the
// plan's num_ctx is above it: Ollama then lowers num_ctx silently and cuts
// prompts at the model's length, which is what truncation is judged
// against from then on. A model that is not pulled stops the run here.
func (r *Runner) modelContext(ctx context.Context, plan *Plan) (int, error) {
	n, err := bounded(ctx, plan.RequestTimeout, func(ctx context.Context) (int, error) {
		return agent.ModelContextLength(ctx, r.pool.First().Model, plan.Model)
	})
	if errors.Is(err, agent.ErrNoTools) {
		return 0, agent.WithHint(err)
	}
	if agent.OnlyUnknown(err) {
		r.logf("warning: the model server did not give the context length of %s (%v): truncation is judged against num_ctx alone, and a num_ctx above the model's own length would go unnoticed", plan.Model, err)
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read the context length of %s: %w", plan.Model, agent.WithHint(err))
	}
	numCtx, _ := agent.NumCtx(plan.Options) // checked by Normalize
	if w := agent.ContextWarning(plan.Model, numCtx, n); w != "" {
		r.logf("warning: %s", w)
	}
	return n, nil
}

// measureOverhead measures, per arm, the prompt tokens its tool sets add
// to every request: one minimal request per configuration against the
// run's model, on one endpoint (the first in service, ep): the tokens are the
// model's weights', and one endpoint gives them all even when the
// endpoints serve different weights (--allow-mixed-models). Its first
// requests are also the check of the model before anything is stored: a
// server that is down, a model that is not pulled or one that cannot take
// tools stops the run, with what to do.
//
// The requests of every arm go at once, to ep, as many in flight as slots:
// model slots of the run that the caller holds for the measurement, while
// the first attempts use the others.
func (r *Runner) measureOverhead(ctx context.Context, plan *Plan, armSets map[string][]overhead.ToolSet, ep *endpoint.Endpoint, slots int) ([]*overhead.Report, error) {
	model := onEndpoint{pool: r.pool, ep: ep, timeout: plan.RequestTimeout}
	sem := semaphore.NewWeighted(int64(max(slots, 1)))
	reps := make([]*overhead.Report, len(plan.Arms))
	errs := make([]error, len(plan.Arms))
	var wg sync.WaitGroup
	for i, arm := range plan.Arms {
		r.logf("arm %s: measuring what its tools cost in prompt tokens (one short request per tool and tool set)", arm.Name)
		wg.Go(func() {
			reps[i], errs[i] = overhead.MeasureLimited(ctx, sem, model, plan.Model, plan.Options, r.modelCtx, armSets[arm.Name])
		})
	}
	wg.Wait()
	for i, arm := range plan.Arms {
		if errs[i] != nil {
			return nil, fmt.Errorf("measure tool overhead of arm %s: %w", arm.Name, errs[i])
		}
		rep := reps[i]
		rep.Arm = arm.Name
		total := rep.TotalBound()
		r.logf("arm %s: %d tools cost %s prompt tokens a request (%.1f%% of the context, %d)", arm.Name, rep.ToolCount(), total, 100*rep.Share(total.N), rep.Context())
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

// checkModel asks every endpoint which weights it serves under the plan's
// model name (endpoint.Pool.Check) and returns what to store with the
// run. Endpoints that disagree, or that serve other weights than a
// resumed run started with, stop the run unless AllowMixedModels.
func (r *Runner) checkModel(ctx context.Context, plan *Plan, run *results.Run) (string, error) {
	digest, warnings, err := r.pool.Check(ctx, plan.Model, r.AllowMixedModels)
	if err != nil {
		return "", fmt.Errorf("model %s: %w", plan.Model, silentServer(ctx, err))
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

// contextText says what the context of the plan's requests is, and what
// to do about it, for a warning about truncated turns.
func (r *Runner) contextText(plan *Plan) string {
	numCtx, _ := agent.NumCtx(plan.Options) // checked by Normalize
	if c := agent.EffectiveContext(numCtx, r.modelCtx); c < numCtx {
		return fmt.Sprintf("the model's own %d, below num_ctx %d: offer fewer tools or use a model with a longer context", c, numCtx)
	}
	return fmt.Sprintf("num_ctx %d: raise --num-ctx", numCtx)
}

// unmeasured is the plan restricted to the arms of a stored run that have
// no stored measurement; the others say that theirs is kept.
func (r *Runner) unmeasured(ctx context.Context, run *results.Run, plan *Plan) (*Plan, error) {
	stored, err := r.Store.Overhead(ctx, run.ID)
	if err != nil {
		return nil, fmt.Errorf("resume run %s: %w", run.ID, err)
	}
	have := map[string]results.Overhead{}
	for _, o := range stored {
		have[o.Arm] = o
	}
	p := *plan
	p.Arms = nil
	for _, a := range plan.Arms {
		o, ok := have[a.Name]
		if !ok {
			p.Arms = append(p.Arms, a)
			continue
		}
		r.logf("arm %s: its tools cost %s prompt tokens a request, as measured when the run started (%s); not measured again", a.Name, bound.Of(o.Tokens, o.Truncated), o.MeasuredAt.Local().Format("2006-01-02 15:04"))
	}
	return &p, nil
}

// overheadRequests is how many requests measureOverhead sends for plan.
func overheadRequests(plan *Plan, armSets map[string][]overhead.ToolSet) int {
	n := 0
	for _, arm := range plan.Arms {
		n += overhead.Requests(armSets[arm.Name])
	}
	return n
}

// onEndpoint sends each request on a slot of one endpoint of the pool,
// leased for it as an attempt leases one, so that the measurement and the
// attempts beside it never give an endpoint more than its slots. Each
// request is bounded by timeout, from when it has its slot.
type onEndpoint struct {
	pool    *endpoint.Pool
	ep      *endpoint.Endpoint
	timeout time.Duration
}

// Chat sends req on a slot of the endpoint, leased for it.
func (m onEndpoint) Chat(ctx context.Context, req *api.ChatRequest) (*api.ChatResponse, error) {
	lease, err := m.pool.AcquireOn(ctx, m.ep)
	if err != nil {
		return nil, err
	}
	defer lease.Release()
	return bounded(ctx, m.timeout, func(ctx context.Context) (*api.ChatResponse, error) {
		return lease.Model().Chat(ctx, req)
	})
}
