package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// probeTimeout bounds the trial run of New.
const probeTimeout = 30 * time.Second

// New returns the sandbox of a mode: with Required (or "" or Auto) it
// finds bubblewrap (bwrap) and the util-linux tools it is used with
// (prlimit, and setpriv when bench runs as root) and checks with a trial
// run that a sandbox can be made here; the error says what is missing or
// what failed (bwrap's own message, for example when user namespaces are
// disabled) and how to install it. With Off it checks that commands can
// at least get a process namespace of their own.
func New(ctx context.Context, mode string) (*Sandbox, error) {
	if err := ValidateMode(mode); err != nil {
		return nil, fmt.Errorf("sandbox mode: %w", err)
	}
	s := &Sandbox{root: os.Geteuid() == 0, raise: canRaiseLimits()}
	if mode != Off {
		bwrap, err := exec.LookPath("bwrap")
		if err != nil {
			return nil, errors.New("sandbox: bubblewrap is not installed (no bwrap in PATH): " + installHint())
		}
		out, err := exec.CommandContext(ctx, bwrap, "--version").Output()
		if err != nil {
			return nil, fmt.Errorf("sandbox: %s --version: %w", bwrap, err)
		}
		s.bwrap = bwrap
		s.version = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(out)), "bubblewrap"))
	}
	var err error
	if s.prlimit, err = findSystemTool("prlimit"); err != nil {
		return nil, err
	}
	if s.root {
		if s.setpriv, err = findSystemTool("setpriv"); err != nil {
			return nil, err
		}
		if out, _ := exec.CommandContext(ctx, s.setpriv, "--help").Output(); !strings.Contains(string(out), "--pdeathsig") {
			return nil, fmt.Errorf("sandbox: %s has no --pdeathsig (util-linux 2.33 or newer has it): the sandbox's processes would outlive it", s.setpriv)
		}
	}
	if err := s.probe(ctx); err != nil {
		if s.Isolated() {
			return nil, fmt.Errorf("%w; %s", err, installHint())
		}
		return nil, fmt.Errorf("%w: bench needs root or user namespaces to keep a command's processes from outliving it", err)
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

// probe makes a sandbox on a scratch folder and writes a file in it.
func (s *Sandbox) probe(ctx context.Context) error {
	dir, err := os.MkdirTemp("", "bench-sandbox-probe-")
	if err != nil {
		return fmt.Errorf("sandbox: trial run: %w", err)
	}
	defer os.RemoveAll(dir)
	home := filepath.Join(dir, "home")
	work := filepath.Join(dir, "work")
	for _, d := range []string{home, work} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return fmt.Errorf("sandbox: trial run: %w", err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	// It also shows its process limit: the limits are set on a sandbox's
	// first process from outside it, by a call that could be refused.
	cmd, err := s.Command(ctx, Spec{Dir: work, Home: home}, []string{"/bin/sh", "-c", "echo ok > probe && cat probe && grep '^Max processes' /proc/self/limits"}, []string{"PATH=/usr/local/bin:/usr/bin:/bin"})
	if err != nil {
		return fmt.Errorf("sandbox: trial run: %w", err)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		if s.Isolated() {
			return fmt.Errorf("sandbox: bubblewrap cannot make a sandbox here: %s", firstLines(msg, 4))
		}
		return fmt.Errorf("sandbox: a process namespace cannot be made here: %s", firstLines(msg, 4))
	}
	out, limit, _ := strings.Cut(strings.TrimSpace(stdout.String()), "\n")
	if out != "ok" {
		return fmt.Errorf("sandbox: trial run: the sandboxed command could not write its folder (output %q, errors %q)",
			firstLines(stdout.String(), 2), firstLines(stderr.String(), 2))
	}
	// "Max processes  256  256  processes": the soft and the hard limit.
	if f := strings.Fields(limit); len(f) < 4 || f[2] != strconv.Itoa(DefaultProcs) || f[3] != f[2] {
		return fmt.Errorf("sandbox: trial run: the sandboxed command's process limit is not the sandbox's %d (/proc/self/limits says %q)", DefaultProcs, limit)
	}
	if _, err := os.Stat(filepath.Join(work, "probe")); err != nil {
		return fmt.Errorf("sandbox: trial run: the file written in the sandbox is not in its folder: %w", err)
	}
	return nil
}

// directCommand is the command of the Off mode: argv under the limits, as
// the sandbox user when bench is root, as the first process of a PID
// namespace of its own (in a user namespace when bench is not root, which
// an unprivileged process needs to make one). When it exits the kernel
// kills the rest of the namespace before Wait returns.
func (s *Sandbox) directCommand(ctx context.Context, spec Spec, argv []string) (*exec.Cmd, error) {
	a := s.limitArgv(spec.Limits.WithDefaults(), argv)
	attr := &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID}
	if s.root {
		a = append(s.dropArgv(spec.User), a...)
	} else {
		uid, gid := os.Getuid(), os.Getgid()
		attr.Cloneflags |= syscall.CLONE_NEWUSER
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		attr.GidMappingsEnableSetgroups = false
	}
	cmd := exec.CommandContext(ctx, a[0], a[1:]...)
	cmd.SysProcAttr = attr
	return cmd, nil
}

// killTimeout bounds KillAll.
const killTimeout = 10 * time.Second

// KillAll ends every process of u and returns once none is left. When
// bench runs as root, u is a user of its own: as long as the kernel lists
// processes of u alive, a process running as u signals all the others
// (kill -1), so that nothing escapes, whatever namespace or session it
// made. One kill(-1) reaches every process of u at once, as the kernel
// lists them while no process can fork; a process of bench's own never
// takes u's identity, which would let u's processes signal it. A user
// under whom nothing was ever started (no Command, no Wrap) has nothing
// to end, and /proc is not read. Otherwise (the zero User) it does
// nothing: each command's process namespace already ended with it.
func (s *Sandbox) KillAll(ctx context.Context, u User) error {
	if !s.root || u.uid == 0 || (u.ran != nil && !u.ran.Load()) {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, killTimeout)
	defer cancel()
	id := fmt.Sprint(u.uid)
	for {
		alive, err := processesOf(u.uid)
		if err != nil {
			return fmt.Errorf("sandbox: list the processes of user %d: %w", u.uid, err)
		}
		if alive == 0 {
			return nil
		}
		// kill(-1) reaches every process the caller may signal, but itself.
		cmd := exec.CommandContext(ctx, s.setpriv, "--reuid="+id, "--regid="+id, "--clear-groups", "--", "/bin/sh", "-c", "kill -9 -1")
		cmd.Env = []string{"PATH=/usr/bin:/bin"}
		cmd.Dir = "/"
		_ = cmd.Run() // it dies with the rest; what counts is the next listing
		select {
		case <-ctx.Done():
			return fmt.Errorf("sandbox: %d processes of user %d still ran after %s", alive, u.uid, killTimeout)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// processesOf counts the live processes (zombies aside: they can do
// nothing more) whose real, effective or saved user id is uid, as the
// kernel lists them in /proc: the status of each, read with one buffer.
// A process whose first thread has exited is a zombie by its status while
// its other threads still run: it is alive when /proc lists other tasks
// of it.
func processesOf(uid int) (int, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return 0, err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return 0, err
	}
	want := []byte(strconv.Itoa(uid))
	buf := make([]byte, 4096)
	path := make([]byte, 0, 32)
	n := 0
	for _, name := range names {
		if c := name[0]; c < '0' || c > '9' {
			continue
		}
		path = append(append(append(path[:0], "/proc/"...), name...), "/status"...)
		fd, err := syscall.Open(string(path), syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != nil {
			continue // gone meanwhile
		}
		k, err := syscall.Read(fd, buf)
		syscall.Close(fd)
		if err != nil || k <= 0 {
			continue
		}
		owned, alive := statusOf(buf[:k], want)
		if owned && !alive {
			tasks, err := os.ReadDir("/proc/" + name + "/task")
			alive = err == nil && len(tasks) > 1
		}
		if owned && alive {
			n++
		}
	}
	return n, nil
}

// statusOf reads a /proc/PID/status: whether uid (as text) is one of its
// real, effective or saved user ids, and whether it is not a zombie.
func statusOf(b, uid []byte) (owned, alive bool) {
	alive = true
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		switch {
		case bytes.HasPrefix(line, []byte("State:")):
			st := bytes.TrimSpace(line[len("State:"):])
			alive = len(st) > 0 && st[0] != 'Z' && st[0] != 'X'
		case bytes.HasPrefix(line, []byte("Uid:")):
			f := bytes.Fields(line[len("Uid:"):])
			for i := 0; i < len(f) && i < 3; i++ {
				if bytes.Equal(f[i], uid) {
					owned = true
				}
			}
			return owned, alive // State comes before Uid
		}
	}
	return owned, alive
}

// chownTree gives every file of a tree to uid (group uid), without
// following links. Files already owned are left alone, and so are files
// with more than one link: they are shared with a prepared environment's
// master copy (a hard-linked view) and must stay read-only to the sandbox
// user. It works through an os.Root, so that a sandboxed process swapping
// a folder for a link while the walk runs cannot send a chown outside the
// tree.
func chownTree(dir string, uid int) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	return fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed meanwhile
			}
			return err
		}
		fi, err := d.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok || int(st.Uid) == uid || (!fi.IsDir() && st.Nlink > 1) {
			return nil
		}
		if err := root.Lchown(p, uid, uid); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	})
}

