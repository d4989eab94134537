package sandbox

import (
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Mount shows a host folder at a path of the sandbox's own choosing (with
// Spec.Root: Harbor's /tests and /logs/verifier).
type Mount struct {
	// Src is the host folder (absolute).
	Src string
	// Dst is where the sandbox sees it (absolute).
	Dst string
	// ReadOnly shows it read-only.
	ReadOnly bool
}

// hostDir is where a sandbox with a root file system of its own sees the
// host's system folders, read-only, when bench runs as root: setpriv,
// which makes its processes the sandbox user, is the host's program with
// the host's libraries, not the image's.
const hostDir = "/.bench-host"

// rootArgs are the bubblewrap arguments that show spec.Root as "/" (read-
// write: a private view of an image's root file system), and, when bench
// runs as root, the host's system folders under hostDir.
func (s *Sandbox) rootArgs(spec Spec) []string {
	a := []string{"--bind", spec.Root, "/"}
	if spec.Network {
		// Name resolution as the host does it (Docker writes these
		// into a container); the image's own are left alone otherwise.
		for _, f := range []string{"/etc/resolv.conf", "/etc/hosts"} {
			if r, err := filepath.EvalSymlinks(f); err == nil {
				a = append(a, "--ro-bind-try", r, f)
			}
		}
	}
	if !s.root || spec.AsRoot {
		return a // setpriv runs outside (asRootPrefix), or not at all
	}
	for _, p := range systemPaths {
		if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
			a = append(a, "--ro-bind", p, hostDir+p)
		}
	}
	return a
}

// mountArgs are the bubblewrap arguments of spec's mounts. The folders on
// the way are made 0755 first: bwrap would make them as private as the
// source's own (a 0700 temporary folder), out of the sandbox user's reach.
func mountArgs(spec Spec) []string {
	var a []string
	for _, m := range spec.Mounts {
		var chain []string
		for d := filepath.Dir(filepath.Clean(m.Dst)); d != "/" && d != "."; d = filepath.Dir(d) {
			chain = append(chain, d)
		}
		for i := len(chain) - 1; i >= 0; i-- {
			a = append(a, "--perms", "0755", "--dir", chain[i])
		}
		op := "--bind"
		if m.ReadOnly {
			op = "--ro-bind"
		}
		a = append(a, op, m.Src, m.Dst)
	}
	return a
}

// hostProgram is the argv prefix that runs the host's program prog (an
// absolute host path) inside a sandbox whose "/" is an image: through the
// host's dynamic loader, with the host's libraries, all under hostDir.
func hostProgram(prog string) ([]string, error) {
	real, err := filepath.EvalSymlinks(prog)
	if err != nil {
		return nil, fmt.Errorf("sandbox: %s: %w", prog, err)
	}
	f, err := elf.Open(real)
	if err != nil {
		return nil, fmt.Errorf("sandbox: %s: %w", real, err)
	}
	defer f.Close()
	var interp string
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			b := make([]byte, p.Filesz)
			if _, err := p.ReadAt(b, 0); err != nil {
				return nil, fmt.Errorf("sandbox: %s: interpreter: %w", real, err)
			}
			interp = strings.TrimRight(string(b), "\x00")
		}
	}
	inside := func(p string) (string, error) {
		r, err := filepath.EvalSymlinks(p)
		if err != nil {
			return "", err
		}
		if !underSystem(r) {
			return "", fmt.Errorf("%s is outside the system folders", r)
		}
		return hostDir + r, nil
	}
	progIn, err := inside(real)
	if err != nil {
		return nil, fmt.Errorf("sandbox: %s: %w", prog, err)
	}
	if interp == "" {
		return []string{progIn}, nil // static
	}
	ld, err := inside(interp)
	if err != nil {
		return nil, fmt.Errorf("sandbox: %s's loader: %w", prog, err)
	}
	// The loader reads no ld.so.cache here (the image's is not the
	// host's): the host's library folders, as the host resolves them.
	var dirs []string
	seen := map[string]bool{}
	for _, d := range []string{filepath.Dir(interp), "/lib", "/lib64", "/usr/lib", "/usr/lib64"} {
		for _, g := range append([]string{d}, globDirs(d+"/*-linux-gnu*")...) {
			if in, err := inside(g); err == nil && !seen[in] {
				if fi, err := os.Stat(g); err == nil && fi.IsDir() {
					seen[in] = true
					dirs = append(dirs, in)
				}
			}
		}
	}
	return []string{ld, "--library-path", strings.Join(dirs, ":"), progIn}, nil
}

func globDirs(pattern string) []string {
	m, _ := filepath.Glob(pattern)
	return m
}

// asRootPrefix starts a bubblewrap command line a of an AsRoot spec as the
// sandbox user when bench runs as root: bubblewrap then makes the user
// namespace whose root is that user, never the host's root. Its limits
// are set by prlimit(1) before the user changes: bench could not set them
// on a process of another user without CAP_SYS_RESOURCE (a container's
// root often lacks it), and they are inherited from there on.
func (s *Sandbox) asRootPrefix(spec Spec, a []string) []string {
	if !s.root || !spec.AsRoot {
		return a
	}
	return s.limitArgv(spec.Limits.WithDefaults(), append(s.dropArgv(spec.User), a...))
}

// limitedAlready is the limit setter of a process whose limits its
// command line set (asRootPrefix).
func limitedAlready(int, Limits) error { return nil }
