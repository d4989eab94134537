//go:build !linux

package mcp

import (
	"io"
	"os"
)

// newPipeIO returns f: raw system calls are used on Linux only.
func newPipeIO(f *os.File) io.ReadWriteCloser { return f }
