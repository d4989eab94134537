//go:build !linux

package issuetracker

import (
	"io"
	"os"
)

// pollableStdin returns stdin, never closed: reopening it as a pipe of
// the process's own needs Linux's /proc/self/fd.
func pollableStdin() (io.ReadCloser, bool) { return io.NopCloser(os.Stdin), false }
