// Package serve is bench as an RL environment: an HTTP service that a
// training loop asks for rollouts. A request names tasks of the
// service's suite, G, an arm and the model's sampling; the service runs
// them as a run of their own (the same runner, sandbox, tools, MCP
// servers, scoring and store as bench run) and streams each task's group
// back, scored, with its advantage and the exact token data of each
// attempt, as soon as its attempts are stored. Requests run side by
// side on the service's endpoint pool, whose slots bound the model
// requests of all of them together; a request may name some of the
// pool's endpoints to run on, never an address of its own.
// docs/serve.md is the API.
package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/endpoint"
	"github.com/benchhq/bench/runner"
	"github.com/benchhq/bench/sandbox"
	"github.com/benchhq/bench/tasks"
)

// Config is what every request of a service shares.
type Config struct {
	// Suite holds the tasks requests may name.
	Suite *tasks.Suite
	// Model, API and Options are the defaults of a request's plan.
	Model   string
	API     string
	Options map[string]any
	// Concurrency bounds the attempts of one request in their agent loop;
	// the endpoints' slots bound those of every request together.
	Concurrency int
	// MaxRequests bounds the requests running at once; later ones wait
	// in the queue (1 when 0).
	MaxRequests int
	// RequestTimeout and MaxTries are the plans' (runner defaults when 0).
	RequestTimeout time.Duration
	MaxTries       int
	// Sandbox, Profiles, ProfilesRaw and BaseDir are the plans' too.
	Sandbox     sandbox.Config
	Profiles    agent.Profiles
	ProfilesRaw map[string]any
	BaseDir     string
	// Pool is the endpoint pool every request's runner shares.
	Pool *endpoint.Pool
	// Runner makes the runner of one request, on the shared store and
	// sandbox: a runner runs one plan at a time. Its Endpoints are set to
	// Pool, or to the view of Pool over the endpoints the request names.
	Runner func() *runner.Runner
}

// Service runs the requests. Its Handler serves the API.
type Service struct {
	cfg    Config
	ctx    context.Context // ends at Close: every request is canceled
	cancel context.CancelFunc
	slots  chan struct{}

	mu   sync.Mutex
	jobs map[string]*job
	// order is the ids of jobs in arrival order, for pruning.
	order []string
}

// Request states.
const (
	stateQueued   = "queued"
	stateRunning  = "running"
	stateDone     = "done"
	stateCanceled = "canceled"
	stateFailed   = "failed"
)

// job is one request, from its arrival until long after its end (its
// status stays to be asked for).
type job struct {
	id      string
	state   string
	created time.Time
	cancel  context.CancelCauseFunc
	// total is the request's attempts; stored those stored so far.
	total, stored int
	err           string
}

// keepJobs bounds the finished requests whose status is kept.
const keepJobs = 1000

// errCanceled and errClosed are why a request's context ends.
var (
	errCanceled = errors.New("canceled by DELETE /v1/rollouts/{id}")
	errClosed   = errors.New("the service is shutting down")
	errGone     = errors.New("the client disconnected")
)

// New makes a service. Close it when done.
func New(cfg Config) (*Service, error) {
	switch {
	case cfg.Suite == nil || len(cfg.Suite.Tasks) == 0:
		return nil, errors.New("serve: no suite, or a suite without tasks")
	case cfg.Runner == nil:
		return nil, errors.New("serve: no Runner to make each request's runner")
	case cfg.Pool == nil:
		return nil, errors.New("serve: no endpoint pool")
	}
	if cfg.MaxRequests <= 0 {
		cfg.MaxRequests = 1
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = runner.DefaultConcurrency
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Service{cfg: cfg, ctx: ctx, cancel: cancel, slots: make(chan struct{}, cfg.MaxRequests), jobs: map[string]*job{}}, nil
}

// Close cancels every request: their finished attempts stay stored.
func (s *Service) Close() { s.cancel() }

// Handler serves the API (docs/serve.md):
//
//	POST   /v1/rollouts        run a request, stream its groups (NDJSON)
//	GET    /v1/rollouts/{id}   a request's state
//	DELETE /v1/rollouts/{id}   cancel a request
//	GET    /v1/health          health and queue depth
func (s *Service) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/rollouts", s.rollouts)
	mux.HandleFunc("GET /v1/rollouts/{id}", s.status)
	mux.HandleFunc("DELETE /v1/rollouts/{id}", s.cancelJob)
	mux.HandleFunc("GET /v1/health", s.health)
	return mux
}

// writeJSON answers with one JSON object.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// errorBody is the body of every error answer.
type errorBody struct {
	Error string `json:"error"`
}

