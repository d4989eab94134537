package results

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// ErrRunHeld is matched (errors.Is) by the error LockRun returns for a run
// that another process is running.
var ErrRunHeld = errors.New("run held by another process")

// RunLock is held by the process that runs a run, for as long as it runs
// it: a run whose status is running while no process holds its lock was
// left by a bench that was killed (stale). The lock is a file beside the
// database, "<db>-run-<id>.lock", locked with flock, which the kernel
// releases when the process dies however it dies; it holds the pid and
// host of the holder.
type RunLock struct {
	path string
	file *os.File
}

// runLockPath is the lock file of a run of the database at dbPath.
func runLockPath(dbPath, runID string) string { return dbPath + "-run-" + runID + ".lock" }

// LockRun takes the lock of a run, for a process about to run it. A run
// that another process holds is an error matching ErrRunHeld, naming its
// pid and host.
func (s *Store) LockRun(runID string) (*RunLock, error) {
	if s.readOnly {
		return nil, fmt.Errorf("lock run %q: %s is opened read-only", runID, s.path)
	}
	path := runLockPath(s.path, runID)
	f, err := lockExclusive(path)
	if errors.Is(err, ErrRunHeld) {
		holder := "another process"
		if b, rerr := os.ReadFile(path); rerr == nil && strings.TrimSpace(string(b)) != "" {
			holder = strings.TrimSpace(string(b))
		}
		return nil, fmt.Errorf("run %s is being run by %s (lock %s): %w", runID, holder, path, err)
	}
	if err != nil {
		return nil, fmt.Errorf("lock run %q: %w", runID, err)
	}
	host, _ := os.Hostname()
	_ = f.Truncate(0)
	_, _ = fmt.Fprintf(f, "pid %d on %s\n", os.Getpid(), host)
	return &RunLock{path: path, file: f}, nil
}

// Release removes the lock file and gives the lock up.
func (l *RunLock) Release() error {
	if l == nil || l.file == nil {
		return nil
	}
	err := os.Remove(l.path)
	if cerr := l.file.Close(); err == nil {
		err = cerr
	}
	l.file = nil
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("release the lock of %s: %w", l.path, err)
	}
	return nil
}

// runHeld reports whether a process holds the lock of a run. It only
// reads: a run without a lock file is held by no one.
func (s *Store) runHeld(runID string) bool { return lockHeld(runLockPath(s.path, runID)) }
