//go:build linux

package mcp

import (
	"io"
	"os"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// rawPipe reads or writes our end of a server's pipe with raw system
// calls, waiting for the pipe through Go's poller as os.File does. An
// os.File's Read and Write enter the scheduler's syscall state, and the
// first system call after all of Go's processors were idle (as they are
// while a server works on an answer) wakes the runtime's monitor thread,
// which then polls every 20 µs until the process is idle again: on the
// 2-core development machine that was half the client's CPU per tool
// call. A read or write of a non-blocking pipe never blocks, so it needs
// none of that.
type rawPipe struct {
	f      *os.File
	rc     syscall.RawConn
	noWait atomic.Bool // Read returns errWouldBlock instead of waiting
}

// setWait says whether Read waits for the pipe (the default) or returns
// errWouldBlock when it is empty.
func (p *rawPipe) setWait(wait bool) { p.noWait.Store(!wait) }

// newPipeIO returns f's reads and writes through raw system calls when f
// is a non-blocking pipe registered with the poller (as os.Pipe makes
// them), f itself otherwise.
func newPipeIO(f *os.File) io.ReadWriteCloser {
	rc, err := f.SyscallConn()
	if err != nil {
		return f
	}
	nonblocking := false
	if err := rc.Control(func(fd uintptr) {
		flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
		nonblocking = errno == 0 && flags&syscall.O_NONBLOCK != 0
	}); err != nil || !nonblocking {
		return f
	}
	return &rawPipe{f: f, rc: rc}
}

// Read implements io.Reader: at least one byte, io.EOF at the end, or the
// error of a pipe closed meanwhile.
func (p *rawPipe) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	var n int
	var errno syscall.Errno
	err := p.rc.Read(func(fd uintptr) bool {
		for {
			r, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
			switch e {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				if p.noWait.Load() {
					errno = syscall.EAGAIN
					return true
				}
				return false // wait for the poller
			}
			n, errno = int(r), e
			return true
		}
	})
	switch {
	case err != nil:
		return 0, &os.PathError{Op: "read", Path: p.f.Name(), Err: err}
	case errno == syscall.EAGAIN:
		return 0, errWouldBlock
	case errno != 0:
		return 0, &os.PathError{Op: "read", Path: p.f.Name(), Err: errno}
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// Write implements io.Writer: all of b, or an error.
func (p *rawPipe) Write(b []byte) (int, error) {
	done := 0
	var errno syscall.Errno
	err := p.rc.Write(func(fd uintptr) bool {
		for done < len(b) {
			r, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&b[done])), uintptr(len(b)-done))
			switch e {
			case 0:
				done += int(r)
			case syscall.EINTR:
			case syscall.EAGAIN:
				return false // the pipe is full: wait for the poller
			default:
				errno = e
				return true
			}
		}
		return true
	})
	if err == nil && errno != 0 {
		err = errno
	}
	if err != nil {
		return done, &os.PathError{Op: "write", Path: p.f.Name(), Err: err}
	}
	return done, nil
}

// Close closes the pipe.
func (p *rawPipe) Close() error { return p.f.Close() }
