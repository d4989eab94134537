package runner

import (
	"context"
	"testing"
	"time"
)

// blocked reports whether f is still waiting after a moment, and then
// waits for it to return.
func blocked(f func()) (wasBlocked bool, wait func()) {
	done := make(chan struct{})
	go func() { f(); close(done) }()
	select {
	case <-done:
		return false, func() {}
	case <-time.After(50 * time.Millisecond):
		return true, func() { <-done }
	}
}

// The stages of a run at concurrency 2 (three places on each side): a
// new attempt waits for a place ahead; an attempt past its loop frees its
// place ahead only once it has a place past, and one scored frees that.
func TestStages(t *testing.T) {
	ctx := context.Background()
	s := newStages(2)
	var ps []*place
	for range 3 {
		p, err := s.enter(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	var fourth *place
	if b, wait := blocked(func() { fourth, _ = s.enter(ctx) }); !b {
		t.Fatal("a fourth attempt entered with three places ahead taken")
	} else {
		ps[0].pass(ctx) // past its loop: its place ahead goes to the fourth
		wait()
	}
	for _, p := range ps[1:] {
		p.pass(ctx)
	}
	// Three past their loop, none scored: the fourth waits for a place
	// past, and holds its place ahead meanwhile.
	b, wait := blocked(func() { fourth.pass(ctx) })
	if !b {
		t.Fatal("a fourth attempt passed its loop with three places past taken")
	}
	if got := len(s.ahead); got != 1 {
		t.Errorf("places ahead taken while the fourth waits: %d, want 1", got)
	}
	ps[0].scored()
	wait()
	if len(s.ahead) != 0 || len(s.past) != 3 {
		t.Errorf("ahead %d, past %d; want 0 and 3", len(s.ahead), len(s.past))
	}
	// A retry passes its loop again, with a place past of its own.
	ps[1].scored()
	ps[0].pass(ctx)
	if !ps[0].past || ps[0].ahead {
		t.Errorf("a retry past its loop: holds ahead %v, past %v; want past only", ps[0].ahead, ps[0].past)
	}
	for _, p := range append(ps, fourth) {
		p.leave()
		p.leave() // twice: nothing more to free
	}
	if len(s.ahead) != 0 || len(s.past) != 0 {
		t.Errorf("after every attempt left: ahead %d, past %d; want 0 and 0", len(s.ahead), len(s.past))
	}
}

// An attempt stopping (ctx ended) while it waits for a place past frees
// its place ahead without one; a new attempt does not enter.
func TestStagesStopping(t *testing.T) {
	s := newStages(1) // two places on each side
	ctx, cancel := context.WithCancel(context.Background())
	var ps []*place
	for range 3 {
		p, err := s.enter(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) < 2 {
			p.pass(ctx)
		}
		ps = append(ps, p)
	}
	b, wait := blocked(func() { ps[2].pass(ctx) })
	if !b {
		t.Fatal("passed with every place past taken")
	}
	cancel()
	wait()
	if ps[2].past || ps[2].ahead {
		t.Errorf("stopping: holds ahead %v, past %v; want neither", ps[2].ahead, ps[2].past)
	}
	if _, err := s.enter(ctx); err == nil {
		t.Error("a new attempt entered after the run stopped")
	}
}

// A retry frees its place past, then waits for a place ahead like a new
// attempt: retries never run beyond the bound, and one waiting holds
// nothing that the attempts ahead of it wait for.
func TestStagesRetry(t *testing.T) {
	ctx := context.Background()
	s := newStages(1) // two places on each side
	a, _ := s.enter(ctx)
	a.pass(ctx) // scored once, to be retried
	b, _ := s.enter(ctx)
	c, _ := s.enter(ctx)
	c.pass(ctx) // past: both places past taken (a, c); ahead: b
	d, _ := s.enter(ctx)
	// Ahead: b and d. The retry of a waits for a place ahead, and has
	// freed its place past meanwhile.
	wasBlocked, wait := blocked(func() {
		if err := a.again(ctx); err != nil {
			t.Error(err)
		}
	})
	if !wasBlocked {
		t.Fatal("a retry took a place ahead beyond the bound")
	}
	for deadline := time.Now().Add(10 * time.Second); len(s.past) != 1; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waiting to retry: places past taken %d, want 1 (the retry's freed)", len(s.past))
		}
	}
	b.pass(ctx) // takes the place past a freed, frees b's place ahead for a
	wait()
	if !a.ahead || a.past {
		t.Errorf("retrying: holds ahead %v, past %v; want ahead only", a.ahead, a.past)
	}
	// A try that ended before its loop's end still holds its place ahead.
	if err := d.again(ctx); err != nil || !d.ahead || len(s.ahead) != 2 {
		t.Errorf("again with a place ahead: %v, holds %v, taken %d; want nil, true, 2", err, d.ahead, len(s.ahead))
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := b.again(cctx); err == nil || b.ahead || b.past {
		t.Errorf("a retry after the run stopped: %v, holds ahead %v, past %v; want an error and no place", err, b.ahead, b.past)
	}
	for _, p := range []*place{a, b, c, d} {
		p.leave()
	}
	if len(s.ahead) != 0 || len(s.past) != 0 {
		t.Errorf("after every attempt left: ahead %d, past %d; want 0 and 0", len(s.ahead), len(s.past))
	}
}