// firstLines is the first n lines of s.
func firstLines(s string, n int) string {
	lines := strings.SplitN(strings.TrimSpace(s), "\n", n+1)
	if len(lines) > n {
		lines = append(lines[:n], "...")
	}
	return strings.Join(lines, " | ")
}

// rlimit is one of a sandbox's limits as the kernel takes it.
type rlimit struct {
	name     string // as the run file's [sandbox] names it
	flag     string // prlimit(1)'s option for it
	resource int
	value    uint64
	unit     uint64 // of the run file's figure, in the kernel's
}

// rlimits are l's limits as the kernel takes them: the one list that
// setLimits, CheckLimits and limitArgv read.
func rlimits(l Limits) []rlimit {
	return []rlimit{
		{"procs", "--nproc", unix.RLIMIT_NPROC, uint64(l.Procs), 1},
		{"memory_mb", "--as", unix.RLIMIT_AS, uint64(l.Memory), 1 << 20},
		{"file_size_mb", "--fsize", unix.RLIMIT_FSIZE, uint64(l.FileSize), 1 << 20},
		{"core dumps", "--core", unix.RLIMIT_CORE, 0, 1},
	}
}

// limitArgv is the prlimit(1) prefix that applies l to argv, for the
// processes whose limits bench does not set itself (setLimits).
func (s *Sandbox) limitArgv(l Limits, argv []string) []string {
	a := []string{s.prlimit}
	for _, r := range rlimits(l) {
		a = append(a, fmt.Sprintf("%s=%d", r.flag, r.value))
	}
	return append(append(a, "--"), argv...)
}

