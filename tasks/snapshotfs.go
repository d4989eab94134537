package tasks

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// WorkspaceFS is the task's workspace/ as every attempt and scoring run
// gets it: the snapshot their copies are written from while the task
// keeps one in memory, else the folder on disk. What an attempt changed is
// judged against it, so that the change is taken from the same original
// the scoring folder is built from, even if the task folder is edited
// during the run. Links are links (fs.ReadLinkFS); __pycache__ folders are
// not in it, as the copies skip them.
func (t *Task) WorkspaceFS() (fs.FS, error) { return t.folderFS(t.WorkspaceDir()) }

// TestsFS is the task's tests/ as scoring runs get it, as WorkspaceFS is
// its workspace/; an empty file system for a task without tests/.
func (t *Task) TestsFS() (fs.FS, error) { return t.folderFS(t.TestsDir()) }

// folderFS is a folder of the task as its snapshot holds it, or on disk
// when the task keeps none (too large, or a Task not made by Load); an
// empty file system for a folder the task does not have.
func (t *Task) folderFS(dir string) (fs.FS, error) {
	s, err := t.snapshotOf(dir)
	if err != nil {
		return nil, err
	}
	if s == nil {
		if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
			return (&snapshot{missing: true}).fs(), nil
		}
		return os.DirFS(dir), nil
	}
	return s.fs(), nil
}

// fs returns the snapshot as a file system, made once.
func (s *snapshot) fs() *snapshotFS {
	s.fsOnce.Do(func() {
		f := &snapshotFS{byName: make(map[string]*snapEntry, len(s.entries)), children: map[string][]fs.DirEntry{}}
		for i := range s.entries {
			e := &s.entries[i]
			name := filepath.ToSlash(e.rel)
			f.byName[name] = e
			if name != "." {
				dir := path.Dir(name)
				f.children[dir] = append(f.children[dir], fs.FileInfoToDirEntry(entryInfo{e}))
			}
		}
		if _, ok := f.byName["."]; !ok { // a missing folder: the root alone
			f.byName["."] = &snapEntry{rel: ".", mode: fs.ModeDir | 0o755}
		}
		for _, c := range f.children {
			slices.SortFunc(c, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
		}
		s.fsys = f
	})
	return s.fsys
}

// snapshotFS is a snapshot as a read-only file system: fs.FS, with
// ReadDir, ReadFile, Stat and the link-aware Lstat and ReadLink. Stat and
// Open do not follow links (a snapshot's links may point anywhere): they
// describe and open the link itself.
type snapshotFS struct {
	byName   map[string]*snapEntry
	children map[string][]fs.DirEntry // by folder, sorted by name
}

func (f *snapshotFS) entry(op, name string) (*snapEntry, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	e, ok := f.byName[name]
	if !ok {
		return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
	}
	return e, nil
}

// Open opens the named file or folder.
func (f *snapshotFS) Open(name string) (fs.File, error) {
	e, err := f.entry("open", name)
	if err != nil {
		return nil, err
	}
	return &snapshotFile{e: e, r: bytes.NewReader(e.data), dir: slices.Clone(f.children[name])}, nil
}

// ReadDir lists a folder, sorted by name.
func (f *snapshotFS) ReadDir(name string) ([]fs.DirEntry, error) {
	e, err := f.entry("readdir", name)
	if err != nil {
		return nil, err
	}
	if !e.mode.IsDir() {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrInvalid}
	}
	return slices.Clone(f.children[name]), nil
}

// ReadFile returns a copy of a regular file's content.
func (f *snapshotFS) ReadFile(name string) ([]byte, error) {
	e, err := f.entry("readfile", name)
	if err != nil {
		return nil, err
	}
	if !e.mode.IsRegular() {
		return nil, &fs.PathError{Op: "readfile", Path: name, Err: fs.ErrInvalid}
	}
	return slices.Clone(e.data), nil
}

// Stat describes the named file (a link itself, not what it points to).
func (f *snapshotFS) Stat(name string) (fs.FileInfo, error) {
	e, err := f.entry("stat", name)
	if err != nil {
		return nil, err
	}
	return entryInfo{e}, nil
}

// Lstat describes the named file without following a link.
func (f *snapshotFS) Lstat(name string) (fs.FileInfo, error) {
	e, err := f.entry("lstat", name)
	if err != nil {
		return nil, err
	}
	return entryInfo{e}, nil
}

// ReadLink returns a link's target.
func (f *snapshotFS) ReadLink(name string) (string, error) {
	e, err := f.entry("readlink", name)
	if err != nil {
		return "", err
	}
	if e.mode&fs.ModeSymlink == 0 {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: fs.ErrInvalid}
	}
	return e.link, nil
}

// entryInfo is a snapshot entry as an fs.FileInfo.
type entryInfo struct{ e *snapEntry }

func (i entryInfo) Name() string {
	if i.e.rel == "." {
		return "."
	}
	return filepath.Base(i.e.rel)
}

func (i entryInfo) Size() int64 {
	if i.e.mode&fs.ModeSymlink != 0 {
		return int64(len(i.e.link))
	}
	return int64(len(i.e.data))
}

func (i entryInfo) Mode() fs.FileMode  { return i.e.mode }
func (i entryInfo) ModTime() time.Time { return time.Time{} }
func (i entryInfo) IsDir() bool        { return i.e.mode.IsDir() }
func (i entryInfo) Sys() any           { return nil }

// snapshotFile is an open file or folder of a snapshotFS.
type snapshotFile struct {
	e   *snapEntry
	r   *bytes.Reader
	dir []fs.DirEntry // a folder's entries not yet read
}

func (f *snapshotFile) Stat() (fs.FileInfo, error) { return entryInfo{f.e}, nil }
func (f *snapshotFile) Close() error               { return nil }

func (f *snapshotFile) Read(b []byte) (int, error) {
	if f.e.mode.IsDir() {
		return 0, &fs.PathError{Op: "read", Path: f.e.rel, Err: fs.ErrInvalid}
	}
	return f.r.Read(b)
}

// ReadDir reads a folder's entries, as fs.ReadDirFile does.
func (f *snapshotFile) ReadDir(n int) ([]fs.DirEntry, error) {
	if !f.e.mode.IsDir() {
		return nil, &fs.PathError{Op: "readdir", Path: f.e.rel, Err: fs.ErrInvalid}
	}
	if n <= 0 {
		out := f.dir
		f.dir = nil
		return out, nil
	}
	if len(f.dir) == 0 {
		return nil, io.EOF
	}
	k := min(n, len(f.dir))
	out := f.dir[:k:k]
	f.dir = f.dir[k:]
	return out, nil
}
