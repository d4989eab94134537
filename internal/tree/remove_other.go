//go:build !linux

package tree

import "os"

// removeAll is os.RemoveAll outside Linux.
func removeAll(path string) error { return os.RemoveAll(path) }

// spread does nothing outside Linux.
func spread(string) error { return nil }

// spreads is false outside Linux.
func spreads(string) (bool, error) { return false, nil }
