package evaluator

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/benchhq/bench/evaluator/testreport"
	"github.com/benchhq/bench/tasks"
)

// A canary is a test of bench's that must fail. Code under test runs in
// the test process and can make that process report anything: patch the
// test framework so that every test passes, or print a passing report of
// the tests it finds and exit 0. When the hidden tests pass, bench runs
// them once more in a fresh scoring folder with canaries planted beside
// them; a forgery of that kind reports the canaries as passing too. A
// canary reported as passing, or failing without the message bench gave
// it, scores the attempt 0.
//
// The first run is the verdict as the task defines it (exit 0, every
// recorded test passed), untouched by bench's tests; the canary run only
// tells a real report from a forged one, so its exit status and its other
// tests do not count, and a command that never reaches a canary (one that
// runs part of the test modules) leaves the verdict as it was.
//
// Canaries are planted for the report forms whose tests bench can write:
// a Go test function in each folder of tests/ that holds Go tests
// (go-test-json), a unittest class in each Python test module (unittest),
// whose methods fail through several assertion methods, so that patching
// one of them does not hide the rest.
type canary struct {
	// token names the canaries (their file, function, class and methods)
	// in this run only, and nonce is the text every canary failure must
	// hold; both are random, and written into the canaries' source, so
	// that the run does not say by a fixed name or variable that it is
	// the canary run.
	token, nonce string
}

// newCanary is a canary with fresh names and message.
func newCanary() *canary {
	return &canary{token: randomHex(6), nonce: randomHex(8)}
}

// Go test functions start with Test and a character that is not a lower
// case letter; Python test methods with test.
func (c *canary) goFile() string   { return "zz" + c.token + "_test.go" }
func (c *canary) goTest() string   { return "TestZ" + c.token }
func (c *canary) pyClass() string  { return "TestZ" + c.token }
func (c *canary) pyMethod() string { return "test_z" + c.token + "_" }

// py is the unittest class planted in Python test modules: each method
// fails through another means, with the message.
func (c *canary) py() string {
	return strings.NewReplacer("CLASS", c.pyClass(), "METHOD_", c.pyMethod(), "NONCE", c.nonce).Replace(`

class CLASS(__import__("unittest").TestCase):
    _m = "NONCE"

    def METHOD_fail(self):
        self.fail(self._m)

    def METHOD_equal(self):
        self.assertEqual(self._m, self._m + "!", self._m)

    def METHOD_true(self):
        self.assertTrue(False, self._m)

    def METHOD_in(self):
        self.assertIn("!", self._m, self._m)

    def METHOD_raises(self):
        with self.assertRaises(ZeroDivisionError, msg=self._m):
            pass

    def METHOD_raise(self):
        raise AssertionError(self._m)

`)
}

// goSrc is the Go test file planted beside Go tests, in package pkg.
func (c *canary) goSrc(pkg string) string {
	return fmt.Sprintf("package %s\n\nimport \"testing\"\n\nfunc %s(t *testing.T) { t.Fatal(%q) }\n", pkg, c.goTest(), c.nonce)
}

// canaryForm reports whether bench can write canaries for a report form.
func canaryForm(report string) bool {
	return report == tasks.ReportGoTestJSON || report == tasks.ReportUnittest
}

// plantCanary adds canaries to the hidden tests copied into work, for the
// test files of the task's tests/. It returns nil when the task's report
// form takes none, or when tests/ holds no test file to put one beside.
func plantCanary(t *tasks.Task, work string) (*canary, error) {
	c := newCanary()
	var plant func(rel string) (bool, error)
	switch t.Tests.Report {
	case tasks.ReportGoTestJSON:
		plant = func(rel string) (bool, error) { return c.plantGo(work, rel) }
	case tasks.ReportUnittest:
		plant = func(rel string) (bool, error) { return c.plantPy(work, rel) }
	default:
		return nil, nil
	}
	planted := false
	done := map[string]bool{}
	err := filepath.WalkDir(t.TestsDir(), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(t.TestsDir(), p)
		if d.IsDir() {
			// Folders the tools skip: Go's testdata, _x and .x; caches.
			if n := d.Name(); rel != "." && (n == "testdata" || n == "__pycache__" || strings.HasPrefix(n, "_") || strings.HasPrefix(n, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		// Go: one file per folder.
		if t.Tests.Report == tasks.ReportGoTestJSON {
			if dir := filepath.Dir(rel); !strings.HasSuffix(rel, "_test.go") || done[dir] {
				return nil
			} else {
				done[dir] = true
			}
		}
		ok, err := plant(rel)
		planted = planted || ok
		return err
	})
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil // no tests/
		}
		return nil, fmt.Errorf("plant bench's canary tests: %w", err)
	}
	if !planted {
		return nil, nil
	}
	return c, nil
}

