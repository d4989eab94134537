package sandbox

import (
	"path/filepath"
	"strings"
	"testing"
)

// A sandbox with a root file system of its own shows none of the host's
// system (but, as root, under hostDir for setpriv), and the host's name
// resolution only with network.
func TestRootArgv(t *testing.T) {
	for _, c := range []struct {
		name    string
		sb      *Sandbox
		spec    Spec
		want    []string
		wantNot []string
	}{
		{
			name:    "user",
			sb:      &Sandbox{bwrap: "/usr/bin/bwrap", prlimit: "/usr/bin/prlimit"},
			spec:    Spec{Root: "/cache/view", Dir: "/app", Mounts: []Mount{{Src: "/h/tests", Dst: "/tests", ReadOnly: true}, {Src: "/h/logs", Dst: "/logs/verifier"}}},
			want:    []string{"--bind /cache/view / ", "--ro-bind /h/tests /tests", "--perms 0755 --dir /logs --bind /h/logs /logs/verifier", "--chdir /app "},
			wantNot: []string{"--ro-bind /usr /usr", "--bind /app /app", hostDir, "resolv.conf"},
		},
		{
			name: "network",
			sb:   &Sandbox{bwrap: "/usr/bin/bwrap", prlimit: "/usr/bin/prlimit"},
			spec: Spec{Root: "/cache/view", Network: true},
			want: []string{"/etc/resolv.conf"},
		},
	} {
		if _, err := filepath.EvalSymlinks("/etc/resolv.conf"); err != nil && c.spec.Network {
			continue // nothing to show on this machine
		}
		a, err := c.sb.bwrapPrefix(c.spec)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		line := strings.Join(a, " ") + " "
		for _, w := range c.want {
			if !strings.Contains(line, w) {
				t.Errorf("%s: no %q in %s", c.name, w, line)
			}
		}
		for _, w := range c.wantNot {
			if strings.Contains(line, w) {
				t.Errorf("%s: %q in %s", c.name, w, line)
			}
		}
	}
}
