package endpoint

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/benchhq/bench/agent"
)

// Pool hands out the endpoints of a run, one attempt at a time.
//
// Acquire gives an attempt the endpoint in service with the most free
// slots (the least loaded share of its slots), and waits while every
// endpoint in service is full. A request that fails for a reason of the
// server (no answer, connection cut, HTTP 5xx or 429, no reply within
// the request timeout) takes its endpoint out of service for a cooldown
// that doubles with each failure in a row (5s, 10s, ... up to 2 min); the
// pool then probes it (GET /api/version, or /v1/models) and puts it back
// when it answers. While another endpoint is in service, attempts are
// never given one that is out; when every endpoint is out, Acquire still
// hands one out, so that attempts keep trying (and the runner's retry
// bound still ends them) exactly as with a single server.
type Pool struct {
	// Cooldown is the time out of service after the n-th failure in a
	// row (n >= 1); nil is 5s × 2^(n-1), at most 2 minutes.
	Cooldown func(n int) time.Duration
	// Log, when set, hears of endpoints taken out and put back.
	Log func(format string, args ...any)

	mu      sync.Mutex
	eps     []*Endpoint
	changed chan struct{} // closed and replaced at every change of state
	done    chan struct{}
	ctx     context.Context // ends at Close: probes in flight stop
	cancel  context.CancelFunc
	closed  bool
	probes  sync.WaitGroup

	// root is the pool a view made by Subset looks into: the view's
	// endpoints are root's, and it shares root's lock, waiters, probes,
	// Cooldown and Log, so that a slot is one slot whichever view takes
	// it. Nil for a pool of its own.
	root *Pool
}

// NewPool makes a pool of endpoints (at least one). Close it when done.
func NewPool(eps ...*Endpoint) (*Pool, error) {
	if len(eps) == 0 {
		return nil, errors.New("endpoint pool: no endpoint")
	}
	seen := map[string]bool{}
	for _, e := range eps {
		if seen[e.Name] {
			return nil, fmt.Errorf("endpoint %s: given twice (give one endpoint with more slots instead)", e.Name)
		}
		seen[e.Name] = true
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Pool{eps: eps, changed: make(chan struct{}), done: make(chan struct{}), ctx: ctx, cancel: cancel}, nil
}

// Subset is a view of the pool over some of its endpoints (at least one,
// each one of the pool's own, as Endpoints or Named give them): attempts
// that acquire from the view go only to those endpoints, and share their
// slots, health and identity with every other attempt of the pool or of
// any of its views (the endpoints are the same, under the same lock).
// When every endpoint of the view is out of service, the view still
// hands one of them out, as a pool does, never another. A view makes no
// endpoint of its own, so it reaches no address the pool does not. Its
// Close does nothing: close the pool. Its own Cooldown and Log are not
// used: the pool's are.
func (p *Pool) Subset(eps ...*Endpoint) (*Pool, error) {
	b := p.base()
	if len(eps) == 0 {
		return nil, errors.New("endpoint pool: a subset of no endpoint")
	}
	seen := map[*Endpoint]bool{}
	for _, e := range eps {
		if e == nil || b.Named(e.Name) != e {
			name := "<nil>"
			if e != nil {
				name = e.Name
			}
			return nil, fmt.Errorf("endpoint %s: not one of the pool's", name)
		}
		if seen[e] {
			return nil, fmt.Errorf("endpoint %s: given twice", e.Name)
		}
		seen[e] = true
	}
	return &Pool{eps: eps, root: b}, nil
}

// base is the pool whose lock guards p's endpoints: p itself, or the pool
// a view looks into.
func (p *Pool) base() *Pool {
	if p.root != nil {
		return p.root
	}
	return p
}

// Endpoints returns the pool's endpoints, in the order given.
func (p *Pool) Endpoints() []*Endpoint { return p.eps }

// Slots is the sum of the endpoints' slots, or 0 when one has no bound.
func (p *Pool) Slots() int {
	n := 0
	for _, e := range p.eps {
		if e.Slots == 0 {
			return 0
		}
		n += e.Slots
	}
	return n
}

// InService counts the endpoints in service.
func (p *Pool) InService() int {
	b := p.base()
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, e := range p.eps {
		if !e.down {
			n++
		}
	}
	return n
}

// First returns the first endpoint in service (the first endpoint when
// none is): what measures the tool overhead, once per model.
func (p *Pool) First() *Endpoint {
	b := p.base()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, e := range p.eps {
		if !e.down {
			return e
		}
	}
	return p.eps[0]
}

// Close stops the probes of endpoints out of service; on a view (Subset)
// it does nothing.
func (p *Pool) Close() {
	if p.root != nil {
		return
	}
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		close(p.done)
		p.cancel()
	}
	p.mu.Unlock()
	p.probes.Wait()
}

