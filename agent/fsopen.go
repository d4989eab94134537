package agent

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"syscall"
)

// notRegularError refuses a path that is not a regular file: a named pipe,
// a socket, a device or a folder.
type notRegularError struct{ mode fs.FileMode }

func (e notRegularError) Error() string { return "not a regular file (" + kindOf(e.mode) + ")" }

// kindOf words what a file that is not a regular file is.
func kindOf(mode fs.FileMode) string {
	switch t := mode.Type(); {
	case t&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case t&fs.ModeSocket != 0:
		return "a socket"
	case t&fs.ModeCharDevice != 0:
		return "a character device"
	case t&fs.ModeDevice != 0:
		return "a device"
	case t&fs.ModeDir != 0:
		return "a folder"
	case t&fs.ModeSymlink != 0:
		return "a symbolic link"
	default:
		return t.String()
	}
}

// openRegular opens rel in root, with flag (os.O_RDONLY, os.O_RDWR,
// os.O_WRONLY|os.O_CREATE...), and returns it only if it is a regular file,
// with what fstat says of it. It never blocks and never takes a terminal:
// opening a named pipe waits for its other end, forever if nobody comes,
// and a check before the open (which the tools make, for a clear word)
// leaves a moment in which something running beside the agent can swap the
// file for a pipe. So the open itself does not wait (O_NONBLOCK, which
// changes nothing for a regular file), and the opened file is what is
// checked.
func openRegular(root *os.Root, rel string, flag int, perm fs.FileMode) (*os.File, fs.FileInfo, error) {
	f, err := root.OpenFile(rel, flag|openNoBlock, perm)
	if err != nil {
		// A pipe with no reader, opened to write without waiting, or a
		// socket: "no such device or address".
		if errors.Is(err, syscall.ENXIO) {
			mode := fs.ModeIrregular
			if fi, serr := root.Stat(rel); serr == nil && !fi.Mode().IsRegular() {
				mode = fi.Mode()
			}
			return nil, nil, &fs.PathError{Op: "open", Path: rel, Err: notRegularError{mode}}
		}
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("stat %s: %w", rel, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, &fs.PathError{Op: "open", Path: rel, Err: notRegularError{fi.Mode()}}
	}
	return f, fi, nil
}

// walkFS is a workspace as the walks of list_dir and search see it: like
// root.FS(), but no open can block, for a folder swapped for a named pipe
// while the walk goes on.
type walkFS struct{ root *os.Root }

// Open implements fs.FS.
func (w walkFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	return w.root.OpenFile(name, os.O_RDONLY|openNoBlock, 0)
}

// Stat implements fs.StatFS.
func (w walkFS) Stat(name string) (fs.FileInfo, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrInvalid}
	}
	return w.root.Stat(name)
}

// ReadDir implements fs.ReadDirFS: the entries of a folder, by name.
func (w walkFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrInvalid}
	}
	f, err := w.root.OpenFile(name, os.O_RDONLY|openNoBlock|openDirectory, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, err
}
