//go:build unix

package procio

import (
	"errors"
	"os/exec"
	"syscall"
	"time"
)

// KillGroupOnCancel makes cmd, made with exec.CommandContext, start in a
// process group of its own, and kill the whole group (the command and
// everything it started) with SIGKILL when its context ends. wait becomes
// cmd.WaitDelay: how long Wait still waits, once the command is gone, for
// a process that escaped the group and holds its output open.
//
// Call it before cmd.Start.
func KillGroupOnCancel(cmd *exec.Cmd, wait time.Duration) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.Cancel = func() error { return SignalGroup(cmd, syscall.SIGKILL) }
	cmd.WaitDelay = wait
}

// SignalGroup sends sig to the process group of cmd, started after
// KillGroupOnCancel. The error is syscall.ESRCH when the group is gone.
func SignalGroup(cmd *exec.Cmd, sig syscall.Signal) error {
	if cmd.Process == nil {
		return errors.New("signal process group: the command has not started")
	}
	return syscall.Kill(-cmd.Process.Pid, sig)
}
