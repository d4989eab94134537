package image

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// Copy makes dst (which must not exist) a copy of the root file system
// src: a private view that one attempt may change at will without
// touching src or any other view. Regular files are cloned where the file
// system can share their blocks (reflinks), else copied; hard links stay
// hard links within the copy; symbolic links are copied as links, never
// followed; device nodes are not there to copy (Unpack makes none).
func Copy(src, dst string) error {
	if err := os.Mkdir(dst, 0o755); err != nil {
		return fmt.Errorf("view %s: %w", dst, err)
	}
	type inode struct{ dev, ino uint64 }
	linked := map[inode]string{}
	var dirs []string
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		out := filepath.Join(dst, rel)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			if rel != "." {
				if err := os.Mkdir(out, 0o700); err != nil {
					return err
				}
			}
			dirs = append(dirs, rel)
			return nil
		case fi.Mode()&fs.ModeSymlink != 0:
			t, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(t, out)
		case fi.Mode()&fs.ModeNamedPipe != 0:
			return syscall.Mkfifo(out, uint32(fi.Mode().Perm()))
		case !fi.Mode().IsRegular():
			return nil
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Nlink > 1 {
			k := inode{uint64(st.Dev), st.Ino}
			if first, ok := linked[k]; ok {
				return os.Link(first, out)
			}
			linked[k] = out
		}
		return copyFile(p, out, fi.Mode().Perm()|fi.Mode()&fs.ModeSticky)
	})
	if err != nil {
		return fmt.Errorf("view %s of %s: %w", dst, src, err)
	}
	// Folder modes last: a read-only folder would refuse its files.
	for i := len(dirs) - 1; i >= 0; i-- {
		fi, err := os.Lstat(filepath.Join(src, dirs[i]))
		if err != nil {
			return fmt.Errorf("view %s of %s: %w", dst, src, err)
		}
		if err := os.Chmod(filepath.Join(dst, dirs[i]), fi.Mode().Perm()|fi.Mode()&fs.ModeSticky); err != nil {
			return fmt.Errorf("view %s of %s: %w", dst, src, err)
		}
	}
	return nil
}

// copyFile clones or copies the regular file src to dst.
func copyFile(src, dst string, mode fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	if err := unix.IoctlFileClone(int(out.Fd()), int(in.Fd())); err != nil {
		if !errors.Is(err, unix.EOPNOTSUPP) && !errors.Is(err, unix.EXDEV) && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOTTY) {
			out.Close()
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Chmod(dst, mode)
}