// JobStatus is a request's state, as GET /v1/rollouts/{id} gives it.
type JobStatus struct {
	ID string `json:"id"`
	// State is queued, running, done, canceled or failed.
	State string `json:"state"`
	// Attempts is the request's attempts; Stored those stored so far.
	Attempts int    `json:"attempts"`
	Stored   int    `json:"stored"`
	Error    string `json:"error,omitempty"`
}

func (j *job) status() JobStatus {
	return JobStatus{ID: j.id, State: j.state, Attempts: j.total, Stored: j.stored, Error: j.err}
}

func (s *Service) status(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	j, ok := s.jobs[r.PathValue("id")]
	var st JobStatus
	if ok {
		st = j.status()
	}
	s.mu.Unlock()
	if !ok {
		writeJSON(w, http.StatusNotFound, errorBody{fmt.Sprintf("no request %q (the ids are those of the accepted events)", r.PathValue("id"))})
		return
	}
	writeJSON(w, http.StatusOK, st)
}

func (s *Service) cancelJob(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	j, ok := s.jobs[r.PathValue("id")]
	var st JobStatus
	if ok {
		if j.state == stateQueued || j.state == stateRunning {
			j.cancel(errCanceled)
		}
		st = j.status()
	}
	s.mu.Unlock()
	if !ok {
		writeJSON(w, http.StatusNotFound, errorBody{fmt.Sprintf("no request %q", r.PathValue("id"))})
		return
	}
	writeJSON(w, http.StatusAccepted, st)
}

// Health is the service's state, as GET /v1/health gives it.
type Health struct {
	// Status is "ok", or "degraded" when no endpoint is in service.
	Status string `json:"status"`
	// Running and Queued count requests; QueueDepth is the attempts of
	// both not stored yet.
	Running    int `json:"running"`
	Queued     int `json:"queued"`
	QueueDepth int `json:"queue_depth"`
	// MaxRequests and Concurrency are the service's bounds; Slots the
	// endpoints' (0: unbounded), EndpointsInService of Endpoints.
	MaxRequests        int `json:"max_requests"`
	Concurrency        int `json:"concurrency"`
	Slots              int `json:"slots"`
	Endpoints          int `json:"endpoints"`
	EndpointsInService int `json:"endpoints_in_service"`
	// EndpointNames are the endpoints' names, in the order given: what a
	// request's "endpoints" may name.
	EndpointNames []string `json:"endpoint_names"`
}

func (s *Service) health(w http.ResponseWriter, r *http.Request) {
	h := Health{Status: "ok", MaxRequests: s.cfg.MaxRequests, Concurrency: s.cfg.Concurrency,
		Slots: s.cfg.Pool.Slots(), Endpoints: len(s.cfg.Pool.Endpoints()), EndpointsInService: s.cfg.Pool.InService()}
	for _, e := range s.cfg.Pool.Endpoints() {
		h.EndpointNames = append(h.EndpointNames, e.Name)
	}
	s.mu.Lock()
	for _, j := range s.jobs {
		switch j.state {
		case stateQueued:
			h.Queued++
		case stateRunning:
			h.Running++
		default:
			continue
		}
		h.QueueDepth += j.total - j.stored
	}
	s.mu.Unlock()
	if h.EndpointsInService == 0 {
		h.Status = "degraded"
	}
	writeJSON(w, http.StatusOK, h)
}

// add registers a job, refusing an id in use by a request not over.
func (s *Service) add(j *job) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.jobs[j.id]; ok && (old.state == stateQueued || old.state == stateRunning) {
		return fmt.Errorf("name: a request for run %q is already %s", j.id, old.state)
	}
	if _, ok := s.jobs[j.id]; !ok {
		s.order = append(s.order, j.id)
	}
	s.jobs[j.id] = j
	// Forget the oldest finished requests beyond keepJobs.
	for len(s.order) > keepJobs {
		old := s.jobs[s.order[0]]
		if old != nil && (old.state == stateQueued || old.state == stateRunning) {
			break
		}
		delete(s.jobs, s.order[0])
		s.order = s.order[1:]
	}
	return nil
}

// set changes a job under the lock.
func (s *Service) set(j *job, f func(j *job)) {
	s.mu.Lock()
	f(j)
	s.mu.Unlock()
}

// queuedBefore counts the requests waiting ahead of j.
func (s *Service) queuedBefore(j *job) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, id := range s.order {
		if o := s.jobs[id]; o != j && o.state == stateQueued && o.created.Before(j.created) {
			n++
		}
	}
	return n
}

// stream writes NDJSON events, flushing each; after a failed write (the
// client is gone) it writes nothing more.
type stream struct {
	w      io.Writer
	flush  func()
	failed bool
}

func (st *stream) send(v any) {
	if st.failed {
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(ErrorEvent{Event: "error", Error: fmt.Sprintf("encode event: %v", err)})
	}
	if _, err := st.w.Write(append(b, '\n')); err != nil {
		st.failed = true
		return
	}
	st.flush()
}
