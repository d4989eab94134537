//go:build !linux

package tree

import "os"

// removeAll is os.RemoveAll outside Linux.
func removeAll(path string) error { return os.RemoveAll(path) }
