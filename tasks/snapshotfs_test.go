package tasks

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"
)

// The snapshot of a folder is a file system that holds what the folder
// held (fstest checks every method against every other), links as links.
func TestSnapshotFS(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"a.txt":           "alpha\n",
		"lib/x.py":        "X = 1\n",
		"lib/deep/y.py":   "Y = 2\n",
		"data/empty.txt":  "",
		".hidden/conf":    "k = v\n",
		"run.sh":          "#!/bin/sh\necho hi\n",
		"lib/__init__.py": "",
	}
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(dir, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("lib/x.py", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "lib", "__pycache__"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "lib", "__pycache__", "x.pyc"), []byte("junk"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := readSnapshot(dir)
	if err != nil || s == nil {
		t.Fatalf("snapshot: %v %v", s, err)
	}
	fsys := s.fs()
	want := []string{"link"}
	for name := range files {
		want = append(want, name)
	}
	if err := fstest.TestFS(fsys, want...); err != nil {
		t.Fatal(err)
	}
	for name, body := range files {
		if got, err := fs.ReadFile(fsys, name); err != nil || string(got) != body {
			t.Errorf("%s: %q %v, want %q", name, got, err, body)
		}
	}
	if target, err := fs.ReadLink(fsys, "link"); err != nil || target != "lib/x.py" {
		t.Errorf("link: %q %v", target, err)
	}
	if fi, err := fs.Lstat(fsys, "link"); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("link: lstat %v %v, want a link", fi, err)
	}
	if fi, err := fs.Stat(fsys, "run.sh"); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("run.sh: %v %v, want mode 0755", fi, err)
	}
	if _, err := fs.Stat(fsys, "lib/__pycache__"); !os.IsNotExist(err) {
		t.Errorf("__pycache__: %v, want it left out as the copies leave it", err)
	}
	for _, bad := range []string{"/a.txt", "../a.txt", "lib/", "nope"} {
		if _, err := fsys.Open(bad); err == nil {
			t.Errorf("Open(%q) succeeded", bad)
		}
	}
}

// A task without tests/ has an empty TestsFS, whether Load made it or not:
// its shadowing rule shadows nothing.
func TestTestsFSWithoutTests(t *testing.T) {
	for _, tk := range []*Task{{ID: "bare", Dir: t.TempDir()}, {ID: "loaded", Dir: t.TempDir(), snaps: &snapshots{}}} {
		fsys, err := tk.TestsFS()
		if err != nil {
			t.Fatalf("%s: %v", tk.ID, err)
		}
		var names []string
		if err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
			names = append(names, p)
			return err
		}); err != nil || len(names) != 1 {
			t.Errorf("%s: walked %v, %v; want only the root", tk.ID, names, err)
		}
		if s, err := tk.Shadowing(); err != nil || s.Shadows("test_x.py") {
			t.Errorf("%s: shadowing %+v, %v", tk.ID, s, err)
		}
	}
}
