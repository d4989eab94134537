package tree_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/benchhq/bench/internal/tree"
)

// TestMain lets the test binary remove a tree as another user, when
// started as its own child: root can remove anything.
func TestMain(m *testing.M) {
	if dir := os.Getenv("TREE_TEST_REMOVE"); dir != "" {
		if err := tree.Remove(dir); err != nil {
			os.Stderr.WriteString(err.Error())
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// readOnlyTree makes what Go's module cache and an agent's chmod leave: a
// read-only folder of read-only files, a folder without any permission,
// and one that can be listed but not searched.
func readOnlyTree(t *testing.T, root string) {
	t.Helper()
	for _, d := range []string{"mod/pkg@v1/sub", "locked/inner", "listonly/x"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, d, "f.go"), []byte("package x\n"), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	for d, mode := range map[string]os.FileMode{"mod/pkg@v1/sub": 0o555, "mod/pkg@v1": 0o555, "locked/inner": 0o555, "locked": 0, "listonly": 0o444} {
		if err := os.Chmod(filepath.Join(root, d), mode); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRemoveReadOnlyTree(t *testing.T) {
	base := t.TempDir()
	for _, d := range []string{filepath.Dir(base), base} {
		if err := os.Chmod(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	root := filepath.Join(base, "attempt")
	readOnlyTree(t, root)
	if os.Geteuid() != 0 {
		if err := os.RemoveAll(root); err == nil {
			t.Fatal("os.RemoveAll removed the tree: the test shows nothing")
		}
		if err := tree.Remove(root); err != nil {
			t.Fatal(err)
		}
	} else {
		// As root nothing is refused: remove as the tree's owner, nobody.
		if _, err := exec.LookPath("setpriv"); err != nil {
			t.Skip("no setpriv to drop root")
		}
		const nobody = 65534
		if err := filepath.Walk(root, func(p string, _ os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			return os.Lchown(p, nobody, nobody)
		}); err != nil {
			t.Fatal(err)
		}
		self, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Dir(self), 0o755); err != nil {
			t.Fatal(err)
		}
		id := strconv.Itoa(nobody)
		plain := exec.Command("setpriv", "--reuid", id, "--regid", id, "--clear-groups", "rm", "-rf", root)
		if out, err := plain.CombinedOutput(); err == nil {
			t.Fatalf("rm -rf as the owner removed the tree: the test shows nothing\n%s", out)
		}
		cmd := exec.Command("setpriv", "--reuid", id, "--regid", id, "--clear-groups", self)
		cmd.Env = append(os.Environ(), "TREE_TEST_REMOVE="+root)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("remove as the owner: %v\n%s", err, out)
		}
	}
	if _, err := os.Lstat(root); !os.IsNotExist(err) {
		t.Errorf("the tree is still there: %v", err)
	}
}

func TestRemoveMissing(t *testing.T) {
	if err := tree.Remove(filepath.Join(t.TempDir(), "none")); err != nil {
		t.Error(err)
	}
}

// TestRemoveShapes: every kind of tree goes, links with it but never what
// they point to.
func TestRemoveShapes(t *testing.T) {
	outside := t.TempDir()
	keep := filepath.Join(outside, "keep.txt")
	if err := os.WriteFile(keep, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		make  func(t *testing.T, p string)
		slash bool // remove "p/" rather than "p"
	}{
		{"a file", func(t *testing.T, p string) { write(t, p, "x") }, false},
		{"an empty folder", func(t *testing.T, p string) { mkdir(t, p) }, false},
		{"nested folders", func(t *testing.T, p string) {
			write(t, filepath.Join(p, "a", "b", "c", "d.txt"), "d")
			write(t, filepath.Join(p, "a", "e.txt"), "e")
			mkdir(t, filepath.Join(p, "f", "g"))
		}, false},
		{"more entries than one read", func(t *testing.T, p string) {
			for i := range 600 {
				write(t, filepath.Join(p, "a-rather-long-file-name-to-fill-the-buffer-"+strconv.Itoa(i)), "")
			}
		}, false},
		{"links to a folder and a file outside", func(t *testing.T, p string) {
			mkdir(t, p)
			if err := os.Symlink(outside, filepath.Join(p, "dir-link")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(keep, filepath.Join(p, "file-link")); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"a link itself", func(t *testing.T, p string) {
			if err := os.Symlink(outside, p); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"a trailing slash", func(t *testing.T, p string) { write(t, filepath.Join(p, "x"), "x") }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "tree")
			tt.make(t, p)
			arg := p
			if tt.slash {
				arg += "/"
			}
			if err := tree.Remove(arg); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Lstat(p); !os.IsNotExist(err) {
				t.Errorf("still there: %v", err)
			}
			if b, err := os.ReadFile(keep); err != nil || string(b) != "keep" {
				t.Errorf("a file behind a link went too: %q %v", b, err)
			}
		})
	}
	if err := tree.Remove(""); err != nil {
		t.Errorf("tree.Remove(\"\") = %v", err)
	}
}

func write(t *testing.T, p, body string) {
	t.Helper()
	mkdir(t, filepath.Dir(p))
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mkdir(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
}
