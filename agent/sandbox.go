package agent

import (
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Limits bounds what a sandboxed process tree may use. Zero fields take the
// defaults below. Time is bounded by whoever runs the command (run_command's
// timeout, the end of an attempt for a server): the sandbox makes sure that
// nothing outlives it.
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
	DefaultSandboxProcs    = 256
	DefaultSandboxMemory   = 4 << 30
	DefaultSandboxFileSize = 1 << 30
	DefaultSandboxTmp      = 512 << 20
)

func (l Limits) withDefaults() Limits {
	if l.Procs <= 0 {
		l.Procs = DefaultSandboxProcs
	}
	if l.Memory <= 0 {
		l.Memory = DefaultSandboxMemory
	}
	if l.FileSize <= 0 {
		l.FileSize = DefaultSandboxFileSize
	}
	if l.Tmp <= 0 {
		l.Tmp = DefaultSandboxTmp
	}
	return l
}

// Confinement is what one sandboxed command or server may reach beyond its
// workspace.
type Confinement struct {
	// Network leaves the host's network reachable; otherwise the sandbox
	// has its own network with only a loopback of its own. Give it a
	// profile's Network().
	Network bool
	// Limits bound processes, memory, file size and /tmp.
	Limits Limits
	// ReadOnly are more host paths (absolute) shown read-only at the same
	// place: a toolchain outside /usr, an MCP server's files. Never the
	// task's folder: its tests/ must stay hidden.
	ReadOnly []string
}

// Sandbox runs commands under bubblewrap: the workspace read-write, the
// system (/usr, /etc and the /bin, /lib links) read-only, nothing else of
// the host's files (no home, no task folder, no other attempt), a private
// /tmp, /proc and /dev, its own process, IPC and host-name namespaces, no
// network unless allowed, and limits on processes, memory and file size.
// Everything it started is killed when the command's main process ends or
// when bench dies.
//
// When bench runs as root, sandboxed processes do not: each workspace gets
// an unprivileged user id of its own (the process limit binds only
// non-root users), and the workspace is given to that user before each
// command. Otherwise they run as bench's user in a user namespace.
//
// A nil *Sandbox is valid and sandboxes nothing: its wrap functions are nil.
type Sandbox struct {
	bwrap   string
	prlimit string
	setpriv string // set when running as root
	version string
	root    bool
}

// sandboxUIDBase is the first user id given to sandboxes when bench runs as
// root: far above the ids of real users and of the usual subordinate id
// ranges, and below 2^31, which some tools take for a negative number.
const sandboxUIDBase = 1_900_000_000

// sandboxUIDSpan is how many ids the sandboxes spread over.
const sandboxUIDSpan = 1 << 27

// String describes the sandbox for logs and reports.
func (s *Sandbox) String() string {
	if s == nil {
		return "no sandbox: commands run confined to the workspace folder only"
	}
	who := "as bench's user in a user namespace"
	if s.root {
		who = "as an unprivileged user per workspace"
	}
	return fmt.Sprintf("bubblewrap %s (%s), %s", s.version, s.bwrap, who)
}

// Command returns the wrap function of run_command (BuiltinOptions.Wrap)
// for commands under c. Nil for a nil sandbox.
func (s *Sandbox) Command(c Confinement) func(dir string, argv []string) []string {
	if s == nil {
		return nil
	}
	return func(dir string, argv []string) []string {
		return s.wrapOrFail(dir, c, argv)
	}
}

// Server returns the wrap function of stdio MCP servers (mcp.Options.Wrap)
// that run in the workspace dir under c. The server's program, when given
// by an absolute path outside the system folders, is shown read-only too;
// anything else it needs (its scripts, its data) must be in c.ReadOnly.
// Nil for a nil sandbox.
func (s *Sandbox) Server(dir string, c Confinement) func(argv []string) []string {
	if s == nil {
		return nil
	}
	return func(argv []string) []string {
		cc := c
		if len(argv) > 0 && filepath.IsAbs(argv[0]) && !underSystem(argv[0]) {
			cc.ReadOnly = append(append([]string(nil), c.ReadOnly...), argv[0])
		}
		return s.wrapOrFail(dir, cc, argv)
	}
}

// wrapOrFail is Wrap for callers that cannot take an error: a sandbox that
// cannot be set up turns into a command that says so and fails, never into
// an unsandboxed run.
func (s *Sandbox) wrapOrFail(dir string, c Confinement, argv []string) []string {
	out, err := s.Wrap(dir, c, argv)
	if err != nil {
		return []string{"/bin/sh", "-c", `echo "bench sandbox: $1 (a problem of the harness, not of the command)" >&2; exit 125`, "sh", err.Error()}
	}
	return out
}

