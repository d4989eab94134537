package agent

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// The argv of a sandbox, checked without running it (no bwrap needed).
func TestSandboxArgv(t *testing.T) {
	user := &Sandbox{bwrap: "/usr/bin/bwrap", prlimit: "/usr/bin/prlimit", version: "0.8.0"}
	argv := []string{"/bin/sh", "-c", "go test"}
	tests := []struct {
		name     string
		c        Confinement
		dir      string
		want     []string // sequences that must appear, in order within each
		wantNot  []string
		wantTail []string
	}{
		{
			name:     "no network by default",
			dir:      "/tmp/a/workspace",
			want:     []string{"--unshare-user", "--unshare-net", "--die-with-parent", "--unshare-pid", "--perms 0755 --dir /tmp/a --bind /tmp/a/workspace /tmp/a/workspace", "--chdir /tmp/a/workspace", "--nproc=256", "--as=4294967296", "--fsize=1073741824", "--size 536870912 --tmpfs /tmp"},
			wantNot:  []string{"setpriv", "/run/systemd/resolve"},
			wantTail: argv,
		},
		{
			name:    "network and limits",
			dir:     "/tmp/a/workspace",
			c:       Confinement{Network: true, Limits: Limits{Procs: 9, Memory: 1000, FileSize: 10, Tmp: 100}},
			want:    []string{"--nproc=9", "--as=1000", "--fsize=10", "--size 100 --tmpfs /tmp", "--ro-bind-try /run/systemd/resolve"},
			wantNot: []string{"--unshare-net"},
		},
		{
			name: "read-only extras",
			dir:  "/home/me/ws",
			c:    Confinement{ReadOnly: []string{"/opt/tool", "/usr/local/go"}},
			want: []string{"--perms 0755 --dir /opt --ro-bind-try /opt/tool /opt/tool", "--ro-bind-try /usr/local/go /usr/local/go", "--perms 0755 --dir /home --perms 0755 --dir /home/me --bind /home/me/ws /home/me/ws"},
		},
		{
			name:    "no workspace",
			want:    []string{"--chdir /"},
			wantNot: []string{"--bind "},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := user.Wrap(tt.dir, tt.c, argv)
			if err != nil {
				t.Fatal(err)
			}
			line := strings.Join(got, " ")
			for _, w := range tt.want {
				if !strings.Contains(line, w) {
					t.Errorf("argv lacks %q:\n%s", w, line)
				}
			}
			for _, w := range tt.wantNot {
				if strings.Contains(line, w) {
					t.Errorf("argv holds %q:\n%s", w, line)
				}
			}
			if got[0] != "/usr/bin/bwrap" || !slices.Equal(got[len(got)-3:], argv) {
				t.Errorf("argv does not run bwrap around the command: %s", line)
			}
		})
	}
	if _, err := user.Wrap("/tmp/w", Confinement{ReadOnly: []string{"rel/path"}}, argv); err == nil {
		t.Error("a relative read-only path was accepted")
	}
	// A wrap that cannot be made fails the command, it never runs it bare.
	fail := user.Command(Confinement{ReadOnly: []string{"rel"}})("/tmp/w", argv)
	if fail[0] != "/bin/sh" || !strings.Contains(strings.Join(fail, " "), "bench sandbox:") || strings.Contains(strings.Join(fail, " "), "go test") {
		t.Errorf("failed wrap gave %q", fail)
	}
	// A server's program outside the system is shown read-only.
	srv := user.Server("/tmp/w", Confinement{})([]string{"/srv/mcp/server", "--stdio"})
	if line := strings.Join(srv, " "); !strings.Contains(line, "--ro-bind-try /srv/mcp/server /srv/mcp/server") || !strings.HasSuffix(line, "-- /srv/mcp/server --stdio") {
		t.Errorf("server argv: %s", line)
	}
}

func TestSandboxArgvAsRoot(t *testing.T) {
	root := &Sandbox{bwrap: "/usr/bin/bwrap", prlimit: "/usr/bin/prlimit", setpriv: "/usr/bin/setpriv", root: true}
	got, err := root.Wrap("", Confinement{}, []string{"true"})
	if err != nil {
		t.Fatal(err)
	}
	line := strings.Join(got, " ")
	for _, w := range []string{"--cap-drop ALL", "/usr/bin/setpriv --reuid=", "--clear-groups --inh-caps=-all --bounding-set=-all --no-new-privs -- /usr/bin/prlimit"} {
		if !strings.Contains(line, w) {
			t.Errorf("root argv lacks %q:\n%s", w, line)
		}
	}
	if strings.Contains(line, "--unshare-user") {
		t.Errorf("root argv makes a user namespace: %s", line)
	}
	a, b := sandboxUID("/tmp/a/workspace"), sandboxUID("/tmp/b/workspace")
	if a == b || a < sandboxUIDBase || b < sandboxUIDBase || a != sandboxUID("/tmp/a/workspace") {
		t.Errorf("sandbox uids %d and %d: want distinct, stable, above %d", a, b, sandboxUIDBase)
	}
}

func TestSandboxConfig(t *testing.T) {
	tests := []struct {
		name    string
		c       SandboxConfig
		wantErr string
	}{
		{"empty", SandboxConfig{}, ""},
		{"full", SandboxConfig{Mode: "required", Procs: 10, MemoryMB: 1, FileSizeMB: 1, TmpMB: 1, ReadOnly: []string{"/opt"}}, ""},
		{"bad mode", SandboxConfig{Mode: "on"}, `run.toml: field sandbox.mode: expected "auto", "required" or "off", got "on"`},
		{"negative", SandboxConfig{TmpMB: -1}, "field sandbox.tmp_mb: expected a positive number"},
		{"relative path", SandboxConfig{ReadOnly: []string{"/ok", "opt"}}, `field sandbox.read_only[1]: expected an absolute path, got "opt"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.c.Validate("run.toml")
			if (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("Validate() = %v, want %q", err, tt.wantErr)
			}
		})
	}
	c := SandboxConfig{Procs: 7, MemoryMB: 2, ReadOnly: []string{"/opt"}}.Confinement(true)
	if !c.Network || c.Limits.Procs != 7 || c.Limits.Memory != 2<<20 || c.Limits.FileSize != 0 || c.ReadOnly[0] != "/opt" {
		t.Errorf("Confinement() = %+v", c)
	}
}

func TestChownTreeStaysInside(t *testing.T) {
	if os.Geteuid() != 0 || runtime.GOOS != "linux" {
		t.Skip("giving files to another user needs root (and this test, Linux)")
	}
	base := t.TempDir()
	dir, outside := filepath.Join(base, "ws"), filepath.Join(base, "outside.txt")
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{outside, filepath.Join(dir, "sub", "a.txt")} {
		if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	const uid = sandboxUIDBase + 7
	if err := chownTree(dir, uid); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dir, filepath.Join(dir, "sub"), filepath.Join(dir, "sub", "a.txt"), filepath.Join(dir, "link")} {
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		if owner, _ := fileOwner(fi); owner != uid {
			t.Errorf("%s is owned by %d, want %d", p, owner, uid)
		}
	}
	fi, err := os.Stat(outside)
	if err != nil {
		t.Fatal(err)
	}
	if owner, _ := fileOwner(fi); owner != 0 {
		t.Errorf("the file a link points to outside the tree was given away (owner %d)", owner)
	}
}
