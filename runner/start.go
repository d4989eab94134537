package runner

import (
	"context"
	"fmt"

	"github.com/benchhq/bench/overhead"
	"github.com/benchhq/bench/results"
)

// measurement is the tool-overhead measurement of a run's start: one
// report per arm, or why it failed (the model check failed with it).
type measurement struct {
	reps []*overhead.Report
	err  error
}

// runStart is the storing of a run's start, once its tool overhead is
// measured: the run created (unless it is continued) and the overhead
// saved. The attempts that ran meanwhile are saved only after it, and
// thrown away when it fails.
type runStart struct {
	done   chan struct{}
	err    error // why the run did not start; set before done is closed
	stored bool  // the run is in the store all the same (its overhead is not): it is to be resumed
}

// wait waits for the start to be stored and returns why it was not.
func (s *runStart) wait() error {
	<-s.done
	return s.err
}

// storeStart stores the run's start when the measurement arrives on
// measuring: it creates run (when create) and saves its overhead. A
// failure stops the run (stop) before wait returns it.
func (r *Runner) storeStart(ctx context.Context, run *results.Run, create bool, measuring <-chan measurement, stop func()) *runStart {
	s := &runStart{done: make(chan struct{})}
	go func() {
		defer close(s.done)
		m := <-measuring
		if m.err != nil {
			s.err = fmt.Errorf("%w: %w", ErrPreflight, m.err) // the run was stopped already
			return
		}
		if create {
			if err := r.Store.CreateRun(ctx, run); err != nil {
				s.err = fmt.Errorf("create run %s: %w", run.ID, err)
				stop()
				return
			}
		}
		if err := r.saveOverhead(ctx, run.ID, m.reps); err != nil {
			// The run exists now, without its attempts, which are thrown
			// away: it is stored as interrupted, to be resumed.
			s.err, s.stored = err, true
			stop()
			_ = r.Store.FinishRun(context.WithoutCancel(ctx), run.ID, results.RunInterrupted)
		}
	}()
	return s
}
