package results

import (
	"context"
	"errors"
	"os"
	"testing"
)

func TestRunLockTellsAStaleRun(t *testing.T) {
	ctx := context.Background()
	s, path := openTemp(t)
	r := createRun(t, s) // status running
	stale := func() bool {
		stats, err := s.RunStats(ctx)
		if err != nil || len(stats) != 1 {
			t.Fatalf("RunStats = %+v, %v", stats, err)
		}
		return stats[0].Stale
	}
	if !stale() {
		t.Error("a running run with no lock is not stale")
	}
	lock, err := s.LockRun(r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if stale() {
		t.Error("a run whose lock is held is stale")
	}
	if _, err := s.LockRun(r.ID); !errors.Is(err, ErrRunHeld) {
		t.Errorf("second LockRun: %v, want ErrRunHeld", err)
	}
	ro, err := OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if stats, _ := ro.RunStats(ctx); len(stats) != 1 || stats[0].Stale {
		t.Errorf("through a read-only store: %+v", stats)
	}
	if err := lock.Release(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(runLockPath(path, r.ID)); !os.IsNotExist(err) {
		t.Errorf("the lock file is left after Release (%v)", err)
	}
	if !stale() {
		t.Error("released, yet not stale")
	}
}
