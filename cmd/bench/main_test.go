package main

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchhq/bench/internal/ollamatest"
)

const recipeTask = "../../tasks/suites/examples/recipe-trailing-dot"

// bench runs the command line in-process and returns its exit status,
// stdout and stderr.
func bench(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestBadInputIsOneLineAndStatus2(t *testing.T) {
	dir := t.TempDir()
	notDB := filepath.Join(dir, "notes.db")
	os.WriteFile(notDB, []byte("these are my notes, not a database\n"), 0o644)
	badTask := filepath.Join(dir, "bad-task")
	os.MkdirAll(filepath.Join(badTask, "workspace"), 0o755)
	os.WriteFile(filepath.Join(badTask, "task.toml"), []byte("format = 1\ninstruction = \"x\"\n[tests]\ncommand = \"true\"\ntimeout = \"soon\"\n"), 0o644)
	db := filepath.Join(dir, "bench.db")
	otherDB := filepath.Join(dir, "other.db")
	other, err := sql.Open("sqlite", otherDB)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Exec(`CREATE TABLE notes (body TEXT)`); err != nil {
		t.Fatal(err)
	}
	other.Close()

	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no command", nil, "Usage"},
		{"unknown command", []string{"frobnicate"}, "unknown command"},
		{"suite missing", []string{"run", "--model", "m", "--db", db, "--suite", filepath.Join(dir, "nope")}, "no such folder"},
		{"task and suite", []string{"run", "--model", "m", "--task", recipeTask, "--suite", "x"}, "conflict"},
		{"no model", []string{"run", "--db", db, "--task", recipeTask}, "--model is required"},
		{"not a bench db", []string{"run", "--model", "m", "--db", notDB, "--task", recipeTask}, "not a bench database"},
		{"bad task file", []string{"run", "--model", "m", "--db", db, "--task", badTask}, "tests.timeout"},
		{"resume with model", []string{"run", "--resume", "r1", "--model", "m", "--db", db}, "conflict"},
		{"resume with limits", []string{"run", "--resume", "r1", "--max-turns", "3", "--db", db}, "conflict"},
		{"bad max-tries", []string{"run", "--model", "m", "--db", db, "--task", recipeTask, "--max-tries", "-1"}, "--max-tries"},
		{"unknown flag", []string{"run", "--modle", "m"}, "modle"},
		{"bad attempts", []string{"run", "--model", "m", "--db", db, "--attempts", "0", "--task", recipeTask}, "--attempts"},
		{"bad advantage", []string{"run", "--model", "m", "--db", db, "--advantage", "ppo", "--task", recipeTask}, "--advantage"},
		{"validate missing", []string{"validate", filepath.Join(dir, "nope")}, "no such folder"},
		{"report not a db", []string{"report", "--db", notDB}, "not a bench database"},
		{"runs not a db", []string{"runs", "--db", notDB}, "not a bench database"},
		{"view not a db", []string{"view", "--db", notDB, "--addr", "127.0.0.1:0"}, "not a bench database"},
		{"view another app's db", []string{"view", "--db", otherDB, "--addr", "127.0.0.1:0"}, "not a bench database"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := bench(t, tt.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2 (stderr %q)", code, stderr)
			}
			if !strings.Contains(stderr, tt.want) {
				t.Errorf("stderr %q does not say %q", stderr, tt.want)
			}
			if tt.args != nil && strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
				t.Errorf("stderr is more than one line: %q", stderr)
			}
		})
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Errorf("bad input left %s behind (%v)", db, err)
	}
	if b, _ := os.ReadFile(notDB); string(b) != "these are my notes, not a database\n" {
		t.Errorf("the file that is not a bench DB was modified: %q", b)
	}
}

