//go:build linux

package tree

import (
	"errors"

	"golang.org/x/sys/unix"
)

// topDirFlag is FS_TOPDIR_FL of linux/fs.h, which x/sys/unix lacks.
const topDirFlag = 0x00020000

// spread sets the top-directory flag (FS_TOPDIR_FL, chattr +T) on dir.
// File systems without the flag refuse it, which is no error.
func spread(dir string) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	flags, err := unix.IoctlGetUint32(fd, unix.FS_IOC_GETFLAGS) // the kernel's is an int
	if err != nil {
		return unsupported(err)
	}
	if flags&topDirFlag != 0 {
		return nil
	}
	return unsupported(unix.IoctlSetPointerInt(fd, unix.FS_IOC_SETFLAGS, int(flags|topDirFlag)))
}

// unsupported is nil for the errors of a file system without inode
// flags, or that does not take this one; err otherwise.
func unsupported(err error) error {
	if errors.Is(err, unix.ENOTTY) || errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		return nil
	}
	return err
}

// spreads reports whether dir has the top-directory flag.
func spreads(dir string) (bool, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false, err
	}
	defer unix.Close(fd)
	flags, err := unix.IoctlGetUint32(fd, unix.FS_IOC_GETFLAGS)
	if err != nil {
		return false, unsupported(err)
	}
	return flags&topDirFlag != 0, nil
}
