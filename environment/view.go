package environment

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/benchhq/bench/internal/tree"
)

// viewsDir holds the views of a cache's environments, beside them: on
// their file system, so that a view can be hard links.
const viewsDir = ".views"

// HomeView makes a private view of the home layer, an attempt's HOME, and
// returns its folder and what removes it.
func (e *Env) HomeView() (string, func(), error) { return e.newView(HomeLayer) }

// ScoringView makes a private view of the scoring layer, a scoring run's
// HOME, and returns its folder and what removes it.
func (e *Env) ScoringView() (string, func(), error) { return e.newView(ScoringLayer) }

// newView makes a view of a layer in the cache's views folder.
func (e *Env) newView(layer string) (string, func(), error) {
	parent := e.views
	if parent == "" {
		parent = filepath.Join(filepath.Dir(e.Dir), viewsDir)
	}
	if _, err := os.Stat(parent); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(parent, 0o711); err != nil {
			return "", nil, fmt.Errorf("view of the %s environment of task %s: %w", layer, e.Meta.Task, err)
		}
	}
	dir, err := os.MkdirTemp(parent, e.Meta.Key+"-"+layer+"-")
	if err != nil {
		return "", nil, fmt.Errorf("view of the %s environment of task %s: %w", layer, e.Meta.Task, err)
	}
	release := func() { tree.Remove(dir) }
	if err := e.view(layer, dir); err != nil {
		release()
		return "", nil, err
	}
	return dir, release, nil
}

// view makes dst a view of a layer: its folders made anew, its files hard
// links to the master's (read-only, root's, when bench is root) or copies
// (when bench is not root, whose files the sandbox user could make
// writable again, or across file systems). Lock files, which tools open
// for writing, are always copies.
func (e *Env) view(layer, dst string) error {
	if err := cloneTree(filepath.Join(e.Dir, layer), dst, os.Geteuid() == 0); err != nil {
		return fmt.Errorf("view of the %s environment of task %s: %w", layer, e.Meta.Task, err)
	}
	return nil
}

// cloneTree makes dst (which may exist) a copy of src: its folders made
// anew, its links as links, its regular files hard links to src's when
// link is set (but lock files, which tools open for writing, and files on
// another file system) or copies.
func cloneTree(src, dst string, link bool) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case rel == ".":
			return os.MkdirAll(dst, fi.Mode().Perm()|0o700)
		case d.IsDir():
			return os.Mkdir(target, fi.Mode().Perm()|0o700)
		case d.Type()&fs.ModeSymlink != 0:
			l, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(l, target)
		case !d.Type().IsRegular():
			return nil
		case link && !strings.HasSuffix(d.Name(), ".lock"):
			err := os.Link(p, target)
			if errors.Is(err, syscall.EXDEV) || errors.Is(err, syscall.EMLINK) {
				link = false // another file system: copies from now on
				return copyFile(p, target, fi.Mode())
			}
			return err
		default:
			return copyFile(p, target, fi.Mode())
		}
	})
}
