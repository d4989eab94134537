package runner

import (
	"context"
	"fmt"

	"github.com/benchhq/bench/results"
)

// saver stores finished attempts off the attempts' slots: an attempt hands
// its result over and its slot goes to the next attempt at once, instead
// of waiting for its turn at the database (one writer at a time) while the
// model has a slot free. Attempts that finish together are stored
// together, in one transaction.
type saver struct {
	store *results.Store
	queue chan *results.Attempt
	done  chan struct{}
	// stored is called for each attempt stored, from the saver's goroutine.
	stored func(*results.Attempt)
	// stop is called once, with the first error.
	stop func()
	err  error
}

// maxBatch bounds the attempts stored in one transaction.
const maxBatch = 64

func newSaver(ctx context.Context, store *results.Store, slots int, stored func(*results.Attempt), stop func()) *saver {
	s := &saver{store: store, queue: make(chan *results.Attempt, slots), done: make(chan struct{}), stored: stored, stop: stop}
	go s.loop(context.WithoutCancel(ctx))
	return s
}

// save hands an attempt over to be stored.
func (s *saver) save(a *results.Attempt) { s.queue <- a }

// close waits for every attempt handed over to be stored, and returns the
// first error. No save may follow.
func (s *saver) close() error {
	close(s.queue)
	<-s.done
	return s.err
}

func (s *saver) loop(ctx context.Context) {
	defer close(s.done)
	for a := range s.queue {
		batch := []*results.Attempt{a}
	more:
		for len(batch) < maxBatch {
			select {
			case b, ok := <-s.queue:
				if !ok {
					break more
				}
				batch = append(batch, b)
			default:
				break more
			}
		}
		if s.err != nil {
			continue // after a failure, nothing more is stored: the run stops
		}
		if err := s.write(ctx, batch); err != nil {
			s.err = fmt.Errorf("%w%s", err, storageHint(err))
			s.stop()
		}
	}
}

// write stores a batch in one transaction; when that fails, one by one, so
// that one attempt the store refuses loses no other.
func (s *saver) write(ctx context.Context, batch []*results.Attempt) error {
	if _, err := s.store.SaveAttempts(ctx, batch); err == nil || len(batch) == 1 {
		if err == nil {
			for _, a := range batch {
				s.stored(a)
			}
		}
		return err
	}
	for _, a := range batch {
		if _, err := s.store.SaveAttempt(ctx, a); err != nil {
			return err
		}
		s.stored(a)
	}
	return nil
}