// Lease is one attempt's hold on a slot of an endpoint.
type Lease struct {
	pool   *Pool
	ep     *Endpoint
	mu     sync.Mutex
	failed bool
	done   bool
}

// Acquire waits for a free slot and returns its lease; the error is
// ctx's when it ends first.
func (p *Pool) Acquire(ctx context.Context) (*Lease, error) {
	return p.acquire(ctx, p.pick)
}

// AcquireOn waits for a free slot of e itself, in service or not (e is one
// of the pool's: what must be asked of one endpoint, such as the tool
// overhead measured with one model's weights, shares its slots with the
// attempts).
func (p *Pool) AcquireOn(ctx context.Context, e *Endpoint) (*Lease, error) {
	return p.acquire(ctx, func() *Endpoint {
		if e.Slots > 0 && e.busy >= e.Slots {
			return nil
		}
		return e
	})
}

// acquire waits until pick, called with the base pool's lock held, gives
// an endpoint, and leases a slot of it. The lease belongs to the base
// pool: its release and the endpoint's failures are the pool's, whatever
// view acquired it.
func (p *Pool) acquire(ctx context.Context, pick func() *Endpoint) (*Lease, error) {
	b := p.base()
	for {
		b.mu.Lock()
		e := pick()
		if e != nil {
			e.busy++
			b.mu.Unlock()
			return &Lease{pool: b, ep: e}, nil
		}
		wait := b.changed
		b.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// pick chooses an endpoint of p (a view's own) with a free slot: among
// those in service if any is, else among all. The least loaded share of
// slots wins, then the fewest attempts, then the order given.
func (p *Pool) pick() *Endpoint {
	anyUp := false
	for _, e := range p.eps {
		if !e.down {
			anyUp = true
			break
		}
	}
	var best *Endpoint
	var bestLoad float64
	for _, e := range p.eps {
		if (anyUp && e.down) || (e.Slots > 0 && e.busy >= e.Slots) {
			continue
		}
		load := float64(e.busy)
		if e.Slots > 0 {
			load = float64(e.busy+1) / float64(e.Slots)
		}
		if best == nil || load < bestLoad || (load == bestLoad && e.busy < best.busy) {
			best, bestLoad = e, load
		}
	}
	return best
}

// notify wakes whoever waits for a change; call with p.mu held.
func (p *Pool) notify() {
	close(p.changed)
	p.changed = make(chan struct{})
}

func (p *Pool) logf(format string, args ...any) {
	if p.Log != nil {
		p.Log(format, args...)
	}
}

func (p *Pool) cooldown(n int) time.Duration {
	if p.Cooldown != nil {
		return p.Cooldown(n)
	}
	return min(5*time.Second<<min(n-1, 8), 2*time.Minute)
}

// Model is the lease's endpoint as a Model: its requests go to that
// endpoint, and a failure of the server takes the endpoint out of service.
func (l *Lease) Model() agent.Model {
	if _, ok := l.ep.Model.(agent.EncodedModel); ok {
		return leasedEncoded{leased{l}}
	}
	if _, ok := l.ep.Model.(agent.TokenModel); ok {
		return leasedTokens{leased{l}}
	}
	return leased{l}
}

// Endpoint is the name of the lease's endpoint.
func (l *Lease) Endpoint() string { return l.ep.Name }

// Failed reports whether the endpoint failed during the lease (and was
// taken out of service for it).
func (l *Lease) Failed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.failed
}

// Release gives the slot back. It may be called more than once.
func (l *Lease) Release() {
	l.mu.Lock()
	if l.done {
		l.mu.Unlock()
		return
	}
	l.done = true
	l.mu.Unlock()
	p := l.pool
	p.mu.Lock()
	l.ep.busy--
	p.notify()
	p.mu.Unlock()
}

// leased is a Lease's Model.
type leased struct{ l *Lease }

// Chat sends the request to the lease's endpoint and tells the pool how
// the endpoint did.
func (m leased) Chat(ctx context.Context, req *api.ChatRequest) (*api.ChatResponse, error) {
	resp, err := m.l.ep.Model.Chat(ctx, req)
	return m.observe(ctx, resp, err)
}

// leasedEncoded is the Model of a lease whose endpoint's model takes
// requests partly encoded (an agent.EncodedModel): only then does the
// loop encode its messages as it goes, for the lease to pass on.
type leasedEncoded struct{ leased }

// ChatEncoded is Chat with parts of the request already encoded, passed
// on to the endpoint's model.
func (m leasedEncoded) ChatEncoded(ctx context.Context, req *api.ChatRequest, enc agent.Encoded) (*api.ChatResponse, error) {
	resp, err := m.l.ep.Model.(agent.EncodedModel).ChatEncoded(ctx, req, enc)
	return m.observe(ctx, resp, err)
}

// leasedTokens is the Model of a lease whose endpoint's model returns
// token data (an agent.TokenModel): the loop asks it for the ids.
type leasedTokens struct{ leased }

// ChatTokens is Chat with the turn's token data, passed on from the
// endpoint's model.
func (m leasedTokens) ChatTokens(ctx context.Context, req *api.ChatRequest) (*api.ChatResponse, *agent.TurnTokens, error) {
	resp, tokens, err := m.l.ep.Model.(agent.TokenModel).ChatTokens(ctx, req)
	resp, err = m.observe(ctx, resp, err)
	return resp, tokens, err
}

// observe tells the pool how the endpoint did with a request.
func (m leased) observe(ctx context.Context, resp *api.ChatResponse, err error) (*api.ChatResponse, error) {
	e := m.l.ep
	switch {
	case err == nil:
		m.l.pool.succeeded(e)
	case Fault(ctx, err):
		m.l.mu.Lock()
		m.l.failed = true
		m.l.mu.Unlock()
		m.l.pool.failed(e, err)
	}
	return resp, err
}

// Endpoint names the server, for the turns the loop records.
func (m leased) Endpoint() string { return m.l.ep.Name }

// succeeded puts an endpoint that answered back in service.
func (p *Pool) succeeded(e *Endpoint) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e.failures == 0 && !e.down {
		return
	}
	if e.down {
		p.logf("endpoint %s answers again: back in service", e.Name)
		p.notify()
	}
	e.failures, e.down = 0, false
}

