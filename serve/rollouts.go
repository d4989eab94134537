package serve

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/evaluator"
	"github.com/benchhq/bench/results"
	"github.com/benchhq/bench/runner"
)

// The events of a request's stream, one JSON object a line.

// AcceptedEvent opens the stream: the request's id (its run's id in the
// store) and its place in the queue.
type AcceptedEvent struct {
	Event string `json:"event"` // "accepted"
	ID    string `json:"id"`
	RunID string `json:"run_id"`
	// Attempts is the request's attempts (tasks × G); QueuedBehind the
	// requests ahead of it.
	Attempts     int `json:"attempts"`
	QueuedBehind int `json:"queued_behind"`
}

// StartedEvent says that the request left the queue and its run starts.
type StartedEvent struct {
	Event string `json:"event"` // "started"
	ID    string `json:"id"`
}

// GroupEvent is one task's group, scored, once its G attempts are stored
// (Complete), or when the request ended before (not Complete: the
// attempts stored so far).
type GroupEvent struct {
	Event    string `json:"event"` // "group"
	ID       string `json:"id"`
	RunID    string `json:"run_id"`
	Arm      string `json:"arm"`
	TaskID   string `json:"task_id"`
	GroupID  string `json:"group_id"`
	Complete bool   `json:"complete"`
	// AdvantageMethod computed each finished attempt's Advantage over the
	// group's finished attempts (infrastructure failures left out).
	AdvantageMethod string          `json:"advantage_method"`
	Attempts        []AttemptResult `json:"attempts"`
}

// AttemptResult is one attempt of a group.
type AttemptResult struct {
	Index int `json:"index"`
	// Status is finished (scored) or infra_error (not scored: no reward,
	// no advantage, out of the group's statistics).
	Status     string   `json:"status"`
	Reward     *int     `json:"reward"`
	Advantage  *float64 `json:"advantage"`
	StopReason string   `json:"stop_reason"`
	Error      string   `json:"error,omitempty"`
	Turns      int      `json:"turns"`
	// The attempt's exact token data in TRL's rollout shape (prompt_ids,
	// completion_ids, logprobs, env_mask), absent when it has none:
	// TokensMissing then says why. Never made up by tokenising again.
	*results.Rollout
	TokensMissing string `json:"tokens_missing,omitempty"`
	// ModelDigests are the weights that served each turn.
	ModelDigests []string `json:"model_digests"`
}

// DoneEvent ends a stream whose run ended: every attempt stored, or the
// request canceled (Canceled, with why) with its finished attempts stored.
type DoneEvent struct {
	Event       string `json:"event"` // "done"
	ID          string `json:"id"`
	RunID       string `json:"run_id"`
	Stored      int    `json:"stored"`
	InfraErrors int    `json:"infra_errors"`
	Canceled    bool   `json:"canceled"`
	Reason      string `json:"reason,omitempty"`
}

// ErrorEvent ends a stream whose run failed (a preflight that failed:
// nothing stored; a failure of the store: what was stored stays).
type ErrorEvent struct {
	Event string `json:"event"` // "error"
	ID    string `json:"id,omitempty"`
	Error string `json:"error"`
}

// rollouts runs one request and streams its groups.
func (s *Service) rollouts(w http.ResponseWriter, r *http.Request) {
	req, err := decodeRequest(http.MaxBytesReader(w, r.Body, 1<<20))
	if err != nil {
		writeJSON(w, http.StatusBadRequest, errorBody{err.Error()})
		return
	}
	plan, err := s.plan(req)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, errorBody{err.Error()})
		return
	}
	pool, err := s.pool(req)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, errorBody{err.Error()})
		return
	}
	id := plan.Name
	if id == "" {
		id = runner.NewRunID(time.Now())
	}
	// The request ends when its client goes, when it is canceled, or when
	// the service closes; its finished attempts stay stored.
	ctx, cancel := context.WithCancelCause(r.Context())
	defer cancel(nil)
	stop := context.AfterFunc(s.ctx, func() { cancel(errClosed) })
	defer stop()
	j := &job{id: id, state: stateQueued, created: time.Now(), cancel: cancel, total: len(plan.Suite.Tasks) * plan.Attempts}
	if err := s.add(j); err != nil {
		writeJSON(w, http.StatusConflict, errorBody{err.Error()})
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	st := &stream{w: w, flush: func() { _ = rc.Flush() }}
	st.send(AcceptedEvent{Event: "accepted", ID: id, RunID: id, Attempts: j.total, QueuedBehind: s.queuedBefore(j)})

	select {
	case s.slots <- struct{}{}:
		defer func() { <-s.slots }()
	case <-ctx.Done():
		why := cause(ctx)
		s.set(j, func(j *job) { j.state, j.err = stateCanceled, why })
		st.send(DoneEvent{Event: "done", ID: id, RunID: id, Canceled: true, Reason: why})
		return
	}
	s.set(j, func(j *job) { j.state = stateRunning })
	st.send(StartedEvent{Event: "started", ID: id})

	groups := newGroups(id, plan)
	saved := make(chan *results.Attempt, 64)
	rn := s.cfg.Runner()
	rn.Endpoints = pool // the service's pool, or the request's view of it
	rn.Saved = func(a *results.Attempt) { saved <- a }
	type result struct {
		out *runner.Outcome
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := rn.Run(ctx, plan, id)
		close(saved) // Run returns once every Saved call is over
		done <- result{out, err}
	}()
	stored, infra := 0, 0
	for a := range saved {
		stored++
		if a.Status == results.StatusInfraError {
			infra++
		}
		s.set(j, func(j *job) { j.stored = stored })
		if g := groups.add(a); g != nil {
			st.send(g.event(true))
		}
	}
	res := <-done
	for _, g := range groups.unfinished() {
		st.send(g.event(false))
	}
	switch {
	case ctx.Err() != nil:
		// Canceled (DELETE, a client gone, the service closing): whatever
		// the run said of being stopped, the finished attempts are stored.
		why := cause(ctx)
		s.set(j, func(j *job) { j.state, j.err = stateCanceled, why })
		st.send(DoneEvent{Event: "done", ID: id, RunID: id, Stored: stored, InfraErrors: infra, Canceled: true, Reason: why})
	case res.err != nil && stored == 0:
		s.set(j, func(j *job) { j.state, j.err = stateFailed, res.err.Error() })
		st.send(ErrorEvent{Event: "error", ID: id, Error: agent.WithHint(res.err).Error()})
	case res.err != nil:
		s.set(j, func(j *job) { j.state, j.err = stateFailed, res.err.Error() })
		st.send(ErrorEvent{Event: "error", ID: id, Error: fmt.Sprintf("%v (the %d attempts stored stay in run %s)", res.err, stored, id)})
	case res.out != nil && res.out.Interrupted:
		why := cause(ctx)
		s.set(j, func(j *job) { j.state, j.err = stateCanceled, why })
		st.send(DoneEvent{Event: "done", ID: id, RunID: id, Stored: stored, InfraErrors: infra, Canceled: true, Reason: why})
	default:
		s.set(j, func(j *job) { j.state = stateDone })
		st.send(DoneEvent{Event: "done", ID: id, RunID: id, Stored: stored, InfraErrors: infra})
	}
}

