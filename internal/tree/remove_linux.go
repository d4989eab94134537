package tree

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// removeAll removes path and everything under it, as os.RemoveAll does,
// with the system calls alone: os.RemoveAll makes an *os.File of every
// folder and asks it for its descriptor once per entry, which puts each
// folder in blocking mode again (two fcntl calls an entry), and tries to
// unlink every folder as a file first. An attempt's end removes two
// trees; on a machine where system calls are slow that was a part of its
// cost worth saving. Links are removed, never followed.
func removeAll(path string) error {
	if path == "" {
		return nil
	}
	path = filepath.Clean(path)
	parent, base := filepath.Split(path)
	if parent == "" {
		parent = "."
	}
	if base == "" || base == "." || base == ".." {
		return &os.PathError{Op: "removeall", Path: path, Err: syscall.EINVAL}
	}
	pfd, err := openDir(unix.AT_FDCWD, parent, false)
	if errors.Is(err, syscall.ENOENT) {
		return nil
	}
	if err != nil {
		return &os.PathError{Op: "open", Path: parent, Err: err}
	}
	defer syscall.Close(pfd)
	return removeAt(pfd, base, path, syscall.DT_UNKNOWN)
}

// removeAt removes name in the folder dirfd (shown is its path, for
// errors); typ is its dirent type when known.
func removeAt(dirfd int, name, shown string, typ uint8) error {
	if typ != syscall.DT_DIR {
		err := unlinkat(dirfd, name, 0)
		switch {
		case err == nil, err == syscall.ENOENT:
			return nil
		case err != syscall.EISDIR && err != syscall.EPERM && err != syscall.EACCES:
			return &os.PathError{Op: "unlinkat", Path: shown, Err: err}
		}
	}
	fd, err := openDir(dirfd, name, true)
	switch {
	case err == syscall.ENOENT:
		return nil
	case err == syscall.ENOTDIR || err == syscall.ELOOP:
		// Not a folder after all (a file we may not unlink, or one that
		// took a folder's place meanwhile): unlink it, or say why not.
		if err := unlinkat(dirfd, name, 0); err != nil && err != syscall.ENOENT {
			return &os.PathError{Op: "unlinkat", Path: shown, Err: err}
		}
		return nil
	case err != nil:
		return &os.PathError{Op: "open", Path: shown, Err: err}
	}
	var first error
	for pass := 1; ; pass++ {
		// Every name is read before any is removed: removing while
		// reading may make the folder skip entries.
		entries, err := readNames(fd)
		if err != nil {
			syscall.Close(fd)
			return &os.PathError{Op: "readdirent", Path: shown, Err: err}
		}
		removed := 0
		for _, e := range entries {
			if err := removeAt(fd, e.name, shown+"/"+e.name, e.typ); err != nil {
				if first == nil {
					first = err
				}
				continue
			}
			removed++
		}
		err = unlinkat(dirfd, name, unix.AT_REMOVEDIR)
		if err == nil || err == syscall.ENOENT {
			syscall.Close(fd)
			return nil
		}
		if err == syscall.ENOTEMPTY && removed > 0 && pass < maxPasses {
			continue // entries came meanwhile: again
		}
		syscall.Close(fd)
		if first != nil {
			return first
		}
		return &os.PathError{Op: "unlinkat", Path: shown, Err: err}
	}
}

// maxPasses bounds the times a folder is emptied again when entries come
// while it is (something still writing there): the removal fails rather
// than run for ever.
const maxPasses = 8

func unlinkat(dirfd int, name string, flags int) error {
	for {
		if err := unix.Unlinkat(dirfd, name, flags); err != unix.EINTR {
			return err
		}
	}
}

// openDir opens a folder for reading its entries; nofollow refuses a link.
func openDir(dirfd int, name string, nofollow bool) (int, error) {
	flags := syscall.O_RDONLY | syscall.O_DIRECTORY | syscall.O_CLOEXEC
	if nofollow {
		flags |= syscall.O_NOFOLLOW
	}
	for {
		fd, err := syscall.Openat(dirfd, name, flags, 0)
		if err != syscall.EINTR {
			return fd, err
		}
	}
}

// Where a struct linux_dirent64's fields are.
const (
	direntReclen = int(unsafe.Offsetof(unix.Dirent{}.Reclen))
	direntType   = int(unsafe.Offsetof(unix.Dirent{}.Type))
	direntName   = int(unsafe.Offsetof(unix.Dirent{}.Name))
)

type dirent struct {
	name string
	typ  uint8
}

// readNames reads a folder's entries, but . and .., with their types.
func readNames(fd int) ([]dirent, error) {
	if _, err := syscall.Seek(fd, 0, 0); err != nil {
		return nil, err
	}
	var out []dirent
	buf := make([]byte, 8192)
	for {
		n, err := syscall.ReadDirent(fd, buf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			return out, nil
		}
		// Each entry is a struct linux_dirent64 (unix.Dirent), its name
		// NUL-terminated.
		for b := buf[:n]; len(b) >= direntName; {
			reclen := int(*(*uint16)(unsafe.Pointer(&b[direntReclen])))
			if reclen < direntName || reclen > len(b) {
				return nil, syscall.EIO
			}
			name := b[direntName:reclen]
			for i, c := range name {
				if c == 0 {
					name = name[:i]
					break
				}
			}
			if s := string(name); s != "." && s != ".." {
				out = append(out, dirent{name: s, typ: b[direntType]})
			}
			b = b[reclen:]
		}
	}
}
