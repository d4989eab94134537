package agent

import (
	"context"
	"os/exec"
	"time"
)

// BuiltinOptions sets up the built-in tools. The zero value gives the
// defaults.
type BuiltinOptions struct {
	// Timeout is how long run_command lets a command run when the model
	// gives no timeout_seconds. Default: 60s.
	Timeout time.Duration
	// MaxTimeout is the most timeout_seconds may ask for. Default: 10 minutes,
	// and never less than Timeout.
	MaxTimeout time.Duration
	// OutputCap bounds the output run_command returns, in bytes; the start
	// and the end are kept. Default: 16 KiB.
	OutputCap int
	// Env names variables of the operator's environment passed on to
	// commands, beyond PATH and LANG; nothing else is passed.
	Env []string
	// Launch makes the process of every command (/bin/sh -c ...): the
	// attempt's sandbox, which also sets HOME. Nil runs commands as they
	// are, with HOME set to the workspace (tests only: it isolates
	// nothing).
	Launch Launcher
}

// Launcher makes the process that runs argv in dir with env as its
// environment, confined as its maker sees fit: a sandbox puts its launcher
// in front, picks the user and the namespaces, and sets HOME. Waiting for
// the command it returns must return only once every process the command
// started is gone.
type Launcher func(ctx context.Context, dir string, argv, env []string) (*exec.Cmd, error)

// The defaults of BuiltinOptions.
const (
	DefaultCommandTimeout    = 60 * time.Second
	DefaultMaxCommandTimeout = 10 * time.Minute
	DefaultCommandOutputCap  = 16 << 10
)

// BuiltinNames returns the names of the built-in tools, in Builtins' order.
func BuiltinNames() []string {
	var names []string
	for _, t := range Builtins(nil, BuiltinOptions{}) { // a Spec needs no workspace
		names = append(names, t.Spec().Name)
	}
	return names
}

// Builtins returns the harness's own tools working in ws, in a stable order:
// read_file, write_file, edit_file, list_dir, search, run_command. Every path
// they take goes through ws.Resolve.
func Builtins(ws *Workspace, opts BuiltinOptions) []Tool {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultCommandTimeout
	}
	if opts.MaxTimeout <= 0 {
		opts.MaxTimeout = DefaultMaxCommandTimeout
	}
	opts.Timeout = opts.Timeout.Round(time.Second)
	opts.MaxTimeout = max(opts.MaxTimeout.Round(time.Second), opts.Timeout, time.Second)
	opts.Timeout = max(opts.Timeout, time.Second)
	if opts.OutputCap <= 0 {
		opts.OutputCap = DefaultCommandOutputCap
	}
	ft := fileTool{ws: ws}
	return []Tool{
		readFileTool{ft},
		writeFileTool{ft},
		editFileTool{ft},
		listDirTool{ft, maxListEntries},
		searchTool{ft},
		runCommandTool{
			ws:         ws,
			timeout:    opts.Timeout,
			maxTimeout: opts.MaxTimeout,
			outputCap:  opts.OutputCap,
			envNames:   append([]string(nil), opts.Env...),
			launch:     opts.Launch,
		},
	}
}
