//go:build unix

package runner

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive lock on f, waiting for it.
func lockFile(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_EX) }

// tryLockFile takes an exclusive lock on f, or fails at once if another
// holds it.
func tryLockFile(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}
