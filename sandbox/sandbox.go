// Package sandbox runs the processes of an attempt (the agent's commands,
// its sandboxed MCP servers, the hidden tests that score it) out of reach
// of the host, of the harness and of each other.
//
// With bubblewrap (the default and only isolated mode) a process tree sees
// its working folder read-write, a HOME of its own, the system (/usr, /etc
// and the /bin, /lib links) read-only, and nothing else of the host's
// files: no home, no task folder (not even one installed under /usr), no
// other attempt, no results database. It gets private /tmp, /proc and
// /dev, its own process, IPC and host-name namespaces, no network unless
// allowed, and limits on processes, memory and file size.
//
// In every mode each command is the first process of a process namespace
// of its own: when it ends the kernel kills whatever it started (daemons,
// double forks, setsid included) before the command is reported as done.
// When bench runs as root, processes never run as root: each attempt, and
// each scoring run, gets an unprivileged user id of its own, and KillAll
// ends every process of that user.
package sandbox

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/benchhq/bench/internal/procio"
)

// Sandbox makes the commands of a run. It is safe for concurrent use.
type Sandbox struct {
	// bwrap is bubblewrap's path; "" in the Off mode.
	bwrap   string
	version string
	prlimit string
	setpriv string // set when running as root
	root    bool
	// limit sets the limits of a sandbox's first process; nil is
	// setLimits (a test makes it fail).
	limit func(pid int, l Limits) error
	// raise says bench may raise hard limits above its own (it has
	// CAP_SYS_RESOURCE in the host's user namespace): CheckLimits.
	raise bool
}

// HomePath is where a sandbox shows its HOME.
const HomePath = "/home/bench"

// User is who a sandbox's processes run as. When bench runs as root it is
// an unprivileged user id of its own, made by NewUser for one attempt or one
// scoring run, so that what one of them starts or writes is out of the
// others' reach. Otherwise it is bench's own user, and the zero User.
type User struct {
	uid int
	// ran is set once something is started as the user (Command, Wrap):
	// KillAll has nothing to end for a user that never ran anything.
	ran *atomic.Bool
}

// uidBase is the first user id given to sandboxes when bench runs as root:
// far above the ids of real users and of the usual subordinate id ranges,
// and below 2^31, which some tools take for a negative number.
const uidBase = 1_900_000_000

// uidSpan is how many ids the sandboxes spread over.
const uidSpan = 1 << 27

