// Package flock takes advisory locks on files (flock(2)) for the caches
// that several bench processes share: an exclusive lock while a thing is
// made or removed, shared locks while it is used.
package flock

import (
	"context"
	"errors"
	"os"
	"syscall"
	"time"
)

// How a lock is taken.
const (
	Shared    = syscall.LOCK_SH
	Exclusive = syscall.LOCK_EX
)

// Lock takes a lock of kind how on the file at p (made if missing),
// waiting for it until ctx ends. Closing the file releases it.
func Lock(ctx context.Context, p string, how int) (*os.File, error) {
	f, err := os.OpenFile(p, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, err
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// TryLock takes an exclusive lock on the file at p if no one holds one;
// f is nil when someone does.
func TryLock(p string) (f *os.File, err error) {
	f, err = os.OpenFile(p, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, nil
		}
		return nil, err
	}
	return f, nil
}
