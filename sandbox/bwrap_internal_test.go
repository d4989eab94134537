package sandbox

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// The argv of a sandbox, checked without running it (no bwrap needed).
func TestBwrapArgv(t *testing.T) {
	user := &Sandbox{bwrap: "/usr/bin/bwrap", prlimit: "/usr/bin/prlimit", version: "0.8.0"}
	argv := []string{"/bin/sh", "-c", "go test"}
	tests := []struct {
		name    string
		spec    Spec
		want    []string // sequences that must appear
		wantNot []string
	}{
		{
			name:    "no network by default; the command is its namespace's first process",
			spec:    Spec{Dir: "/tmp/a/workspace"},
			want:    []string{"--unshare-user", "--unshare-net", "--die-with-parent", "--unshare-pid --as-pid-1", "--perms 0755 --dir /tmp/a --bind /tmp/a/workspace /tmp/a/workspace", "--chdir /tmp/a/workspace", "--nproc=256", "--as=4294967296", "--fsize=1073741824", "--size 536870912 --tmpfs /tmp", "--setenv HOME /home/bench"},
			wantNot: []string{"setpriv", "/run/systemd/resolve"},
		},
		{
			name:    "network and limits",
			spec:    Spec{Dir: "/tmp/a/workspace", Network: true, Limits: Limits{Procs: 9, Memory: 1000, FileSize: 10, Tmp: 100}},
			want:    []string{"--nproc=9", "--as=1000", "--fsize=10", "--size 100 --tmpfs /tmp", "--ro-bind-try /run/systemd/resolve"},
			wantNot: []string{"--unshare-net"},
		},
		{
			name: "read-only extras",
			spec: Spec{Dir: "/home/me/ws", ReadOnly: []string{"/opt/tool", "/usr/local/go"}},
			want: []string{"--perms 0755 --dir /opt --ro-bind-try /opt/tool /opt/tool", "--ro-bind-try /usr/local/go /usr/local/go", "--perms 0755 --dir /home/me --bind /home/me/ws /home/me/ws"},
		},
		{
			name: "a HOME of the caller's",
			spec: Spec{Dir: "/tmp/a/workspace", Home: "/tmp/a/home"},
			want: []string{"--bind /tmp/a/home /home/bench"},
		},
		{
			name: "an empty HOME of the sandbox's own",
			spec: Spec{},
			want: []string{"--tmpfs /home/bench", "--chdir /"},
		},
		{
			name: "a suite under /usr is covered; its data folder shown back for servers",
			spec: Spec{Dir: "/tmp/w", Hide: []string{"/usr/local/share/suite", "/srv/other"}, ReadOnly: []string{"/usr/local/share/suite/t/data"}},
			want: []string{"--tmpfs /usr/local/share/suite --ro-bind-try /usr/local/share/suite/t/data /usr/local/share/suite/t/data --chmod 0755 /usr/local/share/suite/t --chmod 0755 /usr/local/share/suite --remount-ro /usr/local/share/suite"},
			// Not under a shown folder: nothing to cover.
			wantNot: []string{"/srv/other"},
		},
		{
			name: "a read-only path holding a hidden folder: covered after it",
			spec: Spec{Dir: "/tmp/w", Hide: []string{"/srv/suites/x"}, ReadOnly: []string{"/srv"}},
			want: []string{"--ro-bind-try /srv /srv", "--perms 0755 --tmpfs /srv/suites/x"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := user.bwrapArgv(tt.spec, argv)
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
	if _, err := user.prepare(Spec{Dir: "/tmp/w", ReadOnly: []string{"rel/path"}}); err == nil {
		t.Error("a relative read-only path was accepted")
	}
}

func TestBwrapArgvAsRoot(t *testing.T) {
	root := &Sandbox{bwrap: "/usr/bin/bwrap", prlimit: "/usr/bin/prlimit", setpriv: "/usr/bin/setpriv", root: true}
	u := root.NewUser()
	got, err := root.bwrapArgv(Spec{User: u}, []string{"true"})
	if err != nil {
		t.Fatal(err)
	}
	line := strings.Join(got, " ")
	for _, w := range []string{"--cap-drop ALL", "/usr/bin/setpriv --reuid=", "--clear-groups --inh-caps=-all --bounding-set=-all --no-new-privs --pdeathsig SIGKILL -- /usr/bin/prlimit"} {
		if !strings.Contains(line, w) {
			t.Errorf("root argv lacks %q:\n%s", w, line)
		}
	}
	if strings.Contains(line, "--unshare-user") {
		t.Errorf("root argv makes a user namespace: %s", line)
	}
	a, b := root.NewUser(), root.NewUser()
	if a == b || a.UID() < uidBase || b.UID() < uidBase || a.UID() >= uidBase+uidSpan {
		t.Errorf("sandbox users %d and %d: want distinct, in [%d, %d)", a.UID(), b.UID(), uidBase, uidBase+uidSpan)
	}
	if (&Sandbox{}).NewUser().UID() != -1 {
		t.Error("without root, a user is bench's own")
	}
}

func TestConfig(t *testing.T) {
	tests := []struct {
		name    string
		c       Config
		wantErr string
	}{
		{"empty", Config{}, ""},
		{"full", Config{Mode: "required", Procs: 10, MemoryMB: 1, FileSizeMB: 1, TmpMB: 1, ReadOnly: []string{"/opt"}}, ""},
		{"the former default still loads", Config{Mode: "auto"}, ""},
		{"bad mode", Config{Mode: "on"}, `run.toml: field sandbox.mode: expected "required" or "off", got "on"`},
		{"negative", Config{TmpMB: -1}, "field sandbox.tmp_mb: expected a positive number"},
		{"relative path", Config{ReadOnly: []string{"/ok", "opt"}}, `field sandbox.read_only[1]: expected an absolute path, got "opt"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.c.Validate("run.toml")
			if (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("Validate() = %v, want %q", err, tt.wantErr)
			}
		})
	}
	s := Config{Procs: 7, MemoryMB: 2, ReadOnly: []string{"/opt"}}.Spec(true)
	if !s.Network || s.Limits.Procs != 7 || s.Limits.Memory != 2<<20 || s.Limits.FileSize != 0 || s.ReadOnly[0] != "/opt" {
		t.Errorf("Spec() = %+v", s)
	}
}

func TestShows(t *testing.T) {
	spec := Spec{ReadOnly: []string{"/opt/jdk"}, Hide: []string{"/usr/local/share/suite"}}
	for p, want := range map[string]bool{
		"/usr/bin": true, "/usr/local/go/bin": true, "/opt/jdk/bin": true,
		"/usr/local/share/suite/t/tests": false, "/root/go/bin": false, "/home/me/bin": false, "/opt": false,
	} {
		if got := Shows(spec, p); got != want {
			t.Errorf("Shows(%s) = %v, want %v", p, got, want)
		}
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
	shared := filepath.Join(base, "master.txt") // a prepared environment's file
	for _, f := range []string{outside, shared, filepath.Join(dir, "sub", "a.txt")} {
		if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(shared, filepath.Join(dir, "sub", "shared.txt")); err != nil {
		t.Fatal(err)
	}
	const uid = uidBase + 7
	if err := chownTree(dir, uid); err != nil {
		t.Fatal(err)
	}
	owner := func(p string) int {
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		return int(fi.Sys().(*syscall.Stat_t).Uid)
	}
	for _, p := range []string{dir, filepath.Join(dir, "sub"), filepath.Join(dir, "sub", "a.txt"), filepath.Join(dir, "link")} {
		if got := owner(p); got != uid {
			t.Errorf("%s is owned by %d, want %d", p, got, uid)
		}
	}
	if got := owner(outside); got != 0 {
		t.Errorf("the file a link points to outside the tree was given away (owner %d)", got)
	}
	if got := owner(shared); got != 0 {
		t.Errorf("a hard-linked file shared with a master copy was given away (owner %d)", got)
	}
}
