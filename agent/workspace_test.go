package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// wsFixture is a workspace with neighbours to escape to, and links of every kind:
//
//	tmp/
//	  ws/                    the workspace
//	    a.txt  sub/b.txt  .git/config
//	    in_link -> sub                 in_abs_link -> tmp/ws/sub
//	    out_link -> ../outside         out_abs -> tmp/outside
//	    out_file_link -> ../outside/secret.txt
//	    root_link -> /
//	    dangling_in -> sub/missing.txt dangling_out -> tmp/outside/missing.txt
//	    chain1 -> chain2 -> out_link   loop1 -> loop2 -> loop1
//	    sub/up -> ..                   sub/upup -> ../..
//	  ws2/secret.txt  outside/secret.txt  tests/hidden.txt
type wsFixture struct {
	tmp     string // the temp folder holding the workspace, symlink-resolved
	root    string // the workspace root
	outside string // tmp/outside
	ws      *Workspace
}

const secret = "SECRET-CONTENT-42"

func newFixture(tb testing.TB) wsFixture {
	tb.Helper()
	tmp, err := filepath.EvalSymlinks(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	root := filepath.Join(tmp, "ws")
	outside := filepath.Join(tmp, "outside")
	files := map[string]string{
		"ws/a.txt":           "alpha\nbeta\n",
		"ws/sub/b.txt":       "bravo\n",
		"ws/.git/config":     "[core]\n",
		"ws2/secret.txt":     secret + "\n",
		"outside/secret.txt": secret + "\n",
		"tests/hidden.txt":   secret + "\n",
	}
	for name, content := range files {
		p := filepath.Join(tmp, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	links := [][2]string{
		{"in_link", "sub"},
		{"in_abs_link", filepath.Join(root, "sub")},
		{"out_link", "../outside"},
		{"out_abs", outside},
		{"out_file_link", "../outside/secret.txt"},
		{"root_link", "/"},
		{"dangling_in", "sub/missing.txt"},
		{"dangling_out", filepath.Join(outside, "missing.txt")},
		{"chain1", "chain2"},
		{"chain2", "out_link"},
		{"loop1", "loop2"},
		{"loop2", "loop1"},
		{"sub/up", ".."},
		{"sub/upup", "../.."},
	}
	for _, l := range links {
		if err := os.Symlink(l[1], filepath.Join(root, l[0])); err != nil {
			tb.Fatal(err)
		}
	}
	ws, err := NewWorkspace(root)
	if err != nil {
		tb.Fatal(err)
	}
	return wsFixture{tmp: tmp, root: root, outside: outside, ws: ws}
}

func TestWorkspaceResolve(t *testing.T) {
	fx := newFixture(t)
	const outsideMsg = "is outside the workspace: only files under the workspace can be used"
	const linkMsg = "leads outside the workspace through a symbolic link"
	tests := []struct {
		name    string
		path    string
		want    string // relative to the root, when allowed
		wantErr string // a part of the error text, when refused
	}{
		{"empty is the root", "", ".", ""},
		{"dot is the root", ".", ".", ""},
		{"file", "a.txt", "a.txt", ""},
		{"nested file", "sub/b.txt", "sub/b.txt", ""},
		{"dotdot inside", "sub/../a.txt", "a.txt", ""},
		{"new path", "new/dir/file.txt", "new/dir/file.txt", ""},
		{"missing then dotdot", "missing/../a.txt", "a.txt", ""},
		{"below a file", "a.txt/x", "a.txt/x", ""},
		{"absolute inside", filepath.Join(fx.root, "sub", "b.txt"), "sub/b.txt", ""},
		{"absolute root", fx.root, ".", ""},
		{"trailing slashes", "sub//b.txt/", "sub/b.txt", ""},
		{"link inside", "in_link/b.txt", "sub/b.txt", ""},
		{"absolute link inside", "in_abs_link/b.txt", "sub/b.txt", ""},
		{"dotdot after a link is physical", "in_link/../a.txt", "a.txt", ""},
		{"dangling link inside", "dangling_in", "sub/missing.txt", ""},
		{"link to parent inside", "sub/up/a.txt", "a.txt", ""},
		{"link to / coming back", "root_link" + fx.root + "/a.txt", "a.txt", ""},

		{"parent", "..", "", outsideMsg},
		{"dotdot", "../x", "", "path ../x " + outsideMsg},
		{"dotdot past a folder", "a/../../x", "", outsideMsg},
		{"dotdot past a missing folder", "new/../../x", "", outsideMsg},
		{"sibling tests folder", "../tests/hidden.txt", "", outsideMsg},
		{"sibling with a common prefix", "../ws2/secret.txt", "", outsideMsg},
		{"absolute outside", "/etc/passwd", "", outsideMsg},
		{"absolute prefix trick", fx.root + "/../ws2/secret.txt", "", outsideMsg},
		{"absolute sibling with a common prefix", fx.root + "2/secret.txt", "", outsideMsg},
		{"link out, final", "out_link", "", linkMsg},
		{"link out, middle", "out_link/secret.txt", "", linkMsg},
		{"absolute link out", "out_abs/secret.txt", "", linkMsg},
		{"file link out", "out_file_link", "", linkMsg},
		{"link to /", "root_link/etc/passwd", "", linkMsg},
		{"link to / itself", "root_link", "", linkMsg},
		{"dangling link out", "dangling_out", "", linkMsg},
		{"below a dangling link out", "dangling_out/x", "", linkMsg},
		{"link chain out", "chain1/secret.txt", "", linkMsg},
		{"link loop", "loop1/x", "", "too many levels of symbolic links"},
		{"link up twice", "sub/upup/outside/secret.txt", "", linkMsg},
		{"link up then sideways", "sub/up/../ws2/secret.txt", "", linkMsg},
		{"tilde", "~", "", "starts with ~"},
		{"tilde path", "~/.ssh/id_rsa", "", "starts with ~"},
		{"NUL", "a.txt\x00../../etc/passwd", "", "NUL byte"},
		{"very long", strings.Repeat("a/", 3000), "", "too long"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := fx.ws.Resolve(tt.path)
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("Resolve(%q) = %q, want an error with %q", tt.path, got, tt.wantErr)
				}
				if !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("Resolve(%q) error = %q, want it to contain %q", tt.path, err, tt.wantErr)
				}
				if !filepath.IsAbs(tt.path) && strings.Contains(err.Error(), fx.tmp) {
					t.Errorf("Resolve(%q) error %q shows the host path", tt.path, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve(%q): %v", tt.path, err)
			}
			if want := filepath.Join(fx.root, tt.want); got != want {
				t.Errorf("Resolve(%q) = %q, want %q", tt.path, got, want)
			}
			if rel := fx.ws.Rel(got); rel != tt.want {
				t.Errorf("Rel(%q) = %q, want %q", got, rel, tt.want)
			}
		})
	}
}

func TestNewWorkspace(t *testing.T) {
	fx := newFixture(t)
	alias := filepath.Join(fx.tmp, "ws_alias")
	if err := os.Symlink("ws", alias); err != nil {
		t.Fatal(err)
	}
	ws, err := NewWorkspace(alias)
	if err != nil {
		t.Fatal(err)
	}
	if ws.Root() != fx.root {
		t.Errorf("Root() = %q, want the resolved %q", ws.Root(), fx.root)
	}
	// The root as the operator wrote it still names the workspace.
	got, err := ws.Resolve(filepath.Join(alias, "sub", "b.txt"))
	if err != nil || got != filepath.Join(fx.root, "sub", "b.txt") {
		t.Errorf("Resolve through the root's alias = %q, %v", got, err)
	}
	if _, err := ws.Resolve(alias + "/../outside/secret.txt"); err == nil {
		t.Error("Resolve(alias/../outside) succeeded")
	}

	for _, tt := range []struct{ name, root, wantErr string }{
		{"empty", "", "empty path"},
		{"missing", filepath.Join(fx.tmp, "nope"), "no such file"},
		{"file", filepath.Join(fx.root, "a.txt"), "not a folder"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewWorkspace(tt.root)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("NewWorkspace(%q) error = %v, want %q", tt.root, err, tt.wantErr)
			}
		})
	}
}

func BenchmarkResolve(b *testing.B) {
	fx := newFixture(b)
	for _, p := range []string{"sub/b.txt", "in_link/../sub/up/sub/b.txt", "new/dir/file.txt", "chain1/secret.txt"} {
		b.Run(p, func(b *testing.B) {
			for b.Loop() {
				fx.ws.Resolve(p) //nolint:errcheck // some are refused on purpose
			}
		})
	}
}
