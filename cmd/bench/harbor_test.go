package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchhq/bench/internal/rootfstest"
)

// writeFiles makes the files (path: content) under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		p = filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// bench validate on a suite of Harbor folders, detected by their files:
// a good task (a Dockerfile replayed on an image from an in-process
// registry), and one whose verifier passes anything; notes at load.
func TestValidateHarborSuite(t *testing.T) {
	if _, err := sandboxFor(t.Context(), "required"); err != nil {
		t.Skipf("no sandbox: %v", err)
	}
	ref := rootfstest.Push(t, "bash", "cat", "mkdir")
	suite := t.TempDir()
	writeFiles(t, filepath.Join(suite, "greet"), map[string]string{
		"task.toml":              "version = \"1.0\"\n[metadata]\ndifficulty = \"easy\"\n[environment]\ngpus = 1\n",
		"instruction.md":         "Write hello to /app/out.\n",
		"environment/Dockerfile": "FROM " + ref + "\nWORKDIR /app\nCOPY seed.txt ./\nRUN mkdir -p /app/logs\n",
		"environment/seed.txt":   "seed\n",
		"tests/test.sh":          "read l < /app/out; r=0; [ \"$l\" = hello ] && r=1; echo $r > /logs/verifier/reward.txt\n",
		"solution/solve.sh":      "echo hello > /app/out\n",
	})
	writeFiles(t, filepath.Join(suite, "lenient"), map[string]string{
		"task.toml":         "[environment]\ndocker_image = \"" + ref + "\"\n",
		"instruction.md":    "Anything.\n",
		"tests/test.sh":     "echo 1 > /logs/verifier/reward.txt\n",
		"solution/solve.sh": "true\n",
	})
	cache := t.TempDir()
	code, stdout, stderr := bench(t, "validate", "--cache", cache, suite)
	if code != 1 {
		t.Errorf("exit %d, want 1 (one invalid task)\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "task greet: environment.gpus:") {
		t.Errorf("no note of the GPU request:\n%s", stderr)
	}
	t.Logf("%s\n%s", stdout, stderr)
	var greet, lenient string
	for _, l := range strings.Split(stdout, "\n") {
		switch {
		case strings.HasPrefix(l, "greet "):
			greet = l
		case strings.HasPrefix(l, "lenient "):
			lenient = l
		}
	}
	if !strings.Contains(greet, "fail 0") || !strings.Contains(greet, "pass 1") || !strings.Contains(greet, " ok ") {
		t.Errorf("greet: %q\n%s", greet, stdout)
	}
	if !strings.Contains(lenient, "INVALID: the verifier passes the untouched environment") {
		t.Errorf("lenient: %q", lenient)
	}
	// A wrong --format is refused, naming the flag.
	if code, _, stderr := bench(t, "validate", "--format", "docker", suite); code != 2 || !strings.Contains(stderr, "--format") {
		t.Errorf("--format docker: exit %d, %s", code, stderr)
	}
}

// bench export --format atif writes one trajectory per attempt; a form it
// does not know is a usage error naming the flag.
func TestExportATIFFlag(t *testing.T) {
	db := resultsDB(t)
	code, stdout, stderr := bench(t, "export", "--db", db, "--format", "atif")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := jsonLines(t, stdout)
	if len(lines) != 7 { // 8 attempts, one an infrastructure failure
		t.Fatalf("%d trajectories:\n%s", len(lines), stdout)
	}
	for _, l := range lines {
		steps, _ := l["steps"].([]any)
		if l["schema_version"] != "ATIF-v1.6" || len(steps) != 3 {
			t.Errorf("trajectory: %v", l)
			continue
		}
		agentStep := steps[1].(map[string]any)
		calls := agentStep["tool_calls"].([]any)
		obs := agentStep["observation"].(map[string]any)["results"].([]any)
		if calls[0].(map[string]any)["tool_call_id"] != obs[0].(map[string]any)["source_call_id"] {
			t.Errorf("the result is not tied to its call: %v", agentStep)
		}
	}
	if code, _, stderr := bench(t, "export", "--db", db, "--format", "xml"); code != 2 || !strings.Contains(stderr, "--format") {
		t.Errorf("--format xml: exit %d, %s", code, stderr)
	}
}
