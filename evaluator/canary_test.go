package evaluator_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchhq/bench/evaluator"
	"github.com/benchhq/bench/internal/sandboxtest"
	"github.com/benchhq/bench/tasks"
)

// indent indents Python source by four spaces.
func indent(src string) string {
	lines := strings.Split(strings.TrimRight(src, "\n"), "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = "    " + l
		}
	}
	return strings.Join(lines, "\n")
}

// copyTree copies the example task src to a new folder for a test to edit.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestCanaryCatchesForgedReports: code under test that makes the test
// process forge its report or its exit status scores 0 because of bench's
// canary test; a correct solution, and a failing one, are scored as their
// tests say. With canary = false the same forgeries are rewarded, which is
// what shows the canary is what stops them.
func TestCanaryCatchesForgedReports(t *testing.T) {
	src := filepath.Join("..", "tasks", "suites", "examples", "recipe-trailing-dot")
	read := func(rel string) string {
		b, err := os.ReadFile(filepath.Join(src, rel))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	orig, sol := read("workspace/recipe.py"), read("solution/recipe.py")
	const (
		// Every test method returns without running its body.
		patchRunner = "import unittest as _u\n_u.TestCase._callTestMethod = lambda self, method: None\n\n"
		// The tests fail, and the process exits 0 after them.
		atexitExit = "\n\nimport atexit as _a, os as _o\n_a.register(_o._exit, 0)\n"
	)
	// At import, print a complete passing report of the hidden tests'
	// names (read from the test module beside it) and exit 0.
	forge := `
import os as _o, re as _re, sys as _s
_src = open("test_recipe_hidden.py").read()
_names = _re.findall(r"def (test_\w+)", _src)
for _n in _names:
    _s.stderr.write("%s (test_recipe_hidden.HiddenRecipeTest.%s) ... ok\n" % (_n, _n))
_s.stderr.write("\n----------------------------------------------------------------------\nRan %d tests in 0.001s\n\nOK\n" % len(_names))
_s.stderr.flush()
_o._exit(0)
`
	// Forgers that tell the canary run from the first by bench's code in
	// the test module, then forge only in the first: in the canary run
	// they exit at once, hang, or let the tests run for real.
	knows := func(then string) string {
		return "import re as _re2\nif '_bench_instrument_' in open('test_recipe_hidden.py').read():\n" + then + "else:\n" + indent(forge) + "\n"
	}
	// Runs only the bodies of test classes it takes for bench's (here:
	// none, as bench plants no class), passes every other test.
	runsOnlyBenchs := "import unittest as _u, re as _r\n_oc = _u.TestCase._callTestMethod\n" +
		"def _c(self, m):\n    if _r.fullmatch(r'TestZ[0-9a-f]{12}', type(self).__name__):\n        return _oc(self, m)\n" +
		"_u.TestCase._callTestMethod = _c\n\n"
	// Neuters the one assertion method the hidden tests use most.
	equalNoop := "import unittest as _u\n_u.TestCase.assertEqual = lambda *a, **k: None\n\n"
	const assertNoop = "import unittest as _u\nfor _n in dir(_u.TestCase):\n    if _n.startswith('assert'):\n        setattr(_u.TestCase, _n, lambda *a, **k: None)\n\n"
	sb := sandboxtest.New(t)
	tests := []struct {
		name     string
		recipe   string
		command  string // instead of the task's
		noCanary bool
		timeout  time.Duration // instead of the task's
		timedOut bool
		passed   bool
		want     string // in the output bench keeps
		forged   bool   // a report problem, not failed tests
	}{
		{name: "the solution", recipe: sol, passed: true, want: "failed as planted"},
		{name: "the untouched workspace", recipe: orig, want: "FAIL"},
		{name: "a module that does not import", recipe: "this is not python\n", want: `no "Ran N tests" line`, forged: true},
		{name: "a report printed at import", recipe: forge + orig, want: "was reported as pass", forged: true},
		{name: "unittest patched so no body runs", recipe: patchRunner + orig, want: "was reported as pass", forged: true},
		{name: "every assert method patched to do nothing", recipe: assertNoop + orig, want: "was reported as pass", forged: true},
		{name: "assertEqual patched to do nothing", recipe: equalNoop + orig, want: "was reported as pass", forged: true},
		{name: "the bodies of tests named like bench's old canary run, others skipped", recipe: runsOnlyBenchs + orig, want: "was reported as pass", forged: true},
		{name: "exit 0 forced after failing tests", recipe: orig + atexitExit, want: "FAIL"},
		{name: "the solution, exit 0 forced: still the solution", recipe: sol + atexitExit, passed: true, want: "failed as planted"},
		{name: "a command that runs one class: its tests are instrumented too", recipe: sol,
			command: "python3 -m unittest -v test_recipe_hidden.HiddenRecipeTest", passed: true, want: "failed as planted"},
		{name: "a forger that exits at once in the canary run", recipe: knows("    import os; os._exit(0)\n") + orig, want: "canary run's report could not be read", forged: true},
		{name: "a forger that hangs in the canary run", recipe: knows("    import time; time.sleep(600)\n") + orig, timeout: 3 * time.Second, want: "ran past the timeout", timedOut: true},
		{name: "a forger that lets the tests run for real in the canary run", recipe: knows("    pass\n") + orig, want: "without the message bench gave it", forged: true},
		{name: "no canary: a report printed at import", recipe: forge + orig, noCanary: true, passed: true},
		{name: "no canary: unittest patched", recipe: patchRunner + orig, noCanary: true, passed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := copyTree(t, src)
			if tt.noCanary {
				toml := filepath.Join(dir, "task.toml")
				b, _ := os.ReadFile(toml)
				b = []byte(strings.Replace(string(b), `report = "unittest"`, "report = \"unittest\"\ncanary = false", 1))
				if err := os.WriteFile(toml, b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			task, err := tasks.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			if tt.noCanary && task.Tests.CanaryOr() {
				t.Fatal("canary = false was not read")
			}
			if tt.command != "" {
				task.Tests.Command = tt.command
			}
			if tt.timeout != 0 {
				task.Tests.Timeout = tasks.Duration{Duration: tt.timeout}
			}
			ws := t.TempDir()
			if err := task.CopyWorkspace(ws); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(ws, "recipe.py"), []byte(tt.recipe), 0o644); err != nil {
				t.Fatal(err)
			}
			scorer := &evaluator.Scorer{Sandbox: sb, TempDir: t.TempDir()}
			res, err := scorer.Score(context.Background(), task, ws)
			if err != nil {
				t.Fatal(err)
			}
			if res.Passed != tt.passed {
				t.Errorf("passed = %v, want %v; report error %q\n%s", res.Passed, tt.passed, res.ReportError, res.Output)
			}
			if !strings.Contains(res.Output, tt.want) {
				t.Errorf("output lacks %q:\n%s", tt.want, res.Output)
			}
			if res.TimedOut != tt.timedOut {
				t.Errorf("timed out = %v, want %v", res.TimedOut, tt.timedOut)
			}
			if forged := res.ReportError != ""; forged != tt.forged {
				t.Errorf("report error %q; want one: %v", res.ReportError, tt.forged)
			}
			for _, c := range res.Cases {
				if strings.Contains(c.ID, "_bench_") {
					t.Errorf("bench's %s is among the stored test cases", c.ID)
				}
			}
		})
	}
}