func TestRunThenReport(t *testing.T) {
	srv := ollamatest.New(ollamatest.Turns(
		ollamatest.Reply{Calls: []ollamatest.Call{{Name: "read_file", Args: map[string]any{"path": "recipe.py"}}}},
		ollamatest.Reply{Content: "I looked at it."},
	))
	defer srv.Close()
	db := filepath.Join(t.TempDir(), "bench.db")
	code, stdout, stderr := bench(t, "run", "--host", srv.URL, "--model", "fake", "--task", recipeTask, "--attempts", "2", "-j", "2", "--db", db)
	if code != 0 {
		t.Fatalf("exit %d\nstderr: %s", code, stderr)
	}
	for _, want := range []string{"recipe-trailing-dot", "0/2"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout)
		}
	}
	code, runs, stderr := bench(t, "runs", "--db", db)
	if code != 0 || !strings.Contains(runs, "recipe-trailing-dot") || !strings.Contains(runs, "2/2") || !strings.Contains(runs, "finished") {
		t.Errorf("runs (exit %d, %s):\n%s", code, stderr, runs)
	}
	code, report, stderr := bench(t, "report", "--db", db)
	if code != 0 {
		t.Fatalf("report exit %d: %s", code, stderr)
	}
	if report != stdout {
		t.Errorf("report differs from the run's summary:\nrun:\n%s\nreport:\n%s", stdout, report)
	}
}

func TestRunStopsWhenModelIsMissing(t *testing.T) {
	srv := ollamatest.New(ollamatest.Turns(), ollamatest.WithModels("qwen3:0.6b"))
	defer srv.Close()
	db := filepath.Join(t.TempDir(), "bench.db")
	code, _, stderr := bench(t, "run", "--host", srv.URL, "--model", "qwen3:8b", "--task", recipeTask, "--db", db, "--no-pull")
	if code != exitCannotStart {
		t.Errorf("exit %d, want %d (cannot start)", code, exitCannotStart)
	}
	if strings.Contains(stderr, "results in") {
		t.Errorf("stderr %q says where results are, but nothing was stored", stderr)
	}
	if !strings.Contains(stderr, "ollama pull qwen3:8b") || !strings.Contains(stderr, "No attempt was stored") {
		t.Errorf("stderr %q should say to pull the model and that nothing ran", stderr)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("chat requests: %d, want 0 (the model check asks /api/tags and /api/show)", n)
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Errorf("a failed preflight left %s behind (%v)", db, err)
	}
}

func TestValidateExampleTask(t *testing.T) {
	code, stdout, stderr := bench(t, "validate", recipeTask)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "recipe-trailing-dot") || !strings.Contains(stdout, "1 valid") {
		t.Errorf("validate output:\n%s", stdout)
	}
}

// TestValidateSaysWhenTheCanaryGuardsNothing: hidden tests whose test
// class is defined in a module bench does not take for a test module (not
// test*.py, its base not named TestCase) cannot be instrumented for the
// canary run; validate says so of the reference solution.
func TestValidateSaysWhenTheCanaryGuardsNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "uninstrumented")
	files := map[string]string{
		"task.toml":            "format = 1\ninstruction = \"x\"\n[tests]\ncommand = \"python3 -m unittest -v checks\"\nreport = \"unittest\"\nresult = [\"answer.txt\"]\n",
		"workspace/answer.txt": "broken\n",
		"tests/base.py":        "import unittest\n\n\nclass Base(unittest.TestCase):\n    pass\n",
		"tests/checks.py":      "from base import Base\n\n\nclass C(Base):\n    def test_answer(self):\n        self.assertEqual(open(\"answer.txt\").read().strip(), \"fixed\")\n",
		"solution/solve.sh":    "echo fixed > answer.txt\n",
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, stdout, stderr := bench(t, "validate", "--record", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "ok; but no recorded test is one bench could instrument") {
		t.Errorf("validate output:\n%s", stdout)
	}
}

