package sandbox_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/benchhq/bench/internal/rootfstest"
	"github.com/benchhq/bench/sandbox"
)

// A sandbox with a root file system of its own sees it as "/", not the
// host's system; mounts land where they say; the working folder is one of
// the root's.
func TestRootFileSystem(t *testing.T) {
	sb := testSandbox(t)
	root := t.TempDir()
	rootfstest.Make(t, root)
	tests, logs := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(tests, "test.sh"), []byte("echo from-tests"), 0o644)
	spec := sandbox.Spec{
		Root: root,
		Dir:  "/app",
		Mounts: []sandbox.Mount{
			{Src: tests, Dst: "/tests", ReadOnly: true},
			{Src: logs, Dst: "/logs/verifier"},
		},
	}
	script := `pwd; read l < /etc/os-release; echo "$l"; sh /tests/test.sh
echo written > /app/out
echo reward > /logs/verifier/reward.txt
if { echo x > /tests/planted; } 2>/dev/null; then echo tests-writable; fi
if [ -e /usr/bin/bwrap ] || [ -e ` + sbPath(t) + ` ]; then echo host-visible; fi`
	cmd, err := sb.Command(context.Background(), spec, []string{"/bin/sh", "-c", script}, []string{"PATH=/bin"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got, want := string(out), "/app\nID=rootfstest\nfrom-tests\n"; got != want {
		t.Errorf("output %q, want %q", got, want)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "app/out")); string(b) != "written\n" {
		t.Errorf("the root's /app/out: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(logs, "reward.txt")); string(b) != "reward\n" {
		t.Errorf("the logs mount: %q", b)
	}
	if _, err := os.Stat(filepath.Join(tests, "planted")); err == nil {
		t.Error("a read-only mount was written")
	}

	// A relative working folder is refused: it names nothing in the root.
	spec.Dir = "app"
	if _, err := sb.Command(context.Background(), spec, []string{"/bin/sh"}, nil); err == nil || !strings.Contains(err.Error(), "absolute path inside the root") {
		t.Errorf("a relative folder: %v", err)
	}
}

// sbPath is a host file that a sandbox with its own root must not show.
func sbPath(t *testing.T) string {
	p, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// AsRoot: root inside, the sandbox user (or bench's) outside; files the
// processes make in the root belong to that user on the host.
func TestRootFileSystemAsRoot(t *testing.T) {
	sb := testSandbox(t)
	root := t.TempDir()
	rootfstest.Make(t, root, "id")
	spec := sandbox.Spec{Root: root, Dir: "/app", AsRoot: true}
	cmd, err := sb.Command(context.Background(), spec, []string{"/bin/sh", "-c", "id -u; echo x > /etc/made-by-root"}, []string{"PATH=/bin"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if string(out) != "0\n" {
		t.Errorf("id -u: %q, want 0", out)
	}
	fi, err := os.Stat(filepath.Join(root, "etc/made-by-root"))
	if err != nil {
		t.Fatal(err)
	}
	if uid := fi.Sys().(*syscall.Stat_t).Uid; uid == 0 {
		t.Errorf("a file made as root inside belongs to the host's root")
	}
}
