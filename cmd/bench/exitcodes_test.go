package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/benchhq/bench/internal/ollamatest"
)

// A run, and a merge, that finish with attempts not scored exit with
// exitNotScored, say how to run them again, and bench runs does not show
// the run as plainly finished.
func TestFinishedWithAttemptsNotScored(t *testing.T) {
	dir := t.TempDir()
	run := func(db string, srv *ollamatest.Server, shard string) (int, string) {
		code, _, stderr := bench(t, "run", "--name", "recipe", "--host", srv.URL, "--model", "fake", "--task", recipeTask,
			"--attempts", "4", "--no-progress", "--db", db, "--shard", shard, "--max-tries", "1")
		return code, stderr
	}
	good := ollamatest.New(lookScript)
	defer good.Close()
	broken := ollamatest.New(func(req *api.ChatRequest) ollamatest.Reply {
		if req.Options["seed"] == nil {
			return ollamatest.Reply{Content: "ok"} // the overhead measurement
		}
		return ollamatest.Reply{Status: 500, Error: "llama runner process has terminated"}
	})
	defer broken.Close()

	shard0, shard1 := filepath.Join(dir, "shard-0.db"), filepath.Join(dir, "shard-1.db")
	if code, stderr := run(shard0, good, "0/2"); code != exitOK {
		t.Fatalf("shard 0: exit %d\n%s", code, stderr)
	}
	code, stderr := run(shard1, broken, "1/2")
	if code != exitNotScored || !strings.Contains(stderr, "2 attempts ended in infrastructure failures") ||
		!strings.Contains(stderr, "bench run --resume recipe --db "+shard1) {
		t.Errorf("shard 1, every attempt an infrastructure failure: exit %d\n%s", code, stderr)
	}
	code, out, _ := bench(t, "runs", "--db", shard1)
	if code != exitOK || strings.Contains(out, "finished") && !strings.Contains(out, statusIncomplete) {
		t.Errorf("bench runs shows a run with attempts not scored as finished:\n%s", out)
	}

	merged := filepath.Join(dir, "merged.db")
	code, _, stderr = bench(t, "merge", merged, shard0, shard1)
	if code != exitNotScored || !strings.Contains(stderr, "bench run --resume recipe --db "+merged) {
		t.Errorf("merge with attempts not scored: exit %d\n%s", code, stderr)
	}
}
