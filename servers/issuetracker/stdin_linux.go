//go:build linux

package issuetracker

import (
	"io"
	"os"
	"sync"
	"syscall"
)

// pollableStdin returns stdin made non-blocking and waited for by Go's
// poller, when stdin is a pipe, and reports whether it is; otherwise
// stdin as it is, never closed. The server is the pipe's one reader while
// it serves (its client holds the other end); closing it makes the pipe
// blocking again, for whoever reads it after (a shell that did not exec
// the server). (Reopening /proc/self/fd/0 instead would keep the flag to
// itself, but a sandboxed server, which runs as a user of its own, may
// not open a pipe that bench made.)
func pollableStdin() (io.ReadCloser, bool) {
	var st syscall.Stat_t
	if err := syscall.Fstat(0, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFIFO {
		return io.NopCloser(os.Stdin), false
	}
	if err := syscall.SetNonblock(0, true); err != nil {
		return io.NopCloser(os.Stdin), false
	}
	return &nonblockingStdin{File: os.NewFile(0, "/dev/stdin")}, true
}

// nonblockingStdin is stdin while the server reads it through the poller.
type nonblockingStdin struct {
	*os.File
	once sync.Once
}

// Close ends a waiting Read, makes the pipe blocking again and closes it,
// once: the SDK closes it when the connection ends, and ServeStdio again
// after (fd 0, closed, may by then be another file's).
func (s *nonblockingStdin) Close() error {
	err := os.ErrClosed
	s.once.Do(func() {
		_ = syscall.SetNonblock(0, false)
		err = s.File.Close()
	})
	return err
}
