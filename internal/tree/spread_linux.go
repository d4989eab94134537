//go:build linux

package tree

import "golang.org/x/sys/unix"

// topDirFlag is FS_TOPDIR_FL of linux/fs.h, which x/sys/unix lacks.
const topDirFlag = 0x00020000

// spread sets the top-directory flag (FS_TOPDIR_FL, chattr +T) on dir.
// A file system without it refuses (Spread ignores why).
func spread(dir string) error {
	fd, flags, err := openFlags(dir)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if flags&topDirFlag != 0 {
		return nil
	}
	return unix.IoctlSetPointerInt(fd, unix.FS_IOC_SETFLAGS, int(flags|topDirFlag))
}

// spreads reports whether dir has the top-directory flag.
func spreads(dir string) (bool, error) {
	fd, flags, err := openFlags(dir)
	if err != nil {
		return false, err
	}
	unix.Close(fd)
	return flags&topDirFlag != 0, nil
}

// openFlags opens the folder dir (not a link to one) and reads its inode
// flags (the kernel's are an int); the caller closes fd.
func openFlags(dir string) (fd int, flags uint32, err error) {
	if fd, err = openDir(unix.AT_FDCWD, dir, true); err != nil {
		return -1, 0, err
	}
	if flags, err = unix.IoctlGetUint32(fd, unix.FS_IOC_GETFLAGS); err != nil {
		unix.Close(fd)
		return -1, 0, err
	}
	return fd, flags, nil
}
