package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzResolve checks the confinement property: whatever the path, when
// Resolve accepts it, the returned path, read by the kernel's rules
// (EvalSymlinks of its deepest existing ancestor, plus the part that does
// not exist yet), is inside the workspace.
//
// The workspace is newFixture's, full of links out. In an input, a leading
// "@ROOT" stands for the workspace's absolute path and "@TMP" for the
// folder holding it, so that the committed corpus (testdata/fuzz/FuzzResolve)
// reaches absolute paths whatever the temp folder is called.
func FuzzResolve(f *testing.F) {
	fx := newFixture(f)
	f.Fuzz(func(t *testing.T, p string) {
		switch {
		case strings.HasPrefix(p, "@ROOT"):
			p = fx.root + p[len("@ROOT"):]
		case strings.HasPrefix(p, "@TMP"):
			p = fx.tmp + p[len("@TMP"):]
		}
		got, err := fx.ws.Resolve(p)
		if err != nil {
			return
		}
		if !filepath.IsAbs(got) || filepath.Clean(got) != got {
			t.Fatalf("Resolve(%q) = %q: not a clean absolute path", p, got)
		}
		real, err := kernelPath(got)
		if err != nil {
			t.Fatalf("Resolve(%q) = %q: %v", p, got, err)
		}
		if real != fx.root && !strings.HasPrefix(real, fx.root+string(filepath.Separator)) {
			t.Fatalf("Resolve(%q) = %q, which is really %q: outside the workspace %q", p, got, real, fx.root)
		}
	})
}

// kernelPath is where p really leads: EvalSymlinks of its deepest existing
// ancestor, joined with the rest.
func kernelPath(p string) (string, error) {
	existing, rest := p, ""
	for {
		if _, err := os.Lstat(existing); err == nil {
			break
		}
		parent := filepath.Dir(existing)
		if parent == existing {
			break
		}
		rest = filepath.Join(filepath.Base(existing), rest)
		existing = parent
	}
	real, err := filepath.EvalSymlinks(existing)
	if err != nil {
		// A dangling link or a loop as the deepest existing part: the
		// kernel would follow it somewhere Resolve did not check.
		return "", err
	}
	return filepath.Join(real, rest), nil
}
