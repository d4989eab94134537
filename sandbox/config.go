package sandbox

import (
	"fmt"
	"path/filepath"

	"github.com/benchhq/bench/tasks"
)

// Limits bounds what a sandboxed process tree may use. Zero fields take the
// defaults below. Time is bounded by whoever runs the command (run_command's
// timeout, the end of an attempt for a server, the hidden tests' timeout):
// the sandbox makes sure that nothing outlives it.
type Limits struct {
	// Procs is the most processes (and threads) the sandbox user may have
	// at once (RLIMIT_NPROC). Default 256.
	Procs int
	// Memory is the most address space one process may map, in bytes
	// (RLIMIT_AS). Default 4 GiB.
	Memory int64
	// FileSize is the largest file a process may write, in bytes
	// (RLIMIT_FSIZE). Default 1 GiB.
	FileSize int64
	// Tmp is the size of the private /tmp (and of /dev/shm), in bytes;
	// it is held in memory. Default 512 MiB.
	Tmp int64
}

// The defaults of Limits.
const (
	DefaultProcs    = 256
	DefaultMemory   = 4 << 30
	DefaultFileSize = 1 << 30
	DefaultTmp      = 512 << 20
)

// WithDefaults returns l with its zero fields set to the defaults.
func (l Limits) WithDefaults() Limits {
	if l.Procs <= 0 {
		l.Procs = DefaultProcs
	}
	if l.Memory <= 0 {
		l.Memory = DefaultMemory
	}
	if l.FileSize <= 0 {
		l.FileSize = DefaultFileSize
	}
	if l.Tmp <= 0 {
		l.Tmp = DefaultTmp
	}
	return l
}

// The sandbox modes of a run.
const (
	// Required isolates every command with bubblewrap and refuses to run
	// without it. It is the default.
	Required = "required"
	// Auto is the former default, kept so that older run files load: it
	// now means Required (bench no longer falls back to running commands
	// without isolation).
	Auto = "auto"
	// Off runs commands without isolation, on the host: each command still
	// gets a process namespace of its own (nothing it starts outlives it)
	// and, when bench runs as root, an unprivileged user per attempt; but
	// it sees the host's files. A run in this mode is marked unisolated.
	Off = "off"
)

// Config is the [sandbox] table of a run file:
//
//	[sandbox]
//	mode = "required"        # required (default) | off
//	procs = 256              # processes at once
//	memory_mb = 4096         # address space per process
//	file_size_mb = 1024      # largest file written
//	tmp_mb = 512             # private /tmp, in memory
//	read_only = ["/opt/jdk"] # more host paths shown read-only
//
// Zero values take the defaults.
type Config struct {
	Mode       string   `toml:"mode" json:"mode,omitempty"`
	Procs      int      `toml:"procs" json:"procs,omitempty"`
	MemoryMB   int64    `toml:"memory_mb" json:"memory_mb,omitempty"`
	FileSizeMB int64    `toml:"file_size_mb" json:"file_size_mb,omitempty"`
	TmpMB      int64    `toml:"tmp_mb" json:"tmp_mb,omitempty"`
	ReadOnly   []string `toml:"read_only" json:"read_only,omitempty"`
}

// Validate checks the table; errors name the file and the field.
func (c Config) Validate(file string) error {
	if err := ValidateMode(c.Mode); err != nil {
		return &tasks.FieldError{File: file, Field: "sandbox.mode", Msg: err.Error()}
	}
	for _, f := range []struct {
		name string
		v    int64
	}{{"procs", int64(c.Procs)}, {"memory_mb", c.MemoryMB}, {"file_size_mb", c.FileSizeMB}, {"tmp_mb", c.TmpMB}} {
		if f.v < 0 {
			return &tasks.FieldError{File: file, Field: "sandbox." + f.name, Msg: fmt.Sprintf("expected a positive number (or 0 for the default), got %d", f.v)}
		}
	}
	for i, p := range c.ReadOnly {
		if !filepath.IsAbs(p) {
			return &tasks.FieldError{File: file, Field: fmt.Sprintf("sandbox.read_only[%d]", i), Msg: fmt.Sprintf("expected an absolute path, got %q", p)}
		}
	}
	return nil
}

// ValidateMode checks a sandbox mode ("" is the default, Required).
func ValidateMode(mode string) error {
	switch mode {
	case "", Required, Auto, Off:
		return nil
	}
	return fmt.Errorf("expected %q or %q, got %q", Required, Off, mode)
}

// Spec is the configuration's part of a Spec: limits, read-only paths and
// the network (give it the arm's profile.Network()).
func (c Config) Spec(network bool) Spec {
	return Spec{
		Network: network,
		Limits: Limits{
			Procs:    c.Procs,
			Memory:   c.MemoryMB << 20,
			FileSize: c.FileSizeMB << 20,
			Tmp:      c.TmpMB << 20,
		},
		ReadOnly: append([]string(nil), c.ReadOnly...),
	}
}
