package endpoint

import "syscall"

// serveAttr starts the server in a process group of its own (a Ctrl-C
// at the terminal reaches bench, which stops it in order, not the server
// mid-answer) and has it sent SIGTERM if bench dies without stopping it
// (SIGKILL, a second Ctrl-C).
func serveAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
