//go:build unix

package tasks

import (
	"io/fs"
	"os"
	"syscall"
)

// writeNew creates the file p (which must not exist) with data, with the
// system calls alone: an *os.File costs a registration with the poller
// that a regular file always refuses, and a finalizer, for each of the
// files an attempt's copies write.
func writeNew(p string, data []byte, perm fs.FileMode) error {
	var fd int
	var err error
	for {
		fd, err = syscall.Open(p, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_CLOEXEC, uint32(perm))
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return &os.PathError{Op: "open", Path: p, Err: err}
	}
	for len(data) > 0 {
		n, err := syscall.Write(fd, data)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			syscall.Close(fd)
			return &os.PathError{Op: "write", Path: p, Err: err}
		}
		data = data[n:]
	}
	if err := syscall.Close(fd); err != nil {
		return &os.PathError{Op: "close", Path: p, Err: err}
	}
	return nil
}
