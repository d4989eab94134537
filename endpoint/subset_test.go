package endpoint_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/benchhq/bench/endpoint"
	"github.com/benchhq/bench/internal/ollamatest"
)

// TestSubsetRefuses: a view is of at least one endpoint, each the pool's
// own and given once: a view never makes an endpoint of its own.
func TestSubsetRefuses(t *testing.T) {
	a, b := endpoint.Of("a", nil, 1), endpoint.Of("b", nil, 1)
	p := newPool(t, a, b)
	for _, tt := range []struct {
		name string
		eps  []*endpoint.Endpoint
		want string
	}{
		{"none", nil, "a subset of no endpoint"},
		{"foreign", []*endpoint.Endpoint{endpoint.Of("c", nil, 1)}, "endpoint c: not one of the pool's"},
		{"same name, other endpoint", []*endpoint.Endpoint{endpoint.Of("a", nil, 1)}, "endpoint a: not one of the pool's"},
		{"nil", []*endpoint.Endpoint{nil}, "not one of the pool's"},
		{"twice", []*endpoint.Endpoint{a, a}, "endpoint a: given twice"},
	} {
		if _, err := p.Subset(tt.eps...); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want an error saying %q", tt.name, err, tt.want)
		}
	}
	v, err := p.Subset(b)
	if err != nil {
		t.Fatal(err)
	}
	// A view of a view looks into the same pool, and knows only its own
	// endpoints.
	if _, err := v.Subset(a); err != nil {
		t.Errorf("a view's view of another endpoint of the pool: %v", err)
	}
	if v.Named("a") != nil || v.Named("b") != b || len(v.Endpoints()) != 1 || v.Slots() != 1 {
		t.Errorf("view of b: named a %v, endpoints %d, slots %d", v.Named("a"), len(v.Endpoints()), v.Slots())
	}
}

// TestSubsetSharesSlots: a view hands out only its endpoints, and a slot
// taken through a view is taken for the pool and every other view: an
// attempt waiting on the pool gets it when the view's lease releases it.
func TestSubsetSharesSlots(t *testing.T) {
	a, b := endpoint.Of("a", nil, 1), endpoint.Of("b", nil, 2)
	p := newPool(t, a, b)
	onA, err := p.Subset(a)
	if err != nil {
		t.Fatal(err)
	}
	onA2, _ := p.Subset(a)
	for range 3 {
		l, err := onA.Acquire(context.Background())
		if err != nil || l.Endpoint() != "a" {
			t.Fatalf("lease of the view of a: %v, %v", l, err)
		}
		l.Release()
	}
	held, _ := onA.Acquire(context.Background())
	short := func() context.Context {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		t.Cleanup(cancel)
		return ctx
	}
	if _, err := onA2.Acquire(short()); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("another view of a got a's only slot too: %v", err)
	}
	if _, err := p.AcquireOn(short(), a); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the pool gave a's only slot again: %v", err)
	}
	// The pool itself, with a full, goes to b.
	if l, err := p.Acquire(context.Background()); err != nil || l.Endpoint() != "b" {
		t.Fatalf("pool lease with a full: %v, %v; want b", l, err)
	} else {
		l.Release()
	}
	got := make(chan string, 1)
	go func() {
		l, err := onA2.Acquire(context.Background())
		if err != nil {
			got <- err.Error()
			return
		}
		got <- l.Endpoint()
		l.Release()
	}()
	held.Release()
	select {
	case e := <-got:
		if e != "a" {
			t.Errorf("the waiting view got %q", e)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a slot released through one view did not wake the other")
	}
	onA.Close() // a view's Close leaves the pool be
	if l, err := p.Acquire(context.Background()); err != nil {
		t.Fatalf("the pool after a view's Close: %v", err)
	} else {
		l.Release()
	}
}

// TestSubsetSharesHealth: an endpoint that fails under a view's lease is
// out of service for the pool and every view; a view whose only endpoint
// is out still hands it out (as a pool whose every endpoint is out).
func TestSubsetSharesHealth(t *testing.T) {
	sa := ollamatest.New(ollamatest.Turns())
	sb := ollamatest.New(ollamatest.Turns())
	defer sa.Close()
	defer sb.Close()
	a, b := ollamaEndpoint(t, sa, 1), ollamaEndpoint(t, sb, 1)
	p := newPool(t, a, b)
	p.Cooldown = func(int) time.Duration { return time.Hour }
	onA, _ := p.Subset(a)
	sa.Stop()
	l, _ := onA.Acquire(context.Background())
	if err := hello(l.Model()); err == nil {
		t.Fatal("a request to a stopped server succeeded")
	}
	l.Release()
	if !l.Failed() || p.InService() != 1 || onA.InService() != 0 {
		t.Fatalf("failed %v, pool in service %d, view in service %d: want a out for both", l.Failed(), p.InService(), onA.InService())
	}
	for range 2 {
		l, _ := p.Acquire(context.Background())
		if l.Endpoint() != b.Name {
			t.Fatalf("pool lease on %s while a is out", l.Endpoint())
		}
		l.Release()
	}
	if l, _ := onA.Acquire(context.Background()); l.Endpoint() != a.Name {
		t.Fatalf("the view of a handed out %s", l.Endpoint())
	} else {
		l.Release()
	}
	if onA.First() != a {
		t.Error("the view's First is not its endpoint")
	}
}
