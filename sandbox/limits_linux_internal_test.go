package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A command whose limits cannot be set never runs: bwrap holds its first
// process back until they are, and it is killed instead.
func TestCommandNeverRunsWithoutItsLimits(t *testing.T) {
	sb, err := New(context.Background(), Required)
	if err != nil {
		if os.Getenv("BENCH_REQUIRE_BWRAP") == "1" {
			t.Fatalf("BENCH_REQUIRE_BWRAP=1 but %v", err)
		}
		t.Skipf("no bubblewrap here: %v", err)
	}
	limits := Limits{Procs: 77, Memory: 3 << 30, FileSize: 5 << 20}
	tests := []struct {
		name    string
		limit   func(int, Limits) error
		wantRan bool
	}{
		{"limits set", nil, true},
		{"limits refused", func(int, Limits) error { return errors.New("refused") }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := *sb
			s.limit = tt.limit
			work, home := t.TempDir(), t.TempDir()
			// A command left waiting would hang the test: the timeout
			// kills it, and the test fails on what it sees.
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			cmd, err := s.Command(ctx, Spec{Dir: work, Home: home, User: s.NewUser(), Limits: limits},
				[]string{"/bin/sh", "-c", "touch ran; cat /proc/self/limits"}, []string{"PATH=/usr/bin:/bin"})
			if err != nil {
				t.Fatal(err)
			}
			out, err := cmd.CombinedOutput()
			if ctx.Err() != nil {
				t.Fatalf("the command neither ran nor was killed within 20s: %v, %q", err, out)
			}
			_, statErr := os.Stat(filepath.Join(work, "ran"))
			if ran := statErr == nil; ran != tt.wantRan {
				t.Fatalf("the command ran: %v, want %v (err %v, output %q)", ran, tt.wantRan, err, out)
			}
			if !tt.wantRan {
				if err == nil {
					t.Errorf("a command killed before it ran succeeded: %q", out)
				}
				return
			}
			if err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			for _, w := range []struct {
				line  string
				value int64
			}{
				{"Max processes", int64(limits.Procs)},
				{"Max address space", limits.Memory},
				{"Max file size", limits.FileSize},
				{"Max core file size", 0},
			} {
				if got := limitLine(string(out), w.line); got != fmt.Sprintf("%d %d", w.value, w.value) {
					t.Errorf("%s: soft and hard %q, want %d both", w.line, got, w.value)
				}
			}
		})
	}
}

// limitLine is the soft and hard limit of name in a /proc/PID/limits.
func limitLine(limits, name string) string {
	for _, l := range strings.Split(limits, "\n") {
		if rest, ok := strings.CutPrefix(l, name); ok {
			f := strings.Fields(rest)
			if len(f) >= 2 {
				return f[0] + " " + f[1]
			}
		}
	}
	return ""
}

// Limits above bench's own hard limits are refused before anything runs
// when bench could not set them (without CAP_SYS_RESOURCE, as root in a
// container may be).
func TestLimitsAboveBenchsOwnAreRefused(t *testing.T) {
	var own unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NPROC, &own); err != nil {
		t.Fatal(err)
	}
	if own.Max == unix.RLIM_INFINITY || own.Max < DefaultProcs {
		t.Skipf("bench's own process limit here (%d) leaves nothing to refuse", own.Max)
	}
	tests := []struct {
		name    string
		s       *Sandbox
		l       Limits
		wantErr string
	}{
		{"defaults", &Sandbox{}, Limits{}.WithDefaults(), ""},
		{"above, not root", &Sandbox{}, Limits{Procs: int(own.Max) + 1}.WithDefaults(), "[sandbox] procs"},
		{"above, as root without CAP_SYS_RESOURCE", &Sandbox{root: true}, Limits{Procs: int(own.Max) + 1}.WithDefaults(), "[sandbox] procs"},
		{"above, with CAP_SYS_RESOURCE", &Sandbox{raise: true}, Limits{Procs: int(own.Max) + 1}.WithDefaults(), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.s.CheckLimits(tt.l)
			// Every way to a sandboxed process checks them (prepare).
			if _, werr := tt.s.Wrap(Spec{Limits: tt.l, Home: t.TempDir()}, []string{"true"}); (werr == nil) != (err == nil) {
				t.Errorf("Wrap: %v, CheckLimits: %v", werr, err)
			}
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("error %v, want one naming %q", err, tt.wantErr)
			}
		})
	}
}
