//go:build !unix

package endpoint

import (
	"os"
	"syscall"
)

func serveAttr() *syscall.SysProcAttr { return nil }

// signalServer ends a started server: this platform has no SIGTERM.
func signalServer(p *os.Process, _ bool) { _ = p.Kill() }
