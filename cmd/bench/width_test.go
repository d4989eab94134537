package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/benchhq/bench/internal/ollamatest"
	"github.com/benchhq/bench/results"
)

// bench runs fits a terminal: it was 109 columns wide.
func TestRunsFits80Columns(t *testing.T) {
	runs := []results.RunStat{
		{ID: "20260301-101500-a1b2c3", Model: "qwen2.5-coder:32b-instruct-q4_K_M", Suite: "a-suite-with-a-long-name",
			Status: "interrupted", Arms: 3, Tasks: 13, AttemptsPerTask: 16, Finished: 300, Passes: 120, InfraErrors: 12},
		{ID: "tools-vs-no-exec", Model: "qwen3:0.6b", Suite: "examples", Status: "finished", Arms: 1, Tasks: 13, AttemptsPerTask: 4, Finished: 52, Passes: 31},
	}
	var b bytes.Buffer
	if err := results.WriteRunStats(&b, runs); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		if n := utf8.RuneCountInString(l); n > 80 {
			t.Errorf("line of %d columns: %q", n, l)
		}
	}
	for _, want := range []string{"20260301-101500-a1b2c3", "300/624", "interrupted", "tools-vs-no-exec", "…"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("runs lacks %q:\n%s", want, b.String())
		}
	}
}

// Export's summary counts in words: "1 group", not "1 groups".
func TestExportSaysOneGroup(t *testing.T) {
	db := schema1File(t) // one run, one finished attempt
	code, _, stderr := bench(t, "export", "--db", db, "--out", filepath.Join(t.TempDir(), "x.jsonl"))
	if code != 0 || !strings.Contains(stderr, "exported 1 attempt from 1 group of run r1") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// With stderr not a terminal, bench run writes a line per finished
// attempt; --no-progress silences them.
func TestRunWithoutATerminalSaysEachAttempt(t *testing.T) {
	srv := ollamatest.New(ollamatest.Turns(ollamatest.Reply{Content: "done"}))
	defer srv.Close()
	db := filepath.Join(t.TempDir(), "bench.db")
	code, _, stderr := bench(t, "run", "--host", srv.URL, "--model", "m", "--task", recipeTask, "--db", db, "--attempts", "2", "--sandbox", "off")
	if code != 0 || strings.Count(stderr, "attempt ") < 2 || !strings.Contains(stderr, "attempt 2/2: recipe-trailing-dot, arm default") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
	code, _, stderr = bench(t, "run", "--host", srv.URL, "--model", "m", "--task", recipeTask, "--db", db, "--attempts", "2",
		"--sandbox", "off", "--name", "quiet", "--no-progress")
	if code != 0 || strings.Contains(stderr, "attempt 1/2") {
		t.Errorf("--no-progress: exit %d, stderr:\n%s", code, stderr)
	}
}

// --host takes what OLLAMA_HOST takes: a bare host:port.
func TestHostWithoutScheme(t *testing.T) {
	srv := ollamatest.New(ollamatest.Turns(ollamatest.Reply{Content: "done"}))
	defer srv.Close()
	db := filepath.Join(t.TempDir(), "bench.db")
	hostport := strings.TrimPrefix(srv.URL, "http://")
	code, _, stderr := bench(t, "run", "--host", hostport, "--model", "m", "--task", recipeTask, "--db", db, "--attempts", "1", "--sandbox", "off")
	if code != 0 || !strings.Contains(stderr, "results in "+db) {
		t.Errorf("--host %s: exit %d, stderr:\n%s", hostport, code, stderr)
	}
}
