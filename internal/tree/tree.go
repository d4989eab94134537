// Package tree removes folder trees that the processes of an attempt
// wrote, whatever modes they left: Go's module cache, for one, makes its
// folders read-only, and os.RemoveAll cannot empty a folder its owner may
// not write.
package tree

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// Remove removes path and everything under it, like os.RemoveAll. Where
// that fails for want of permission, it makes every folder of the tree
// writable and searchable by its owner, and tries again: as the owner of
// the files (bench is, of what its sandboxes wrote) that is always
// allowed. A path that does not exist is no error.
func Remove(path string) error {
	err := removeAll(path)
	if err == nil || !errors.Is(err, fs.ErrPermission) {
		return err
	}
	// WalkDir calls fn on a folder before it reads it: opened up first,
	// every folder can be read.
	_ = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	return removeAll(path)
}
