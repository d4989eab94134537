package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchhq/bench/internal/ollamatest"
)

const sameDigest = "cccc000000000000000000000000000000000000000000000000000000000003"

// With several servers, each that lacks the model pulls it before the
// run, and the run goes on when the digests then agree; when they do not,
// it stops before anything is stored, as it did before the pull.
func TestRunPullsOntoEachEndpointThatLacksTheModel(t *testing.T) {
	for _, tt := range []struct {
		name   string
		pulled string // the digest the lacking server's registry gives
		code   int
		want   string
	}{
		{"same weights", sameDigest, 0, "pulled qwen3:0.6b (2 MB) onto "},
		{"other weights", "dddd000000000000000000000000000000000000000000000000000000000004", exitCannotStart, "different models under the name qwen3:0.6b"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			has := ollamatest.New(ollamatest.Turns(), ollamatest.WithDigest("qwen3:0.6b", sameDigest), ollamatest.WithPullable())
			defer has.Close()
			lacks := ollamatest.New(ollamatest.Turns(), ollamatest.WithPullable(ollamatest.Pullable{Name: "qwen3:0.6b", Digest: tt.pulled, Layers: []int64{2e6}}))
			defer lacks.Close()
			db := filepath.Join(t.TempDir(), "bench.db")
			code, _, stderr := bench(t, "run", "--host", has.URL+"=1", "--host", lacks.URL+"=1", "--model", "qwen3:0.6b",
				"--task", recipeTask, "--attempts", "2", "--db", db, "--no-progress")
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstderr: %s", code, tt.code, stderr)
			}
			if !strings.Contains(stderr, tt.want) {
				t.Errorf("stderr lacks %q:\n%s", tt.want, stderr)
			}
			if has.Pulls("qwen3:0.6b") != 0 || lacks.Pulls("qwen3:0.6b") != 1 {
				t.Errorf("pulls: %d onto the server that has it, %d onto the other", has.Pulls("qwen3:0.6b"), lacks.Pulls("qwen3:0.6b"))
			}
			_, err := os.Stat(db)
			if stored := err == nil; stored != (tt.code == 0) {
				t.Errorf("database stored: %v, exit %d", stored, tt.code)
			}
		})
	}
}

// A model name the registry rejects, or one it does not have, or a pull
// that breaks off: one line, exit status 2, nothing stored, and no
// attempt sent to the model.
func TestRunRefusesWhenThePullFails(t *testing.T) {
	for _, tt := range []struct {
		name, model string
		registry    ollamatest.Pullable
		want        string
	}{
		{"a name Ollama rejects", "Qwen 3!", ollamatest.Pullable{Name: "qwen3:0.6b"}, "bench: run: pull Qwen 3! on "},
		{"a name the registry lacks", "qwen3:0.7b", ollamatest.Pullable{Name: "qwen3:0.6b"}, "failed: pull model manifest: file does not exist (the registry has no model of that name"},
		{"a connection cut midway", "qwen3:0.6b", ollamatest.Pullable{Name: "qwen3:0.6b", Layers: []int64{1e6}, FailAfter: 6e5},
			"failed after 500 KB of 1 MB: the server ended the pull before it finished"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := ollamatest.New(ollamatest.Turns(), ollamatest.WithPullable(tt.registry))
			defer srv.Close()
			db := filepath.Join(t.TempDir(), "bench.db")
			code, _, stderr := bench(t, "run", "--host", srv.URL, "--model", tt.model, "--task", recipeTask, "--db", db, "--no-progress")
			if code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
			line := errorLine(t, stderr)
			if !strings.Contains(line, tt.want) {
				t.Errorf("error line %q lacks %q", line, tt.want)
			}
			if _, err := os.Stat(db); !os.IsNotExist(err) {
				t.Errorf("%s stored (%v)", db, err)
			}
			if n := len(srv.Requests()); n != 0 {
				t.Errorf("%d chat requests", n)
			}
		})
	}
}

// errorLine is the line of stderr that starts with "bench: ".
func errorLine(t *testing.T, stderr string) string {
	t.Helper()
	var lines []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "bench: ") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 {
		t.Fatalf("want one error line, got %d:\n%s", len(lines), stderr)
	}
	return lines[0]
}
