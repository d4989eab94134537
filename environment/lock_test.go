package environment

import (
	"context"
	"os"
	"syscall"
	"testing"
)

// TestLockInAFolderBenchCannotWrite: a shared lock in a cache folder that
// bench may only read is no lock (nothing can prepare or clear there); an
// exclusive one is an error that names the lock file.
func TestLockInAFolderBenchCannotWrite(t *testing.T) {
	const path = "/sys/bench-test.lock" // sysfs: no process may create files there
	if _, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644); err == nil {
		t.Skip("/sys takes new files here")
	}
	f, err := lockWait(context.Background(), path, syscall.LOCK_SH)
	if f != nil || err != nil {
		t.Errorf("shared lock: %v, %v; want no lock and no error", f, err)
	}
	if _, err := lockWait(context.Background(), path, syscall.LOCK_EX); err == nil {
		t.Error("exclusive lock: no error")
	}
}
