package tasks

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// CopyWorkspace copies the task's workspace/ into dst, which must exist.
func (t *Task) CopyWorkspace(dst string) error {
	if err := t.copyFolder(t.WorkspaceDir(), dst, false); err != nil {
		return fmt.Errorf("copy workspace of task %s: %w", t.ID, err)
	}
	return nil
}

// CopyTests copies the task's hidden tests/ into dst (the attempt's
// workspace), overwriting files of the same name so that an agent cannot
// plant its own version of a hidden test. A task without tests/ copies nothing.
func (t *Task) CopyTests(dst string) error {
	if !t.has(t.TestsDir()) {
		return nil
	}
	if err := t.copyFolder(t.TestsDir(), dst, true); err != nil {
		return fmt.Errorf("copy hidden tests of task %s: %w", t.ID, err)
	}
	return nil
}

// copyFolder copies a folder of the task into dst, from its snapshot in
// memory when it has one.
func (t *Task) copyFolder(src, dst string, replace bool) error {
	s, err := t.snapshotOf(src)
	switch {
	case err != nil:
		return err
	case s == nil:
		return copyTree(src, dst, replace)
	case s.missing:
		return &fs.PathError{Op: "copy", Path: src, Err: fs.ErrNotExist}
	}
	return s.writeTo(dst, replace)
}

// has reports whether the task has the folder dir, as its snapshot (or,
// without one, the disk) says.
func (t *Task) has(dir string) bool {
	if s, err := t.snapshotOf(dir); err == nil && s != nil {
		return !s.missing
	}
	_, err := os.Lstat(dir)
	return !errors.Is(err, fs.ErrNotExist)
}

// CopyTree copies the folder src into dst (created if needed), keeping file
// modes and copying symlinks as symlinks. Existing files are replaced, never
// written through: a symlink planted at a destination path is removed first.
func CopyTree(src, dst string) error { return copyTree(src, dst, true) }

// copyTree copies src into dst; replace says whether dst may already hold
// files. A fresh copy skips the removals, which matters on file systems
// where every system call is slow: the copy is most of an attempt's
// overhead.
func copyTree(src, dst string, replace bool) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			if d.Name() == "__pycache__" {
				return filepath.SkipDir
			}
			if replace {
				// Whatever stands where a folder goes (a file, or a link
				// that MkdirAll would follow out of the workspace) goes.
				if fi, err := os.Lstat(target); err == nil && !fi.IsDir() {
					if err := os.RemoveAll(target); err != nil {
						return err
					}
				}
			}
			if p == src || replace {
				return os.MkdirAll(target, info.Mode().Perm()|0o700)
			}
			return os.Mkdir(target, info.Mode().Perm()|0o700)
		case info.Mode()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			if replace {
				if err := os.RemoveAll(target); err != nil {
					return err
				}
			}
			return os.Symlink(link, target)
		case info.Mode().IsRegular():
			return copyFile(p, target, info.Mode().Perm(), replace)
		default:
			return nil // devices, sockets and pipes are not task content
		}
	})
}

func copyFile(src, dst string, perm fs.FileMode, replace bool) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if replace {
		// Remove first: dst may be a symlink planted by the agent, which
		// must be replaced, not followed, or a folder in the way.
		if err := os.RemoveAll(dst); err != nil {
			return err
		}
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm|0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
