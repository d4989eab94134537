//go:build unix

package endpoint

import (
	"os"
	"syscall"
)

// signalServer sends a started server's process group SIGTERM, or
// SIGKILL when kill: the server and the runners it started.
func signalServer(p *os.Process, kill bool) {
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	_ = syscall.Kill(-p.Pid, sig)
}
