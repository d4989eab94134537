package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchhq/bench/internal/ollamatest"
)

// Bad input is one line and exit status 2, whatever the command: these
// exited 1, or said only 'parse error', or said it after announcing the run.
func TestBadInputExitsWith2(t *testing.T) {
	srv := ollamatest.New(ollamatest.Turns(ollamatest.Reply{Content: "done"}))
	defer srv.Close()
	dir := t.TempDir()
	db := filepath.Join(dir, "bench.db")
	// A stored named run of G = 1, to continue with another G.
	if code, _, stderr := bench(t, "run", "--host", srv.URL, "--model", "m", "--task", recipeTask, "--db", db,
		"--name", "named", "--attempts", "1", "--sandbox", "off"); code != 0 {
		t.Fatalf("setup run: exit %d: %s", code, stderr)
	}
	empty := filepath.Join(dir, "empty")
	os.Mkdir(empty, 0o755)
	missingDB := filepath.Join(dir, "missing.db")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"config missing", []string{"run", "--model", "m", "--db", db, "--config", filepath.Join(dir, "nonexistent.toml")}, "no such run file"},
		{"config is a folder", []string{"run", "--model", "m", "--db", db, "--config", dir}, "expected a run file"},
		{"resume unknown run", []string{"run", "--resume", "nosuch", "--db", db}, "no such run"},
		{"resume without a db", []string{"run", "--resume", "nosuch", "--db", missingDB}, "no such file"},
		{"report unknown run", []string{"report", "--db", db, "nosuchrun"}, "no run nosuchrun"},
		{"validate an empty folder", []string{"validate", empty}, "no task folders"},
		{"report a folder as db", []string{"report", "--db", dir}, "a directory"},
		{"runs a folder as db", []string{"runs", "--db", dir}, "a directory"},
		{"run a folder as db", []string{"run", "--model", "m", "--task", recipeTask, "--db", dir}, "a directory"},
		{"named run, other G", []string{"run", "--host", srv.URL, "--model", "m", "--task", recipeTask, "--db", db,
			"--name", "named", "--attempts", "3", "--sandbox", "off"}, "attempts per task"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := bench(t, tt.args...)
			if code != 2 || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, tt.want)
			}
			if strings.Contains(stderr, "continuing run") {
				t.Errorf("announced the run it then refused: %q", stderr)
			}
			if n := strings.Count(strings.TrimSpace(stderr), "\n"); n > 0 {
				t.Errorf("stderr is %d lines: %q", n+1, stderr)
			}
		})
	}
	if _, err := os.Stat(missingDB); !os.IsNotExist(err) {
		t.Errorf("--resume without a db created %s", missingDB)
	}
}