// setLimits sets l on the process pid, as prlimit(1) would for its
// command, both the soft and the hard limit: the sandbox's processes
// cannot raise them again.
func setLimits(pid int, l Limits) error {
	for _, r := range rlimits(l) {
		lim := unix.Rlimit{Cur: r.value, Max: r.value}
		if err := unix.Prlimit(pid, r.resource, &lim, nil); err != nil {
			return fmt.Errorf("sandbox: set %s of process %d: %w", r.name, pid, err)
		}
	}
	return nil
}

// CheckLimits refuses limits that bench could not set: above its own hard
// limits, which only a process with CAP_SYS_RESOURCE in the host's user
// namespace may raise (root in a container may lack it). A command killed
// for it would look like a command that failed.
func (s *Sandbox) CheckLimits(l Limits) error {
	if s.raise {
		return nil
	}
	l = l.WithDefaults()
	for _, r := range rlimits(l) {
		var own unix.Rlimit
		if err := unix.Getrlimit(r.resource, &own); err != nil {
			return fmt.Errorf("sandbox: read bench's own %s limit: %w", r.name, err)
		}
		if own.Max != unix.RLIM_INFINITY && r.value > own.Max {
			return fmt.Errorf("sandbox: [sandbox] %s = %d is above bench's own hard limit of %d, which only root may raise: lower it in the run file", r.name, r.value/r.unit, own.Max/r.unit)
		}
	}
	return nil
}

// canRaiseLimits reports whether this process may raise hard limits above
// its own: CAP_SYS_RESOURCE in its effective set, in the host's user
// namespace (the capability of a user namespace's own root does not do).
func canRaiseLimits() bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil || data[0].Effective&(1<<unix.CAP_SYS_RESOURCE) == 0 {
		return false
	}
	m, err := os.ReadFile("/proc/self/uid_map")
	return err == nil && strings.Join(strings.Fields(string(m)), " ") == "0 0 4294967295"
}