// plantGo writes the canary file into the folder of rel, a Go test file,
// in its package: the external test package (x_test) when the folder has
// one, whose tests run after the others. Files with build constraints do
// not say the package.
func (c *canary) plantGo(work, rel string) (bool, error) {
	dir := filepath.Join(work, filepath.Dir(rel))
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		return false, err
	}
	var pkgs []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return false, err
		}
		if pkg := goPackage(b); pkg != "" {
			pkgs = append(pkgs, pkg)
		}
	}
	if len(pkgs) == 0 {
		return false, nil
	}
	pkg := pkgs[0]
	for _, p := range pkgs {
		if strings.HasSuffix(p, "_test") {
			pkg = p
		}
	}
	return true, os.WriteFile(filepath.Join(dir, c.goFile()), []byte(c.goSrc(pkg)), 0o644)
}

// plantPy adds the canary class to rel, when it is a Python test module:
// named test*.py (unittest's discovery) or defining a TestCase class. It
// goes before a top-level `if __name__ == "__main__":`, so that a module
// run as a script (unittest.main() at its end) defines it too.
func (c *canary) plantPy(work, rel string) (bool, error) {
	if !strings.HasSuffix(rel, ".py") {
		return false, nil
	}
	p := filepath.Join(work, rel)
	b, err := os.ReadFile(p)
	if err != nil {
		return false, err
	}
	if !strings.HasPrefix(filepath.Base(rel), "test") && !pyTestCase.Match(b) {
		return false, nil
	}
	at := len(b)
	if m := pyMain.FindIndex(b); m != nil {
		at = m[0]
	}
	src := slices.Concat(b[:at:at], []byte(c.py()), b[at:])
	return true, os.WriteFile(p, src, 0o644)
}

var (
	pyTestCase = regexp.MustCompile(`(?m)^class\s+\w+\s*\([^)]*TestCase[^)]*\)\s*:`)
	pyMain     = regexp.MustCompile(`(?m)^if\s+__name__\s*==\s*["']__main__["']\s*:`)
)

// goPackage reads the package clause of a Go file; "" for a file with a
// build constraint, which may not be built.
func goPackage(src []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(src))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "//go:build") || strings.HasPrefix(line, "// +build") {
			return ""
		}
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "package" {
			return f[1]
		}
	}
	return ""
}

// is reports whether a reported test is a canary.
func (c *canary) is(id string) bool {
	name := id
	if i := strings.LastIndex(name, "::"); i >= 0 {
		name = name[i+2:]
	}
	if i := strings.LastIndex(name, "."); i >= 0 {
		name = name[i+1:]
	}
	return name == c.goTest() || strings.HasPrefix(name, c.pyMethod())
}

// check reads the canary run's report: it says whether a canary was
// reported at all, and what is wrong with one that was ("" when every
// reported canary failed with bench's message).
func (c *canary) check(cases []testreport.Case) (seen bool, problem string) {
	for _, k := range cases {
		if !c.is(k.ID) {
			continue
		}
		seen = true
		if k.Outcome != testreport.Fail {
			return true, fmt.Sprintf("bench's canary test %s, which must fail, was reported as %s: the test run was tampered with", k.ID, k.Outcome)
		}
		if !strings.Contains(k.Message, c.nonce) {
			return true, fmt.Sprintf("bench's canary test %s failed without the message bench gave it: the test run was tampered with", k.ID)
		}
	}
	return seen, ""
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
