// Package rootfstest makes small root file systems for tests from the
// host's own programs: each program and the shared libraries it loads
// (as ldd(1) lists them), copied to the same paths, so that a sandbox
// whose "/" is the folder can run them. No network, no image download.
package rootfstest

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Make fills dir with progs (host paths or names found in PATH) and their
// libraries, and /bin/sh as the host's, and makes /tmp, /etc and /app. It
// skips the test when ldd is not there.
func Make(t testing.TB, dir string, progs ...string) {
	t.Helper()
	if _, err := exec.LookPath("ldd"); err != nil {
		t.Skip("no ldd: cannot tell which libraries a program needs")
	}
	for _, d := range []string{"bin", "tmp", "etc", "app"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(dir, "etc/os-release"), []byte("ID=rootfstest\n"), 0o644) //nolint:errcheck // checked by the tests that read it
	for _, p := range append([]string{"/bin/sh"}, progs...) {
		if !filepath.IsAbs(p) {
			lp, err := exec.LookPath(p)
			if err != nil {
				t.Skipf("no %s on this machine", p)
			}
			p = lp
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			t.Fatal(err)
		}
		copyFile(t, real, filepath.Join(dir, "bin", filepath.Base(p)))
		out, err := exec.Command("ldd", real).Output()
		if err != nil && !bytes.Contains(out, []byte("statically")) && !bytes.Contains(out, []byte("not a dynamic")) {
			t.Fatalf("ldd %s: %v", real, err)
		}
		for _, l := range strings.Split(string(out), "\n") {
			for _, f := range strings.Fields(l) {
				if !strings.HasPrefix(f, "/") {
					continue
				}
				copyFile(t, f, filepath.Join(dir, f))
				if r, err := filepath.EvalSymlinks(f); err == nil && r != f {
					copyFile(t, r, filepath.Join(dir, r))
				}
			}
		}
	}
}

func copyFile(t testing.TB, src, dst string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