// cause says why ctx ended, in words.
func cause(ctx context.Context) string {
	c := context.Cause(ctx)
	switch {
	case c == nil:
		return ""
	case errors.Is(c, context.Canceled):
		return errGone.Error()
	}
	return c.Error()
}

// groups gathers a request's attempts by task until each group is whole.
type groups struct {
	id     string
	plan   *runner.Plan
	byTask map[string]*pending
	order  []*pending
}

// pending is one task's group being gathered.
type pending struct {
	g    *groups
	task string
	arm  string
	in   []*results.Attempt
	sent bool
}

func newGroups(id string, plan *runner.Plan) *groups {
	gs := &groups{id: id, plan: plan, byTask: map[string]*pending{}}
	for _, t := range plan.Suite.Tasks {
		p := &pending{g: gs, task: t.ID, arm: plan.Arms[0].Name}
		gs.byTask[t.ID] = p
		gs.order = append(gs.order, p)
	}
	return gs
}

// add files an attempt, returning its group when that is now whole.
func (gs *groups) add(a *results.Attempt) *pending {
	p := gs.byTask[a.Key.Task]
	if p == nil || p.sent {
		return nil
	}
	p.in = append(p.in, a)
	if len(p.in) < gs.plan.Attempts {
		return nil
	}
	p.sent = true
	return p
}

// unfinished returns the groups never sent that have attempts.
func (gs *groups) unfinished() []*pending {
	var out []*pending
	for _, p := range gs.order {
		if !p.sent && len(p.in) > 0 {
			p.sent = true
			out = append(out, p)
		}
	}
	return out
}

// event is the group's event, advantages computed over its finished
// attempts.
func (p *pending) event(complete bool) GroupEvent {
	method := p.g.plan.Advantage
	ev := GroupEvent{Event: "group", ID: p.g.id, RunID: p.g.id, Arm: p.arm, TaskID: p.task,
		GroupID: p.g.id + "/" + p.arm + "/" + p.task, Complete: complete, AdvantageMethod: string(method)}
	var rewards []float64
	for _, a := range p.in {
		if a.Status == results.StatusFinished && a.Reward != nil {
			rewards = append(rewards, float64(*a.Reward))
		}
	}
	adv, err := evaluator.Advantages(method, [][]float64{rewards})
	if err != nil {
		adv = nil // a method Normalize accepted: cannot happen; no advantages then
	}
	k := 0
	for _, a := range p.in {
		ar := AttemptResult{Index: a.Key.Index, Status: string(a.Status), Error: a.Error, ModelDigests: []string{}}
		if tr := a.Trajectory; tr != nil {
			ar.StopReason, ar.Turns = string(tr.Stop), len(tr.Turns)
			if ar.Error == "" {
				ar.Error = tr.Err
			}
			ts := make([]*agent.TurnTokens, len(tr.Turns))
			for i := range tr.Turns {
				ts[i] = tr.Turns[i].Tokens
				ar.ModelDigests = append(ar.ModelDigests, tr.Turns[i].ModelDigest)
			}
			ar.Rollout, ar.TokensMissing = results.RolloutOf(ts)
		}
		if a.Status == results.StatusFinished && a.Reward != nil {
			ar.Reward = a.Reward
			if adv != nil {
				v := adv[0][k]
				ar.Advantage = &v
			}
			k++
		}
		if ar.Status != string(results.StatusFinished) {
			ar.Rollout, ar.TokensMissing = nil, "not scored: "+ar.Status
		}
		ev.Attempts = append(ev.Attempts, ar)
	}
	return ev
}
