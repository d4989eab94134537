//go:build !unix

package runner

import (
	"errors"
	"os"
)

// lockFile does nothing where flock is missing.
func lockFile(*os.File) error { return nil }

// tryLockFile always fails where flock is missing: no scratch folder is
// taken for a leftover.
func tryLockFile(*os.File) error { return errors.New("no file locks on this system") }