// failed takes an endpoint out of service and starts probing it.
func (p *Pool) failed(e *Endpoint, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e.down {
		return // already out: one failure is enough to count
	}
	e.failures++
	e.down = true
	wait := p.cooldown(e.failures)
	p.logf("endpoint %s failed (%v): out of service for %s; its attempts go to the other endpoints", e.Name, err, wait)
	p.notify()
	if !e.probing && !p.closed {
		e.probing = true
		p.probes.Add(1)
		go p.revive(e, wait)
	}
}

// revive waits out an endpoint's cooldown and probes it, again and again
// with a longer cooldown each time, until it answers (or a request to it
// succeeds meanwhile, or the pool closes).
func (p *Pool) revive(e *Endpoint, wait time.Duration) {
	defer p.probes.Done()
	for {
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-p.done:
			t.Stop()
			p.mu.Lock()
			e.probing = false
			p.mu.Unlock()
			return
		}
		var err error
		if e.probe != nil {
			err = e.probe(p.ctx, e)
		}
		p.mu.Lock()
		if !e.down || err == nil {
			if e.down {
				p.logf("endpoint %s answers again: back in service", e.Name)
			}
			e.down, e.probing = false, false
			p.notify()
			p.mu.Unlock()
			return
		}
		e.failures++
		wait = p.cooldown(e.failures)
		p.mu.Unlock()
	}
}

// Fault reports whether err, from a request sent under ctx, is the
// server's failure: no answer, a connection cut, HTTP 5xx, 429 or 408,
// or no reply within the request timeout (agent.ErrRequestTimeout). An
// answer about the request (unknown model, no tool support, context
// exceeded, any other 4xx) is not, and neither is a request cut by the
// attempt's own end (its wall time, an interruption of the run).
func Fault(ctx context.Context, err error) bool {
	if err == nil {
		return false
	}
	if ctx.Err() != nil {
		return errors.Is(context.Cause(ctx), agent.ErrRequestTimeout)
	}
	if errors.Is(err, agent.ErrModelNotFound) || errors.Is(err, agent.ErrNoToolSupport) || errors.Is(err, agent.ErrContextExceeded) {
		return false
	}
	var se api.StatusError
	var hs interface{ HTTPStatus() int }
	status := 0
	switch {
	case errors.As(err, &se):
		status = se.StatusCode
	case errors.As(err, &hs):
		status = hs.HTTPStatus()
	default:
		return true // no answer at all
	}
	return status >= 500 || status == 429 || status == 408
}
