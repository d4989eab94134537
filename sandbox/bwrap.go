package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
)

// systemPaths are shown read-only in every sandbox (links are recreated as
// links).
var systemPaths = []string{"/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}

// mountPoint reports whether p is a folder the sandbox makes itself.
func mountPoint(p string) bool {
	switch p {
	case "/tmp", "/proc", "/dev", "/dev/shm", "/home", HomePath:
		return true
	}
	return false
}

// underSystem reports whether p is at or below a system path.
func underSystem(p string) bool {
	for _, s := range systemPaths {
		if within(p, s) {
			return true
		}
	}
	return false
}

// within reports whether p is dir or below it.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

// bwrapCommand is the command that runs argv under spec in bubblewrap,
// killed when ctx ends by killing the sandbox's first process, whose host
// pid bwrap reports on --json-status-fd: the kernel then ends the whole
// namespace, and bwrap, which waits for that process, returns only once it
// has.
//
// Its limits are set by bench itself (setLimits) on that first process,
// which bwrap holds back (--block-fd) until they are, rather than by a
// prlimit(1) exec: the process never runs without them. Its ctx must end
// if it is never started (its status reader waits until then).
func (s *Sandbox) bwrapCommand(ctx context.Context, spec Spec, argv []string) (*exec.Cmd, error) {
	limits := spec.Limits.WithDefaults()
	a, err := s.bwrapPrefix(spec)
	if err != nil {
		return nil, err
	}
	a = append(a, argv...)
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("sandbox: status pipe: %w", err)
	}
	// fd 3 in bwrap; written before the command runs, and at its end.
	a = append([]string{a[0], "--json-status-fd", "3"}, a[1:]...)
	files := []*os.File{w}
	if spec.Harden {
		filter := hardenFilter()
		if filter == nil {
			r.Close()
			w.Close()
			return nil, fmt.Errorf("sandbox: no seccomp filter for %s: the hidden tests cannot be kept out of their runner's memory here", runtime.GOARCH)
		}
		// fd 4: the filter, whole in a pipe (far below its buffer).
		fr, fw, err := os.Pipe()
		if err != nil {
			r.Close()
			w.Close()
			return nil, fmt.Errorf("sandbox: seccomp pipe: %w", err)
		}
		_, err = fw.Write(filter)
		fw.Close()
		if err != nil {
			fr.Close()
			r.Close()
			w.Close()
			return nil, fmt.Errorf("sandbox: seccomp pipe: %w", err)
		}
		context.AfterFunc(ctx, func() { fr.Close() })
		files = append(files, fr)
		a = append([]string{a[0], "--seccomp", "4"}, a[1:]...)
	}
	// The block: the sandbox's first process reads it before it runs
	// argv, and goes on at a byte or at the end of the pipe.
	br, bw, err := os.Pipe()
	if err != nil {
		for _, f := range files {
			f.Close()
		}
		r.Close()
		return nil, fmt.Errorf("sandbox: block pipe: %w", err)
	}
	files = append(files, br)
	a = append([]string{a[0], "--block-fd", strconv.Itoa(2 + len(files))}, a[1:]...)
	a = s.asRootPrefix(spec, a)
	cmd := exec.CommandContext(ctx, a[0], a[1:]...)
	cmd.ExtraFiles = files
	var child atomic.Int64
	// Our write end of the status pipe, and our read end of the block, go
	// once bwrap has reported its child (it keeps its own), or when ctx
	// ends; the status is drained until bwrap is gone (every write end
	// closed), for a write to a closed pipe would kill it.
	stop := context.AfterFunc(ctx, func() { w.Close() })
	go func() {
		defer stop()
		defer r.Close()
		// The block's write end goes at the byte, once the limits are
		// set, or once the child is dead; else only when bwrap is gone.
		// The end of the pipe would let a waiting child run without its
		// limits, and a child held on the block has no parent-death
		// signal yet (bwrap sets it just before the exec). But bwrap
		// reports the child's pid before it lets the child start: gone
		// without reporting it, bwrap leaves a child that never starts.
		free := false
		var st struct {
			ChildPID int64 `json:"child-pid"`
		}
		dec := json.NewDecoder(r)
		if err := dec.Decode(&st); err == nil && st.ChildPID > 0 {
			pid := int(st.ChildPID)
			child.Store(st.ChildPID)
			set := s.limit
			if set == nil {
				set = setLimits
			}
			if s.root && spec.AsRoot {
				set = limitedAlready // by asRootPrefix
			}
			if set(pid, limits) == nil {
				_, err := bw.Write([]byte{0})
				free = err == nil
			} else if err := syscall.Kill(pid, syscall.SIGKILL); err == nil || errors.Is(err, syscall.ESRCH) {
				free = true
			}
		}
		if free {
			bw.Close()
		}
		br.Close()
		w.Close()
		io.Copy(io.Discard, dec.Buffered()) //nolint:errcheck // what bwrap wrote with it
		io.Copy(io.Discard, r)              //nolint:errcheck // until bwrap is gone
		if !free {
			bw.Close()
		}
	}()
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.Cancel = func() error {
		if pid := child.Load(); pid > 0 {
			return syscall.Kill(int(pid), syscall.SIGKILL)
		}
		// Not started yet: bwrap's own death takes its child along
		// (--die-with-parent, and --pdeathsig for the dropped user).
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	cmd.WaitDelay = killWait
	return cmd, nil
}

// bwrapArgv is the bubblewrap command line that runs argv under spec
// (already prepared: absolute paths, a user when root), its limits set by
// prlimit(1): for callers that start the process themselves (Wrap).
func (s *Sandbox) bwrapArgv(spec Spec, argv []string) ([]string, error) {
	if spec.Root != "" {
		return nil, fmt.Errorf("sandbox: a process started by its caller cannot have a root file system of its own (%s)", spec.Root)
	}
	a, err := s.bwrapPrefix(spec)
	if err != nil {
		return nil, err
	}
	return append(a, s.limitArgv(spec.Limits.WithDefaults(), argv)...), nil
}

// bwrapPrefix is the bubblewrap command line of spec up to its command:
// the command's argv follows it.
//
// The command is the first process of its PID namespace (--as-pid-1):
// when it exits, the kernel kills every other process of the namespace and
// bwrap, which waits for it, returns only then; so a command is over only
// when all it started is gone.
func (s *Sandbox) bwrapPrefix(spec Spec) ([]string, error) {
	l := spec.Limits.WithDefaults()
	a := []string{s.bwrap,
		"--die-with-parent", "--new-session",
		"--unshare-pid", "--as-pid-1", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
		"--hostname", "sandbox",
	}
	if !s.root || spec.AsRoot {
		a = append(a, "--unshare-user", "--disable-userns")
	}
	if spec.AsRoot {
		a = append(a, "--uid", "0", "--gid", "0")
	}
	if !spec.Network {
		a = append(a, "--unshare-net")
	}
	// The system, read-only. On merged-/usr systems /bin, /lib... are links.
	// With a root file system of its own, that instead.
	sys := systemPaths
	if spec.Root != "" {
		a = append(a, s.rootArgs(spec)...)
		sys = nil
	}
	for _, p := range sys {
		fi, err := os.Lstat(p)
		switch {
		case err != nil:
			continue
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				continue
			}
			a = append(a, "--symlink", target, p)
		case fi.IsDir():
			a = append(a, "--ro-bind", p, p)
		}
	}
	tmp := strconv.FormatInt(l.Tmp, 10)
	a = append(a, "--proc", "/proc")
	if spec.Harden {
		a = append(a, "--remount-ro", "/proc")
	}
	a = append(a,
		"--dev", "/dev",
		"--perms", "1777", "--size", tmp, "--tmpfs", "/dev/shm",
		"--perms", "1777", "--size", tmp, "--tmpfs", "/tmp",
	)
	if spec.Network {
		// resolv.conf often links there.
		a = append(a, "--ro-bind-try", "/run/systemd/resolve", "/run/systemd/resolve")
	}
	made := map[string]bool{}
	mkParents := func(p string) {
		var chain []string
		for d := filepath.Dir(p); d != "/" && d != "." && !mountPoint(d); d = filepath.Dir(d) {
			chain = append(chain, d)
		}
		for i := len(chain) - 1; i >= 0; i-- {
			if d := chain[i]; !made[d] && !underSystem(d) {
				made[d] = true
				a = append(a, "--perms", "0755", "--dir", d)
			}
		}
	}
	// Read-only paths; those inside a hidden folder (a task's data/ for
	// its servers) are exceptions, bound after the folder is covered.
	hidden := func(p string) bool {
		for _, h := range spec.Hide {
			if within(p, filepath.Clean(h)) {
				return true
			}
		}
		return false
	}
	shown := slices.Clone(systemPaths)
	var inside []string
	for _, p := range spec.ReadOnly {
		p = filepath.Clean(p)
		if hidden(p) {
			inside = append(inside, p)
			continue
		}
		mkParents(p)
		a = append(a, "--ro-bind-try", p, p)
		shown = append(shown, p)
	}
	// Hidden folders under a shown one are covered by an empty folder of
	// the sandbox's own, read-only once the exceptions are bound in it.
	var covered []string
	for _, h := range spec.Hide {
		if spec.Root != "" {
			break // the host's folders are not there
		}
		h = filepath.Clean(h)
		for _, p := range shown {
			if within(h, p) {
				a = append(a, "--perms", "0755", "--tmpfs", h)
				covered = append(covered, h)
				break
			}
		}
	}
	for _, p := range inside {
		a = append(a, "--ro-bind-try", p, p)
		// bwrap makes the folders on the way as the source's are (maybe
		// 0700): the sandbox user must pass through them.
		for d := filepath.Dir(p); hidden(d); d = filepath.Dir(d) {
			a = append(a, "--chmod", "0755", d)
		}
	}
	for _, h := range covered {
		a = append(a, "--remount-ro", h)
	}
	a = append(a, "--perms", "0755", "--dir", "/home")
	if spec.Home != "" {
		a = append(a, "--bind", spec.Home, HomePath)
	} else {
		// Made by root when bench is root: open to the one user inside.
		perms := "0700"
		if s.root {
			perms = "0777"
		}
		a = append(a, "--perms", perms, "--size", tmp, "--tmpfs", HomePath)
	}
	a = append(a, mountArgs(spec)...)
	chdir := "/"
	if spec.Root != "" && spec.Dir != "" {
		chdir = spec.Dir // inside the root file system
	} else if spec.Dir != "" {
		mkParents(spec.Dir)
		a = append(a, "--bind", spec.Dir, spec.Dir)
		chdir = spec.Dir
	}
	a = append(a, "--chdir", chdir, "--setenv", "HOME", HomePath, "--setenv", "TMPDIR", "/tmp")
	if s.root && !spec.AsRoot {
		// Only what it takes to enter the working folder (owned by the
		// sandbox user, maybe 0700) and for setpriv to become that user;
		// setpriv then drops every capability, for good.
		a = append(a, "--cap-drop", "ALL", "--cap-add", "CAP_DAC_READ_SEARCH",
			"--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SETPCAP", "--")
		drop := s.dropArgv(spec.User)
		if spec.Root != "" {
			host, err := hostProgram(s.setpriv)
			if err != nil {
				return nil, err
			}
			drop = append(host, drop[1:]...)
		}
		a = append(a, drop...)
	} else {
		a = append(a, "--")
	}
	return a, nil
}

// installHint says what to do when bubblewrap cannot be used.
func installHint() string {
	return "install bubblewrap (Debian, Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap), " +
		"or pass --sandbox off to run commands without isolation (the run is then marked unisolated)"
}

// Shows reports whether an isolated sandbox under spec shows the host path
// p: the system folders and spec's read-only paths, but not its hidden
// ones nor the working folder or HOME (which it shows elsewhere or as the
// sandbox's own).
func Shows(spec Spec, p string) bool {
	p = filepath.Clean(p)
	for _, h := range spec.Hide {
		if within(p, filepath.Clean(h)) {
			return false
		}
	}
	if underSystem(p) {
		return true
	}
	for _, r := range spec.ReadOnly {
		if within(p, filepath.Clean(r)) {
			return true
		}
	}
	return false
}
