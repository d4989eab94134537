package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchhq/bench/internal/ollamatest"
	"github.com/benchhq/bench/internal/rootfstest"
	"github.com/benchhq/bench/results"
)

// writeFiles makes the files (path: content) under dir.
func writeFiles(t testing.TB, dir string, files map[string]string) {
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

// bench run on a Harbor suite, with a scripted model that writes hello to
// /app/out through run_command, inside each attempt's copy of the task's
// image: the task that wants hello passes, the one that wants bye fails,
// the verifier's ctrf.json lands in the per-test table, and the runs
// report says so.
func TestRunHarborSuite(t *testing.T) {
	if _, err := sandboxFor(t.Context(), "required"); err != nil {
		t.Skipf("no sandbox: %v", err)
	}
	ref := rootfstest.Push(t, "bash", "cat", "mkdir", "id")
	suite := t.TempDir()
	verifier := func(want string) string {
		v := "read l < /app/out; r=0; s=failed; [ \"$l\" = " + want + " ] && r=1 && s=passed\n" +
			"echo '{\"results\": {\"tests\": [{\"name\": \"test_out\", \"status\": \"'$s'\"}]}}' > /logs/verifier/ctrf.json\n"
		if want == "bye" { // a fraction and a metric, in reward.json
			return v + "[ $r = 1 ] || r=0.25; echo '{\"reward\": '$r', \"wrote\": 1}' > /logs/verifier/reward.json\n"
		}
		return v + "echo $r > /logs/verifier/reward.txt\n"
	}
	for name, want := range map[string]string{"hello": "hello", "bye": "bye"} {
		writeFiles(t, filepath.Join(suite, name), map[string]string{
			"task.toml":              "[agent]\ntimeout_sec = 120\n[verifier]\ntimeout_sec = 60\n[environment]\nallow_internet = true\n",
			"instruction.md":         "Write " + want + " to /app/out.\n",
			"environment/Dockerfile": "FROM " + ref + "\nWORKDIR /app\n",
			"tests/test.sh":          verifier(want),
			"solution/solve.sh":      "echo " + want + " > /app/out\n",
		})
	}
	srv := ollamatest.New(ollamatest.Turns(
		ollamatest.Reply{Calls: []ollamatest.Call{{Name: "run_command", Args: map[string]any{"command": "pwd && echo hello > out && id -u"}}}},
		ollamatest.Reply{Content: "Wrote it."},
	))
	defer srv.Close()
	db := filepath.Join(t.TempDir(), "bench.db")
	cache := filepath.Join(t.TempDir(), "envs")
	code, stdout, stderr := bench(t, "run", "--host", srv.URL, "--model", "fake", "--suite", suite, "--attempts", "2", "-j", "2",
		"--db", db, "--cache", cache, "--name", "h1")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	// Resumed, its tasks are loaded again as Harbor's: nothing is left to run.
	if code, out, errs := bench(t, "run", "--resume", "h1", "--db", db, "--host", srv.URL, "--cache", cache); code != 0 || !strings.Contains(out, "2/2") {
		t.Errorf("--resume: exit %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(stderr, "task hello: environment.allow_internet: the task asks for internet access") {
		t.Errorf("no note of the internet access the default profile does not give:\n%s", stderr)
	}
	for _, want := range []string{"hello", "2/2", "bye", "0/2"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout)
		}
	}
	st, err := results.Open(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var rows []struct {
		Task    string `db:"task"`
		Test    string `db:"test"`
		Outcome string `db:"outcome"`
	}
	if err := st.DB().SelectContext(t.Context(), &rows, `SELECT a.task_id AS task, c.test, c.outcome FROM test_cases c JOIN attempts a ON a.id = c.attempt_id ORDER BY a.task_id`); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 || rows[0].Task != "bye" || rows[0].Outcome != "fail" || rows[3].Task != "hello" || rows[3].Outcome != "pass" || rows[3].Test != "test_out" {
		t.Errorf("test cases: %+v", rows)
	}
	var values []struct {
		Task    string   `db:"task"`
		Passed  bool     `db:"passed"`
		Value   *float64 `db:"reward_value"`
		Metrics *string  `db:"metrics"`
	}
	if err := st.DB().SelectContext(t.Context(), &values, `SELECT a.task_id AS task, r.passed, r.reward_value, r.metrics FROM test_results r JOIN attempts a ON a.id = r.attempt_id ORDER BY a.task_id`); err != nil {
		t.Fatal(err)
	}
	if len(values) != 4 || values[0].Passed || values[0].Value == nil || *values[0].Value != 0.25 || values[0].Metrics == nil || *values[0].Metrics != `{"wrote":1}` ||
		!values[3].Passed || values[3].Value == nil || *values[3].Value != 1 || values[3].Metrics != nil {
		t.Errorf("stored rewards: %+v", values)
	}
	var outputs []string
	if err := st.DB().SelectContext(t.Context(), &outputs, `SELECT c.result FROM tool_calls c JOIN attempts a ON a.id = c.attempt_id WHERE a.task_id = 'hello'`); err != nil {
		t.Fatal(err)
	}
	// In the task's working folder, as root of its own namespace.
	if len(outputs) != 2 || !strings.Contains(outputs[0], "/app\n") || !strings.Contains(outputs[0], "\n0\n") {
		t.Errorf("run_command's output: %q", outputs)
	}
}

// bench cache list shows the unpacked images and Harbor environments
// beside bench's own environments; clear removes them.
func TestCacheListsHarborFolders(t *testing.T) {
	if _, err := sandboxFor(t.Context(), "required"); err != nil {
		t.Skipf("no sandbox: %v", err)
	}
	ref := rootfstest.Push(t, "bash", "cat")
	suite := t.TempDir()
	writeFiles(t, filepath.Join(suite, "one"), map[string]string{
		"task.toml":         "[environment]\ndocker_image = \"" + ref + "\"\n",
		"instruction.md":    "x\n",
		"tests/test.sh":     "read l < /out; [ \"$l\" = y ] && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n",
		"solution/solve.sh": "echo y > /out\n",
	})
	cache := filepath.Join(t.TempDir(), "envs")
	if code, out, errs := bench(t, "validate", "--cache", cache, suite); code != 0 {
		t.Fatalf("validate: exit %d\n%s\n%s", code, out, errs)
	}
	code, out, errs := bench(t, "cache", "list", "--cache", cache)
	if code != 0 || !strings.Contains(out, ref) || !strings.Contains(out, "1 image,") || !strings.Contains(out, "1 Harbor environment in") || !strings.Contains(out, "fail 0") {
		t.Errorf("cache list: exit %d\n%s\n%s", code, out, errs)
	}
	code, out, errs = bench(t, "cache", "clear", "--cache", cache)
	if code != 0 || !strings.Contains(out, "removed 1 Harbor environment") || !strings.Contains(out, "removed 1 image") {
		t.Errorf("cache clear: exit %d\n%s\n%s", code, out, errs)
	}
	if _, out, _ = bench(t, "cache", "list", "--cache", cache); strings.Contains(out, ref) {
		t.Errorf("still listed after clear:\n%s", out)
	}
}
