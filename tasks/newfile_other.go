//go:build !unix

package tasks

import (
	"io/fs"
	"os"
)

// writeNew creates the file p (which must not exist) with data.
func writeNew(p string, data []byte, perm fs.FileMode) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
