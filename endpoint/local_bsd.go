//go:build unix && !linux

package endpoint

import "syscall"

// serveAttr starts the server in a process group of its own: a Ctrl-C at
// the terminal reaches bench, which stops it in order.
func serveAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
