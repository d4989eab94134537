package flock

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

func TestLocks(t *testing.T) {
	p := filepath.Join(t.TempDir(), "k.lock")
	ctx := context.Background()
	a, err := Lock(ctx, p, Shared)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Lock(ctx, p, Shared)
	if err != nil {
		t.Fatal("two shared locks:", err)
	}
	if f, err := TryLock(p); f != nil || err != nil {
		t.Fatalf("an exclusive lock beside shared ones: %v %v", f, err)
	}
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := Lock(short, p, Exclusive); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("waited exclusive: %v", err)
	}
	a.Close()
	b.Close()
	f, err := TryLock(p)
	if f == nil || err != nil {
		t.Fatalf("free lock: %v %v", f, err)
	}
	f.Close()
}
