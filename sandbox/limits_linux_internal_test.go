package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
			cmd, err := s.Command(context.Background(), Spec{Dir: work, Home: home, User: s.NewUser()},
				[]string{"/bin/sh", "-c", "touch ran; grep '^Max processes' /proc/self/limits"}, []string{"PATH=/usr/bin:/bin"})
			if err != nil {
				t.Fatal(err)
			}
			out, err := cmd.CombinedOutput()
			_, statErr := os.Stat(filepath.Join(work, "ran"))
			if ran := statErr == nil; ran != tt.wantRan {
				t.Fatalf("the command ran: %v, want %v (err %v, output %q)", ran, tt.wantRan, err, out)
			}
			if tt.wantRan {
				if err != nil || !strings.Contains(string(out), " 256 ") {
					t.Errorf("limits: err %v, output %q, want Max processes 256", err, out)
				}
			} else if err == nil {
				t.Errorf("a command killed before it ran succeeded: %q", out)
			}
		})
	}
}
