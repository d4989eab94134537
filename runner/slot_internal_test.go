package runner

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benchhq/bench/endpoint"
)

// An attempt that gives its model slot back lets the attempt waiting for
// it run before it goes on (to its scoring): on one processor, the waiter
// has its slot by the time give returns. The scheduler is only asked to
// (runtime.Gosched: now and then it picks another goroutine first), so
// most rounds must see it, not all; without the yield none does.
func TestGiveLetsTheWaiterGoFirst(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	pool, err := endpoint.NewPool(endpoint.Of("fake", nil, 0))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	r := &Runner{pool: pool, looping: make(chan struct{}, 1)}
	ctx := context.Background()
	const rounds = 20
	first := 0
	for range rounds {
		held := &modelSlot{r: r}
		if _, err := held.take(ctx); err != nil {
			t.Fatal(err)
		}
		var took atomic.Bool
		waiting, done := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(done)
			next := &modelSlot{r: r}
			close(waiting)
			if _, err := next.take(ctx); err != nil {
				t.Error(err)
				return
			}
			took.Store(true)
			next.give()
		}()
		<-waiting
		time.Sleep(time.Millisecond) // the waiter blocks in take
		held.give()
		if took.Load() {
			first++
		}
		<-done
	}
	if first < rounds*3/4 {
		t.Fatalf("the attempt waiting for the slot ran before give returned in %d of %d rounds, want most", first, rounds)
	}
}
