package tasks

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// maxSnapshot bounds the bytes of a folder kept in memory to copy it: a
// larger folder is copied from disk, file by file, every time.
const maxSnapshot = 16 << 20

// snapshot is a task folder (workspace/ or tests/) read once, to be
// written out for every attempt and scoring run without opening and
// reading each source file again: on a machine where every system call is
// slow, the copies are most of an attempt's own cost.
type snapshot struct {
	entries []snapEntry // in walk order: a folder before what it holds
	// missing is set for a folder the task does not have (tests/ is
	// optional): it is an empty file system, and nothing to copy.
	missing bool

	fsOnce sync.Once
	fsys   *snapshotFS // the entries as a file system (fs), made once
}

type snapEntry struct {
	rel  string
	mode fs.FileMode // type and permissions
	data []byte      // a regular file's content
	link string      // a link's target
}

// snapshots caches the snapshots of a task's folders. A task loaded once
// serves many attempts at once: it is safe for concurrent use.
type snapshots struct {
	mu     sync.Mutex
	byPath map[string]*snapshot // nil value: the folder is too large
}

// snapshotOf returns the snapshot of a folder of the task, or nil when it
// is too large to keep (the caller copies from disk then).
func (t *Task) snapshotOf(dir string) (*snapshot, error) {
	if t.snaps == nil {
		return nil, nil // a Task not made by Load
	}
	t.snaps.mu.Lock()
	defer t.snaps.mu.Unlock()
	if s, ok := t.snaps.byPath[dir]; ok {
		return s, nil
	}
	s, err := readSnapshot(dir)
	if err != nil {
		if _, serr := os.Lstat(dir); !errors.Is(serr, fs.ErrNotExist) {
			return nil, err
		}
		s = &snapshot{missing: true}
	}
	if t.snaps.byPath == nil {
		t.snaps.byPath = map[string]*snapshot{}
	}
	t.snaps.byPath[dir] = s
	return s, nil
}

// readSnapshot reads dir whole, or returns nil past maxSnapshot. Folders
// named __pycache__ are skipped, as the copies skip them; special files
// are not task content.
func readSnapshot(dir string) (*snapshot, error) {
	s := &snapshot{}
	total := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		e := snapEntry{rel: rel, mode: info.Mode()}
		switch {
		case d.IsDir():
			if d.Name() == "__pycache__" {
				return filepath.SkipDir
			}
		case info.Mode()&fs.ModeSymlink != 0:
			if e.link, err = os.Readlink(p); err != nil {
				return err
			}
		case info.Mode().IsRegular():
			if total += int(info.Size()); total > maxSnapshot {
				return errTooLarge
			}
			if e.data, err = os.ReadFile(p); err != nil {
				return err
			}
		default:
			return nil
		}
		s.entries = append(s.entries, e)
		return nil
	})
	if errors.Is(err, errTooLarge) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

var errTooLarge = errors.New("folder too large to keep in memory")

// writeTo writes the snapshot into dst as copyTree would: replace says
// whether dst may already hold files, which are then replaced, never
// written through.
func (s *snapshot) writeTo(dst string, replace bool) error {
	for _, e := range s.entries {
		target := filepath.Join(dst, e.rel)
		switch {
		case e.mode.IsDir():
			if replace {
				if fi, err := os.Lstat(target); err == nil && !fi.IsDir() {
					if err := os.RemoveAll(target); err != nil {
						return err
					}
				}
			}
			if e.rel == "." || replace {
				if err := os.MkdirAll(target, e.mode.Perm()|0o700); err != nil {
					return err
				}
				continue
			}
			if err := os.Mkdir(target, e.mode.Perm()|0o700); err != nil {
				return err
			}
		case e.mode&fs.ModeSymlink != 0:
			if replace {
				if err := os.RemoveAll(target); err != nil {
					return err
				}
			}
			if err := os.Symlink(e.link, target); err != nil {
				return err
			}
		default:
			if replace {
				if err := os.RemoveAll(target); err != nil {
					return err
				}
			}
			if err := writeNew(target, e.data, e.mode.Perm()|0o600); err != nil {
				return err
			}
		}
	}
	return nil
}
