package tree

import (
	"fmt"
	"os"
)

// Scratch makes a new folder in parent ("" for the system's temporary
// folder) for the many short-lived folders of a run (its attempts'
// workspaces, their scoring copies): searchable by everyone, as the
// sandbox users reach their folders through it, and listable by its
// owner alone.
//
// It asks the file system, as far as it can, to spread the folders made
// in it over the disk (ext4's top-directory flag, chattr +T). ext4
// otherwise puts them all in the block group of their parent, and on an
// ext4 without a journal every new file then looks through the inodes
// freed there in the last minutes, which it does not reuse: at bench's
// rate of making and removing files, a third of an attempt's own CPU
// (BenchmarkAttempt on the development machine: 8.6 to 13.3 ms an attempt
// in a plain /tmp, 6.5 to 7.6 ms in a spread folder, 6.0 to 6.5 ms on
// tmpfs).
func Scratch(parent, pattern string) (string, error) {
	dir, err := os.MkdirTemp(parent, pattern)
	if err != nil {
		return "", fmt.Errorf("make a scratch folder: %w", err)
	}
	if err := os.Chmod(dir, 0o711); err != nil {
		os.Remove(dir)
		return "", fmt.Errorf("make a scratch folder: %w", err)
	}
	Spread(dir)
	return dir, nil
}

// Spread asks the file system, as far as it can, to spread the folders
// made in dir over the disk, as Scratch's are. A folder it cannot do it
// for works the same, only slower on ext4.
func Spread(dir string) { _ = spread(dir) }
