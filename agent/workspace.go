package agent

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// maxPathLen bounds the length of a path the model may give, in bytes.
const maxPathLen = 4096

// maxSymlinks bounds the symbolic links followed while resolving one path,
// as the kernel does (ELOOP).
const maxSymlinks = 40

// Workspace is the folder an attempt's agent works in: the only place its
// file tools may read or write. It is safe for concurrent use.
type Workspace struct {
	root  string // absolute, symlink-free
	alias string // the root as given, made absolute, when it differs from root
}

// NewWorkspace returns the workspace rooted at root, which must be an
// existing folder. The root is made absolute and its symbolic links are
// resolved, so that containment checks compare real paths.
func NewWorkspace(root string) (*Workspace, error) {
	if root == "" {
		return nil, errors.New("workspace root: empty path")
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("workspace root %s: %w", root, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("workspace root %s: %w", root, err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return nil, fmt.Errorf("workspace root %s: %w", root, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("workspace root %s: not a folder", root)
	}
	ws := &Workspace{root: real}
	if abs != real {
		ws.alias = abs
	}
	return ws, nil
}

// Root returns the workspace's absolute, symlink-resolved path.
func (w *Workspace) Root() string { return w.root }

// Resolve maps a path the model gave (relative to the workspace root, or
// absolute) to a real absolute path inside the workspace. Symbolic links are
// followed at every component that exists; for a path that does not exist
// yet, the part that does not exist is kept as written. The returned path
// holds no symbolic link at the time of the call.
//
// It refuses, with an error text written for the model, paths that lead
// outside the workspace whichever way (.., an absolute path elsewhere, a
// symbolic link, dangling or not), paths with a NUL byte, paths starting
// with ~ and paths longer than 4096 bytes. "" and "." are the root.
func (w *Workspace) Resolve(p string) (string, error) {
	switch {
	case len(p) > maxPathLen:
		return "", fmt.Errorf("path is too long (%d bytes, at most %d)", len(p), maxPathLen)
	case strings.IndexByte(p, 0) >= 0:
		return "", fmt.Errorf("path %q contains a NUL byte", p)
	case p == "~" || strings.HasPrefix(p, "~/"):
		return "", fmt.Errorf("path %s starts with ~, which is not expanded here: give a path relative to the workspace root, such as src/main.go", p)
	}
	start := w.root
	if filepath.IsAbs(p) {
		start = string(filepath.Separator)
		if w.alias != "" && within(w.alias, filepath.Clean(p)) {
			// The root as the operator wrote it, before its links were resolved.
			rel, _ := filepath.Rel(w.alias, filepath.Clean(p))
			start, p = w.root, rel
		}
	}
	real, viaLink, err := resolvePath(start, p)
	if err != nil {
		return "", fmt.Errorf("path %s: %w", p, err)
	}
	if !within(w.root, real) {
		if viaLink {
			return "", outsideError(fmt.Sprintf("path %s leads outside the workspace through a symbolic link: only files under the workspace can be used", p))
		}
		return "", outsideError(fmt.Sprintf("path %s is outside the workspace: only files under the workspace can be used", p))
	}
	return real, nil
}

// outsideError is Resolve's refusal of a path that leads outside the workspace.
type outsideError string

func (e outsideError) Error() string { return string(e) }

// Rel returns a path inside the workspace relative to the root, with
// forward slashes: what the model is shown. The root itself is ".".
func (w *Workspace) Rel(abs string) string {
	rel, err := filepath.Rel(w.root, abs)
	if err != nil {
		return filepath.ToSlash(abs)
	}
	return filepath.ToSlash(rel)
}

// within reports whether p is root or below it. Both must be clean and absolute.
func within(root, p string) bool {
	if p == root {
		return true
	}
	if root == string(filepath.Separator) {
		return true
	}
	return strings.HasPrefix(p, root+string(filepath.Separator))
}

// resolvePath walks p component by component from the absolute folder
// start, following symbolic links as the kernel would (a ".." after a link
// goes to the parent of the link's target). Components that do not exist
// are kept as they are, so that a path to be created resolves too. It
// reports whether a symbolic link was followed.
func resolvePath(start, p string) (string, bool, error) {
	resolved := start
	rest := p
	links := 0
	viaLink := false
	for rest != "" {
		var comp string
		comp, rest, _ = strings.Cut(rest, string(filepath.Separator))
		switch comp {
		case "", ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, comp)
		fi, err := os.Lstat(next)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				// Does not exist (yet): keep it as written; the rest cannot
				// hold a link, but a later ".." may come back to existing folders.
				resolved = next
				continue
			}
			return "", viaLink, fmt.Errorf("cannot be checked: %w", errors.Unwrap(err))
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			resolved = next
			continue
		}
		links++
		if links > maxSymlinks {
			return "", viaLink, errors.New("too many levels of symbolic links")
		}
		viaLink = true
		target, err := os.Readlink(next)
		if err != nil {
			return "", viaLink, fmt.Errorf("cannot be checked: %w", errors.Unwrap(err))
		}
		if filepath.IsAbs(target) {
			resolved = string(filepath.Separator)
		}
		if rest != "" {
			target = target + string(filepath.Separator) + rest
		}
		rest = target
	}
	return resolved, viaLink, nil
}