// NewUser returns a fresh user for one attempt or one scoring run: a random
// unprivileged id when bench runs as root (two bench processes on one
// machine draw from the same range, and a collision among a few dozen
// users at once out of 2^27 is negligible), the zero User otherwise.
func (s *Sandbox) NewUser() User {
	if !s.root {
		return User{}
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	return User{uid: uidBase + int(binary.LittleEndian.Uint32(b[:])%uidSpan), ran: new(atomic.Bool)}
}

// UID is the user's id, or -1 for bench's own user.
func (u User) UID() int {
	if u.uid == 0 {
		return -1
	}
	return u.uid
}

// Spec is what one sandboxed process tree may reach.
type Spec struct {
	// Dir is the working folder, shown read-write ("" for none: the
	// process starts in /).
	Dir string
	// Home is a host folder shown read-write as HOME (at HomePath with
	// bubblewrap). "" gives an empty HOME of the sandbox's own, kept in
	// memory, with bubblewrap; it is required in the Off mode.
	Home string
	// Network leaves the host's network reachable; otherwise the sandbox
	// has its own network with only a loopback of its own.
	Network bool
	// Limits bound processes, memory, file size and /tmp.
	Limits Limits
	// ReadOnly are more host paths (absolute) shown read-only at the same
	// place: a toolchain outside /usr, an MCP server's files.
	ReadOnly []string
	// Hide are host folders never shown, even when they lie under a folder
	// that is (a suite installed under /usr/local/share): the task folders,
	// whose tests/ and solution/ must stay out of reach.
	Hide []string
	// User runs the processes (the zero User: bench's own, or a fresh one
	// per command when bench runs as root).
	User User
	// Root, when set, is a host folder shown read-write as the sandbox's
	// "/" (a private view of an image's root file system) instead of the
	// host's system folders. Dir is then a folder inside it, as the
	// sandbox sees it, neither bound nor given to User; Hide is moot.
	// When bench runs as root, the whole of Root is given to User.
	// Bubblewrap only.
	Root string
	// Mounts show host folders at places of their own in the sandbox.
	Mounts []Mount
	// AsRoot runs the processes as root (uid 0) of a user namespace of
	// their own, mapped to the sandbox user: what an image's set-up steps
	// and Harbor's agents expect (apt-get, writing /usr in their Root),
	// with no more power over the host than the sandbox user has. When
	// bench runs as root, bubblewrap itself is started as that user.
	// Bubblewrap only.
	AsRoot bool
	// Harden keeps every process of the sandbox out of every other's
	// memory: ptrace and process_vm_readv/writev fail (a seccomp filter)
	// and /proc is read-only (no writing /proc/PID/mem). For the hidden
	// tests, whose runner decides the reward while it runs the agent's
	// code: that code must not reach into the runner. Bubblewrap only.
	Harden bool
}

// Isolated reports whether the sandbox isolates its processes from the
// host's files (bubblewrap); false in the Off mode.
func (s *Sandbox) Isolated() bool { return s.bwrap != "" }

// Isolation is how a run's commands are isolated, as the store keeps it:
// "bubblewrap VERSION", or "none" in the Off mode.
func (s *Sandbox) Isolation() string {
	if !s.Isolated() {
		return "none"
	}
	return "bubblewrap " + s.version
}

// String describes the sandbox for logs and reports.
func (s *Sandbox) String() string {
	who := "as bench's user in a user namespace"
	if s.root {
		who = "as an unprivileged user per attempt"
	}
	if !s.Isolated() {
		who = "as bench's user"
		if s.root {
			who = "as an unprivileged user per attempt"
		}
		return fmt.Sprintf("none (--sandbox off): commands run on the host, unisolated, %s, each in a process namespace of its own", who)
	}
	return fmt.Sprintf("bubblewrap %s (%s), %s", s.version, s.bwrap, who)
}

// Command returns the command that runs argv in the sandbox under spec,
// with exactly env (plus HOME) as its environment, ready to start: when ctx
// ends it is killed, namespace and all. Start it, and Wait for it: when
// Wait returns, every process it started is gone. A command never
// started, or whose Start failed, keeps a few descriptors open until ctx
// ends. Do not set its Cancel, WaitDelay or ExtraFiles. When bench runs as root it first gives spec.Dir
// and spec.Home to spec.User.
func (s *Sandbox) Command(ctx context.Context, spec Spec, argv, env []string) (*exec.Cmd, error) {
	if len(argv) == 0 {
		return nil, fmt.Errorf("sandbox: empty command")
	}
	spec, err := s.prepare(spec)
	if err != nil {
		return nil, err
	}
	var cmd *exec.Cmd
	if s.Isolated() {
		if cmd, err = s.bwrapCommand(ctx, spec, argv); err != nil {
			return nil, err
		}
		cmd.Env = append(withoutHome(env), "HOME="+HomePath)
	} else {
		if cmd, err = s.directCommand(ctx, spec, argv); err != nil {
			return nil, err
		}
		cmd.Env = append(withoutHome(env), "HOME="+spec.Home)
		// The command is its namespace's first process: killing it (its
		// group) ends the namespace, and Wait sees it only then.
		procio.KillGroupOnCancel(cmd, killWait)
	}
	cmd.Dir = "/"
	if spec.Dir != "" && spec.Root == "" {
		cmd.Dir = spec.Dir
	}
	return cmd, nil
}

// killWait is how long Wait still waits for output once a command is gone.
const killWait = 2 * time.Second

// Wrap returns the argv that runs argv under spec, for callers that start
// the process themselves (stdio MCP servers). With bubblewrap, HOME is set
// inside the sandbox; in the Off mode, a wrap only changes the user (when
// bench runs as root): such a process gets no process namespace of its
// own, so only trusted programs (MCP servers the operator declared) should
// be started this way.
func (s *Sandbox) Wrap(spec Spec, argv []string) ([]string, error) {
	if len(argv) == 0 {
		return nil, fmt.Errorf("sandbox: empty command")
	}
	spec, err := s.prepare(spec)
	if err != nil {
		return nil, err
	}
	if s.Isolated() {
		a, err := s.bwrapArgv(spec, argv)
		if err != nil {
			return nil, err
		}
		// bwrap passes its environment on; HOME is the sandbox's.
		return a, nil
	}
	if !s.root {
		return argv, nil
	}
	return append(s.dropArgv(spec.User), s.limitArgv(spec.Limits.WithDefaults(), argv)...), nil
}

// prepare checks spec, makes its paths absolute and, as root, picks a user
// and gives it the working folder and HOME.
func (s *Sandbox) prepare(spec Spec) (Spec, error) {
	if err := s.CheckLimits(spec.Limits.WithDefaults()); err != nil {
		return spec, err
	}
	if spec.AsRoot && !s.Isolated() {
		return spec, fmt.Errorf("sandbox: running as root of a user namespace needs bubblewrap")
	}
	if spec.Root != "" && !s.Isolated() {
		return spec, fmt.Errorf("sandbox: a root file system of its own (%s) needs bubblewrap", spec.Root)
	}
	if spec.Root != "" && spec.Dir != "" && !filepath.IsAbs(spec.Dir) {
		return spec, fmt.Errorf("sandbox: folder %q: expected an absolute path inside the root file system", spec.Dir)
	}
	for _, p := range []*string{&spec.Dir, &spec.Home, &spec.Root} {
		if *p == "" || (p == &spec.Dir && spec.Root != "") {
			continue
		}
		abs, err := filepath.Abs(*p)
		if err != nil {
			return spec, fmt.Errorf("sandbox: folder %s: %w", *p, err)
		}
		*p = abs
	}
	for _, m := range spec.Mounts {
		if !filepath.IsAbs(m.Src) || !filepath.IsAbs(m.Dst) {
			return spec, fmt.Errorf("sandbox: mount %s at %s: expected absolute paths", m.Src, m.Dst)
		}
	}
	for _, p := range append(append([]string(nil), spec.ReadOnly...), spec.Hide...) {
		if !filepath.IsAbs(p) {
			return spec, fmt.Errorf("sandbox: path %q: expected an absolute path", p)
		}
	}
	if spec.Home == "" && !s.Isolated() {
		return spec, fmt.Errorf("sandbox: the Off mode needs a HOME folder")
	}
	if s.root {
		if spec.User.uid == 0 {
			spec.User = s.NewUser()
		}
		if spec.User.ran != nil {
			spec.User.ran.Store(true) // before anything starts as the user
		}
		owned := []string{spec.Dir, spec.Home}
		if spec.Root != "" {
			owned = []string{spec.Root, spec.Home}
		}
		for _, m := range spec.Mounts {
			if !m.ReadOnly {
				owned = append(owned, m.Src)
			}
		}
		for _, d := range owned {
			if d == "" {
				continue
			}
			if err := chownTree(d, spec.User.uid); err != nil {
				return spec, fmt.Errorf("sandbox: give %s to the sandbox user: %w", d, err)
			}
			if !s.Isolated() || spec.AsRoot {
				// On the host (or for a bubblewrap started as the
				// user), the user must pass through the folders
				// above (temp folders are 0700): it may enter them, not
				// list or write them.
				if err := passable(d); err != nil {
					return spec, fmt.Errorf("sandbox: let the sandbox user reach %s: %w", d, err)
				}
			}
		}
	}
	if s.root && spec.AsRoot {
		// bubblewrap, started as the user, must reach what it mounts.
		for _, m := range spec.Mounts {
			if err := passable(m.Src); err != nil {
				return spec, fmt.Errorf("sandbox: let the sandbox user reach %s: %w", m.Src, err)
			}
		}
	}
	return spec, nil
}

// passable lets every user pass through the folders above dir (o+x).
func passable(dir string) error {
	for d := filepath.Dir(dir); d != "/" && d != "."; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return err
		}
		if fi.Mode().Perm()&0o001 == 0 {
			if err := os.Chmod(d, fi.Mode().Perm()|0o001); err != nil {
				return err
			}
		}
	}
	return nil
}

// withoutHome drops HOME from env: the sandbox sets it.
func withoutHome(env []string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, "HOME=") {
			out = append(out, kv)
		}
	}
	return out
}

// dropArgv is the setpriv prefix that makes a root-started process the
// sandbox user, without capabilities and for good. Changing the user clears
// the parent-death signal that makes the sandbox die with bwrap (or with
// bench): setpriv sets it again.
func (s *Sandbox) dropArgv(u User) []string {
	id := fmt.Sprint(u.uid)
	return []string{s.setpriv, "--reuid=" + id, "--regid=" + id, "--clear-groups",
		"--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--pdeathsig", "SIGKILL", "--"}
}
