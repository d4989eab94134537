//go:build !linux

package sandbox

import (
	"context"
	"errors"
	"os/exec"
)

// New reports that no sandbox can be made: bubblewrap and process
// namespaces need Linux.
func New(context.Context, string) (*Sandbox, error) {
	return nil, errors.New("sandbox: bench runs commands on Linux only (bubblewrap and process namespaces)")
}

func (s *Sandbox) directCommand(context.Context, Spec, []string) (*exec.Cmd, error) {
	return nil, errors.New("sandbox: needs Linux")
}

// KillAll does nothing outside Linux, where no sandbox is ever made.
func (s *Sandbox) KillAll(context.Context, User) error { return nil }

func chownTree(string, int) error { return errors.New("sandbox: needs Linux") }

func hardenFilter() []byte { return nil }

func setLimits(int, Limits) error { return errors.New("sandbox: needs Linux") }

// CheckLimits accepts any limits outside Linux, where no sandbox is made.
func (s *Sandbox) CheckLimits(Limits) error { return nil }

// limitArgv is argv outside Linux, where no sandbox is ever made.
func (s *Sandbox) limitArgv(_ Limits, argv []string) []string { return argv }
