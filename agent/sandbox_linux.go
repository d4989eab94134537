package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/benchhq/bench/internal/procio"
)

// sandboxProbeTimeout bounds the trial run of DetectSandbox.
const sandboxProbeTimeout = 30 * time.Second

// DetectSandbox finds bubblewrap (bwrap) and the util-linux tools it is
// used with (prlimit, and setpriv when bench runs as root), and checks with
// a trial run that a sandbox can be made here. The error says what is
// missing or what failed (bwrap's own message, for example when user
// namespaces are disabled): the caller should then warn that commands run
// in the confined mode only (the workspace folder as the working folder,
// a filtered environment, no isolation).
func DetectSandbox(ctx context.Context) (*Sandbox, error) {
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		return nil, errors.New("sandbox: bubblewrap is not installed (no bwrap in PATH; on Debian or Ubuntu: apt-get install bubblewrap)")
	}
	s := &Sandbox{bwrap: bwrap, root: os.Geteuid() == 0}
	if s.prlimit, err = findSystemTool("prlimit"); err != nil {
		return nil, err
	}
	if s.root {
		if s.setpriv, err = findSystemTool("setpriv"); err != nil {
			return nil, err
		}
	}
	out, err := exec.CommandContext(ctx, bwrap, "--version").Output()
	if err != nil {
		return nil, fmt.Errorf("sandbox: %s --version: %w", bwrap, err)
	}
	s.version = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(out)), "bubblewrap"))
	if err := s.probe(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// findSystemTool finds a util-linux tool that runs inside the sandbox, so
// must be in the system folders it shows.
func findSystemTool(name string) (string, error) {
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("sandbox: %s (from util-linux) is not installed; the sandbox needs it for its limits", name)
	}
	if p, err = filepath.Abs(p); err != nil || !underSystem(p) {
		return "", fmt.Errorf("sandbox: %s is at %s, outside the system folders the sandbox shows (%s)", name, p, strings.Join(systemPaths, " "))
	}
	return p, nil
}

// probe makes a sandbox on a scratch workspace and writes a file in it.
func (s *Sandbox) probe(ctx context.Context) error {
	dir, err := os.MkdirTemp("", "bench-sandbox-probe-")
	if err != nil {
		return fmt.Errorf("sandbox: trial run: %w", err)
	}
	defer os.RemoveAll(dir)
	argv, err := s.Wrap(dir, Confinement{}, []string{"/bin/sh", "-c", "echo ok > probe && cat probe"})
	if err != nil {
		return fmt.Errorf("sandbox: trial run: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, sandboxProbeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + defaultPath}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	procio.KillGroupOnCancel(cmd, time.Second)
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return fmt.Errorf("sandbox: bubblewrap cannot make a sandbox here: %s", firstLines(msg, 4))
	}
	if strings.TrimSpace(stdout.String()) != "ok" {
		return fmt.Errorf("sandbox: trial run: the sandboxed command could not write its workspace (output %q, errors %q)",
			firstLines(stdout.String(), 2), firstLines(stderr.String(), 2))
	}
	if _, err := os.Stat(filepath.Join(dir, "probe")); err != nil {
		return fmt.Errorf("sandbox: trial run: the file written in the sandbox is not in the workspace: %w", err)
	}
	return nil
}

// fileOwner is the user id owning a file.
func fileOwner(fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}
