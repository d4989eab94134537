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