func TestValidateFlagsAnInvalidTask(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "always-passes")
	os.MkdirAll(filepath.Join(dir, "workspace"), 0o755)
	os.MkdirAll(filepath.Join(dir, "solution"), 0o755)
	os.WriteFile(filepath.Join(dir, "task.toml"), []byte("format = 1\ninstruction = \"x\"\n[tests]\ncommand = \"true\"\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "solution", "solve.sh"), []byte("true\n"), 0o644)
	code, stdout, _ := bench(t, "validate", dir)
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if !strings.Contains(stdout, "INVALID") || !strings.Contains(stdout, "untouched workspace passes") {
		t.Errorf("validate output:\n%s", stdout)
	}
}

func TestServerFlag(t *testing.T) {
	db := filepath.Join(t.TempDir(), "bench.db")
	code, _, stderr := bench(t, "run", "--model", "m", "--db", db, "--task", recipeTask, "--server", `name = "x", colour = "red"`)
	if code != 2 || !strings.Contains(stderr, "colour") || !strings.Contains(stderr, "--server") {
		t.Errorf("bad --server: exit %d, stderr %q; want 2 naming the flag and field", code, stderr)
	}
	code, _, stderr = bench(t, "run", "--model", "m", "--db", db, "--task", recipeTask,
		"--server", `name = "a", command = "x"`, "--server", `name = "a", command = "y"`)
	if code != 2 || !strings.Contains(stderr, "declared twice") {
		t.Errorf("two servers of one name: exit %d, stderr %q", code, stderr)
	}
}

func TestTwoArmRunReportsThePairedComparison(t *testing.T) {
	fixed, err := os.ReadFile(filepath.Join(recipeTask, "solution", "recipe.py"))
	if err != nil {
		t.Fatal(err)
	}
	// The scripted model checks with a command, then writes the fix: under
	// read-only both are denied, and the attempt fails.
	srv := ollamatest.New(ollamatest.Turns(
		ollamatest.Reply{Calls: []ollamatest.Call{{Name: "run_command", Args: map[string]any{"command": "python3 -m unittest -q"}}}},
		ollamatest.Reply{Calls: []ollamatest.Call{{Name: "write_file", Args: map[string]any{"path": "recipe.py", "content": string(fixed)}}}},
		ollamatest.Reply{Content: "done"},
	))
	defer srv.Close()
	dir := t.TempDir()
	task, _ := filepath.Abs(recipeTask)
	runFile := filepath.Join(dir, "run.toml")
	os.WriteFile(runFile, []byte(`model = "fake"
attempts = 3
[[arms]]
name = "full"
profile = "full"
[[arms]]
name = "read-only"
profile = "read-only"
`), 0o644)
	db := filepath.Join(dir, "bench.db")
	code, stdout, stderr := bench(t, "run", "--host", srv.URL, "--config", runFile, "--task", task, "--db", db, "--sandbox", "off")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"Against full, paired", "read-only", "-100.0pp", "its tools cost"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, stdout)
		}
	}
	code, js, _ := bench(t, "report", "--db", db, "--format", "json")
	if code != 0 || !strings.Contains(js, `"baseline": "full"`) {
		t.Errorf("json report (exit %d) lacks the comparison:\n%s", code, js)
	}
}

func TestServerFailingDiscoveryStopsTheRun(t *testing.T) {
	srv := ollamatest.New(ollamatest.Turns(ollamatest.Reply{Content: "ok"}))
	defer srv.Close()
	db := filepath.Join(t.TempDir(), "bench.db")
	code, _, stderr := bench(t, "run", "--host", srv.URL, "--model", "fake", "--task", recipeTask, "--db", db,
		"--server", `name = "broken", command = "sh", args = ["-c", "echo 'cannot open the index' >&2; exit 1"], default_class = "read"`)
	if code != exitCannotStart {
		t.Errorf("exit %d, want %d (cannot start)", code, exitCannotStart)
	}
	for _, want := range []string{"broken", "cannot open the index", "No attempt was stored"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	for _, r := range srv.Requests() {
		if r.Options["seed"] != nil {
			t.Fatalf("an attempt ran")
		}
	}
}

// TestRefusesWithoutIsolation: without bubblewrap, run and validate stop
// before anything runs, say how to install it or how to go on unisolated,
// and leave no database behind; they never fall back on their own.
func TestRefusesWithoutIsolation(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no bwrap, no prlimit
	db := filepath.Join(t.TempDir(), "bench.db")
	for _, args := range [][]string{
		{"run", "--model", "fake", "--host", "http://127.0.0.1:1", "--task", recipeTask, "--db", db},
		{"run", "--model", "fake", "--host", "http://127.0.0.1:1", "--task", recipeTask, "--db", db, "--sandbox", "auto"},
		{"validate", recipeTask},
	} {
		code, _, stderr := bench(t, args...)
		if code == 0 || !strings.Contains(stderr, "apt-get install bubblewrap") || !strings.Contains(stderr, "--sandbox off") {
			t.Errorf("%v: exit %d, stderr %q; want a refusal that says how to install bubblewrap or pass --sandbox off", args, code, stderr)
		}
	}
	if _, err := os.Stat(db); err == nil {
		t.Error("a refused run left a database behind")
	}
}