// Wrap returns the argv that runs argv in the sandbox, with dir (the
// workspace, "" for none) read-write and the working folder. When bench
// runs as root it first gives dir to the sandbox's user.
func (s *Sandbox) Wrap(dir string, c Confinement, argv []string) ([]string, error) {
	if len(argv) == 0 {
		return nil, fmt.Errorf("sandbox: empty command")
	}
	l := c.Limits.withDefaults()
	if dir != "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, fmt.Errorf("sandbox: workspace %s: %w", dir, err)
		}
		dir = abs
	}
	uid := -1
	if s.root {
		uid = sandboxUID(dir)
		if dir != "" {
			if err := chownTree(dir, uid); err != nil {
				return nil, fmt.Errorf("sandbox: give the workspace to the sandbox user: %w", err)
			}
		}
	}
	a := []string{s.bwrap,
		"--die-with-parent", "--new-session",
		"--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
		"--hostname", "sandbox",
	}
	if !s.root {
		a = append(a, "--unshare-user", "--disable-userns")
	}
	if !c.Network {
		a = append(a, "--unshare-net")
	}
	// The system, read-only. On merged-/usr systems /bin, /lib... are links.
	for _, p := range systemPaths {
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
	a = append(a,
		"--proc", "/proc",
		"--dev", "/dev",
		"--perms", "1777", "--size", tmp, "--tmpfs", "/dev/shm",
		"--perms", "1777", "--size", tmp, "--tmpfs", "/tmp",
	)
	if c.Network {
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
	for _, p := range c.ReadOnly {
		if !filepath.IsAbs(p) {
			return nil, fmt.Errorf("sandbox: read-only path %q: expected an absolute path", p)
		}
		p = filepath.Clean(p)
		mkParents(p)
		a = append(a, "--ro-bind-try", p, p)
	}
	chdir := "/"
	if dir != "" {
		mkParents(dir)
		a = append(a, "--bind", dir, dir)
		chdir = dir
	}
	a = append(a, "--chdir", chdir)
	if s.root {
		// Only what it takes to enter the workspace (owned by the sandbox
		// user, maybe 0700) and for setpriv to become that user; setpriv
		// then drops every capability, for good.
		a = append(a, "--cap-drop", "ALL", "--cap-add", "CAP_DAC_READ_SEARCH",
			"--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SETPCAP", "--")
		id := strconv.Itoa(uid)
		a = append(a, s.setpriv, "--reuid="+id, "--regid="+id, "--clear-groups",
			"--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--")
	} else {
		a = append(a, "--")
	}
	a = append(a, s.prlimit,
		"--nproc="+strconv.Itoa(l.Procs),
		"--as="+strconv.FormatInt(l.Memory, 10),
		"--fsize="+strconv.FormatInt(l.FileSize, 10),
		"--core=0",
		"--")
	return append(a, argv...), nil
}

// systemPaths are shown read-only in every sandbox (links are recreated as
// links).
var systemPaths = []string{"/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}

// mountPoint reports whether p is a folder the sandbox makes itself.
func mountPoint(p string) bool {
	switch p {
	case "/tmp", "/proc", "/dev", "/dev/shm":
		return true
	}
	return false
}

// underSystem reports whether p is at or below a system path.
func underSystem(p string) bool {
	for _, s := range systemPaths {
		if p == s || strings.HasPrefix(p, s+"/") {
			return true
		}
	}
	return false
}

// sandboxUID is the user id of a workspace's sandbox when bench runs as
// root: derived from the folder, so that a workspace's commands and servers
// share it (and its files) while other workspaces, running at the same
// time, count their processes apart.
func sandboxUID(dir string) int {
	h := fnv.New32a()
	h.Write([]byte(dir))
	return sandboxUIDBase + int(h.Sum32()%sandboxUIDSpan)
}

// chownTree gives every file of a tree to uid (group uid), without
// following links. Files already owned are left alone. It works through an
// os.Root, so that a sandboxed process swapping a folder for a link while
// the walk runs cannot send a chown outside the tree.
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
		if owner, ok := fileOwner(fi); ok && owner == uid {
			return nil
		}
		if err := root.Lchown(p, uid, uid); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	})
}

// The sandbox modes of a run.
const (
	// SandboxAuto sandboxes with bubblewrap when it works here, and
	// otherwise runs commands in the confined mode, with a warning.
	SandboxAuto = "auto"
	// SandboxRequired refuses to run without a working sandbox.
	SandboxRequired = "required"
	// SandboxOff never sandboxes: the confined mode only.
	SandboxOff = "off"
)

// SandboxConfig is the [sandbox] table of a run file:
//
//	[sandbox]
//	mode = "auto"            # auto | required | off
//	procs = 256              # processes at once
//	memory_mb = 4096         # address space per process
//	file_size_mb = 1024      # largest file written
//	tmp_mb = 512             # private /tmp, in memory
//	read_only = ["/opt/jdk"] # more host paths shown read-only
//
// Zero values take the defaults.
type SandboxConfig struct {
	Mode       string   `toml:"mode" json:"mode,omitempty"`
	Procs      int      `toml:"procs" json:"procs,omitempty"`
	MemoryMB   int64    `toml:"memory_mb" json:"memory_mb,omitempty"`
	FileSizeMB int64    `toml:"file_size_mb" json:"file_size_mb,omitempty"`
	TmpMB      int64    `toml:"tmp_mb" json:"tmp_mb,omitempty"`
	ReadOnly   []string `toml:"read_only" json:"read_only,omitempty"`
}

// Validate checks the table; errors name the file and the field.
func (c SandboxConfig) Validate(file string) error {
	switch c.Mode {
	case "", SandboxAuto, SandboxRequired, SandboxOff:
	default:
		return fieldErr(file, "sandbox.mode", "expected %q, %q or %q, got %q", SandboxAuto, SandboxRequired, SandboxOff, c.Mode)
	}
	for _, f := range []struct {
		name string
		v    int64
	}{{"procs", int64(c.Procs)}, {"memory_mb", c.MemoryMB}, {"file_size_mb", c.FileSizeMB}, {"tmp_mb", c.TmpMB}} {
		if f.v < 0 {
			return fieldErr(file, "sandbox."+f.name, "expected a positive number (or 0 for the default), got %d", f.v)
		}
	}
	for i, p := range c.ReadOnly {
		if !filepath.IsAbs(p) {
			return fieldErr(file, fmt.Sprintf("sandbox.read_only[%d]", i), "expected an absolute path, got %q", p)
		}
	}
	return nil
}

// Confinement is the confinement of the table's limits and paths, with the
// network open or not (give it the arm's profile.Network()).
func (c SandboxConfig) Confinement(network bool) Confinement {
	return Confinement{
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
