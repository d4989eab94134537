package tree_test

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/benchhq/bench/internal/tree"
)

// A scratch folder is searchable by all, listable by its owner, and on
// ext4 spreads its folders over the disk; the folders made in it do not
// inherit the flag (only the scratch folder is a top of hierarchies).
func TestScratch(t *testing.T) {
	parent := t.TempDir()
	dir, err := tree.Scratch(parent, "bench-run-")
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(dir) != parent {
		t.Errorf("scratch folder %s is not in %s", dir, parent)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o711 {
		t.Errorf("mode %v, want 0711", fi.Mode().Perm())
	}
	var st unix.Statfs_t
	if err := unix.Statfs(parent, &st); err != nil {
		t.Fatal(err)
	}
	if st.Type != unix.EXT4_SUPER_MAGIC {
		t.Skipf("%s is not on ext2/3/4 (file system type %#x): no top-directory flag to check", parent, st.Type)
	}
	if ok, err := tree.Spreads(dir); err != nil || !ok {
		t.Errorf("scratch folder on ext4: top-directory flag %v (%v), want set", ok, err)
	}
	sub := filepath.Join(dir, "attempt")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	if ok, err := tree.Spreads(sub); err != nil || ok {
		t.Errorf("a folder in the scratch folder: top-directory flag %v (%v), want unset", ok, err)
	}
}
