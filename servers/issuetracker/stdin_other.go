//go:build !linux

package issuetracker

import (
	"io"
	"os"
)

// pollableStdin returns stdin, never closed: stdin is read through the
// poller on Linux only.
func pollableStdin() (io.ReadCloser, bool) { return io.NopCloser(os.Stdin), false }
