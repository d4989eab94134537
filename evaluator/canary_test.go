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
	src := filepath.Join("..", "tasks", "testdata", "in-process", "recipe-trailing-dot")
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

// TestCanaryRunOnTestPatterns: forgers that work below the assertion
// methods score 0, and correct solutions under test patterns the canary
// run's instrumentation must not break score 1.
func TestCanaryRunOnTestPatterns(t *testing.T) {
	src := filepath.Join("..", "tasks", "testdata", "in-process", "recipe-trailing-dot")
	rd := func(rel string) string {
		b, err := os.ReadFile(filepath.Join(src, rel))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	orig, sol := rd("workspace/recipe.py"), rd("solution/recipe.py")
	hidden := rd("tests/test_recipe_hidden.py")
	// F1: generic forger below the checked methods: no-op the innermost
	// (unwrapped) test function's code, leave bench's wrapper to raise.
	unwrap := "import unittest as _u, inspect as _i\n_oc = _u.TestCase._callTestMethod\n" +
		"def _c(self, m):\n    _i.unwrap(m.__func__).__code__ = (lambda self, *a, **k: None).__code__\n    return _oc(self, m)\n" +
		"_u.TestCase._callTestMethod = _c\n\n"
	// F2: neuter the type-specific equality funcs (set in __init__, unchecked).
	typeEq := "import unittest as _u\n_oi = _u.TestCase.__init__\n" +
		"def _i(self, *a, **k):\n    _oi(self, *a, **k)\n    for _t in (list, dict, tuple, set, frozenset, str):\n        self._type_equality_funcs[_t] = lambda *a, **k: None\n" +
		"_u.TestCase.__init__ = _i\n\n"
	// F3: assertEqual replaced by a descriptor whose bound object carries
	// the original as __func__.
	desc := "import unittest as _u\n_orig = _u.TestCase.assertEqual\n" +
		"class _B:\n    __func__ = _orig\n    def __call__(self, *a, **k): pass\n" +
		"class _D:\n    def __get__(self, obj, typ=None): return _B()\n" +
		"_u.TestCase.assertEqual = _D()\n\n"
	// Z1: a correct solution that prints a lot, with -b.
	chatty := sol + "\n_oi = ingredients\ndef ingredients(text):\n    print('x' * 3000)\n    return _oi(text)\n"
	// Z2: a hidden test class overriding assertEqual legitimately.
	override := strings.Replace(hidden, "class HiddenRecipeTest(unittest.TestCase):\n",
		"class HiddenRecipeTest(unittest.TestCase):\n    def assertEqual(self, a, b, msg=None):\n        super().assertEqual(a, b, msg)\n\n", 1)
	// Z4: class-level expectedFailure with a test that fails as expected.
	xfail := hidden + "\n\n@unittest.expectedFailure\nclass HiddenXfail(unittest.TestCase):\n    def test_known(self):\n        self.assertEqual(1, 2)\n"
	// A hidden test class named like a class of the workspace's own tests,
	// both run: the workspace's is not instrumented, and must not be
	// required to fail.
	sameName := strings.Replace(hidden, "class HiddenRecipeTest(", "class RecipeTest(", 1)
	// Z5: a __main__ guard not matched by the regex, run as a script.
	guard := strings.Replace(hidden, `if __name__ == "__main__":`, `if (__name__ == "__main__"):`, 1)
	sb := sandboxtest.New(t)
	cases := []struct {
		name, recipe, tests, command string
		want                         bool
	}{
		{"test bodies swapped for no-ops below bench's wrapper", unwrap + orig, "", "", false},
		{"the type-specific equality functions made no-ops", typeEq + orig, "", "", false},
		{"assertEqual replaced by a descriptor that shows the original", desc + orig, "", "", false},
		{"a correct solution that prints a lot, run with -b", chatty, "", "python3 -m unittest -v -b test_recipe_hidden", true},
		{"a hidden test class that overrides assertEqual", sol, override, "", true},
		{"a class marked expectedFailure", sol, xfail, "", true},
		{"a module run as a script, its main guard in parentheses", sol, guard, "python3 test_recipe_hidden.py -v", true},
		{"a hidden class named like one of the workspace's tests", sol, sameName, "python3 -m unittest -v test_recipe test_recipe_hidden", true},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			dir := copyTree(t, src)
			if tt.tests != "" {
				if err := os.WriteFile(filepath.Join(dir, "tests", "test_recipe_hidden.py"), []byte(tt.tests), 0o644); err != nil {
					t.Fatal(err)
				}
				// No record: the tests the first run passed are the record.
				if err := os.Remove(filepath.Join(dir, "recorded-tests.json")); err != nil {
					t.Fatal(err)
				}
			}
			task, err := tasks.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			if tt.command != "" {
				task.Tests.Command = tt.command
			}
			ws := t.TempDir()
			if err := task.CopyWorkspace(ws); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(ws, "recipe.py"), []byte(tt.recipe), 0o644); err != nil {
				t.Fatal(err)
			}
			res, err := (&evaluator.Scorer{Sandbox: sb, TempDir: t.TempDir()}).Score(context.Background(), task, ws)
			if err != nil {
				t.Fatal(err)
			}
			if res.Passed != tt.want {
				t.Errorf("passed = %v, want %v; report error %q\n%s", res.Passed, tt.want, res.ReportError, res.Output)
			}
			if tt.want && !strings.Contains(res.Output, "failed as planted") {
				t.Errorf("no canary run:\n%s", res.Output)
			}
		})
	}
}
