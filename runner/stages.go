package runner

import "context"

// stages bounds a run's attempts on both sides of the end of their agent
// loop: ahead of it (setting up, waiting for a model slot, in the loop,
// ending its processes) the plan's concurrency and as many spares as
// spareAttempts gives, so that a freed slot is taken at once; past it
// (their hidden tests run, stored) as many again. An attempt past its
// loop frees its place ahead, so that new attempts set up while the
// earlier ones are scored: with the two in one bound, hidden tests that
// take longer than the agent loop kept most model slots idle, however
// fast the model. A retry takes a place ahead again.
type stages struct {
	ahead chan struct{} // a token per attempt not past its loop yet
	past  chan struct{} // a token per attempt past it, until it is scored
}

// newStages returns the stages of a run at the plan's concurrency.
func newStages(concurrency int) *stages {
	n := concurrency + spareAttempts(concurrency)
	return &stages{ahead: make(chan struct{}, n), past: make(chan struct{}, n)}
}

// place is where one attempt is: what it holds of the stages.
type place struct {
	s           *stages
	ahead, past bool
}

// enter waits for a place ahead for a new attempt; it fails when ctx ends
// first.
func (s *stages) enter(ctx context.Context) (*place, error) {
	p := &place{s: s}
	if err := p.again(ctx); err != nil {
		return nil, err
	}
	return p, nil
}

// again takes a place ahead for the attempt (a new one, or another try of
// it), which holds none (it frees its place past first); it fails when
// ctx ends first.
func (p *place) again(ctx context.Context) error {
	p.scored()
	if p.ahead {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err // a free place is no reason to start after the end
	}
	select {
	case p.s.ahead <- struct{}{}:
		p.ahead = true
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// pass moves the attempt past its loop, its processes ended, to be
// scored: it waits for a place past (so that attempts waiting to be
// scored hold new ones back), then frees its place ahead. When ctx ends
// first it frees its place ahead all the same, without a place past:
// the attempt is stopping.
func (p *place) pass(ctx context.Context) {
	if !p.past {
		select {
		case p.s.past <- struct{}{}:
			p.past = true
		case <-ctx.Done():
		}
	}
	if p.ahead {
		<-p.s.ahead
		p.ahead = false
	}
}

// scored frees the attempt's place past its loop, if it holds one.
func (p *place) scored() {
	if p.past {
		<-p.s.past
		p.past = false
	}
}

// leave frees whatever places the attempt holds: it is scored and
// stored (or given up).
func (p *place) leave() {
	p.scored()
	if p.ahead {
		<-p.s.ahead
		p.ahead = false
	}
}
