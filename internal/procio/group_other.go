//go:build !unix

package procio

import (
	"errors"
	"os/exec"
	"syscall"
	"time"
)

// KillGroupOnCancel kills cmd when its context ends. This system has no
// process groups: the command's children are not killed with it. wait
// becomes cmd.WaitDelay.
func KillGroupOnCancel(cmd *exec.Cmd, wait time.Duration) {
	cmd.WaitDelay = wait
}

// SignalGroup kills cmd's process: this system has no process groups, and
// no signal but SIGKILL can be sent.
func SignalGroup(cmd *exec.Cmd, sig syscall.Signal) error {
	if cmd.Process == nil {
		return errors.New("signal process group: the command has not started")
	}
	if sig != syscall.SIGKILL {
		return errors.New("signal process group: only SIGKILL can be sent on this system")
	}
	return cmd.Process.Kill()
}
