//go:build linux

package issuetracker

import (
	"io"
	"os"
	"syscall"
)

// pollableStdin returns stdin reopened as a non-blocking pipe that Go's
// poller waits for, when stdin is a pipe, and reports whether it is;
// otherwise stdin as it is, never closed. Reopening /proc/self/fd/0 makes
// a file description of the process's own: its O_NONBLOCK flag is not
// seen by whoever else holds the pipe.
func pollableStdin() (io.ReadCloser, bool) {
	var st syscall.Stat_t
	if err := syscall.Fstat(0, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFIFO {
		return io.NopCloser(os.Stdin), false
	}
	f, err := os.OpenFile("/proc/self/fd/0", os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return io.NopCloser(os.Stdin), false
	}
	return f, true
}
