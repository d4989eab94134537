package evaluator

import (
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

// A canary run tells a real test report from a forged one. Code under
// test runs in the test process and can make that process report
// anything: patch the test framework so that every test passes, or print
// a passing report of the tests it finds and exit 0. When the hidden
// tests pass, bench runs them once more in a fresh scoring folder, every
// test of theirs instrumented so that, once its own body has passed, it
// fails with a message bench chose at random. In that run every recorded
// test must be reported failed with that message: a forgery that reports
// passes is caught, and so is one that lets the tests run for real (a
// wrong solution fails them with other messages). No extra test is
// planted, so there is none to recognise and let fail. Code written
// against bench can still forge the canary run: read bench's message
// (from the test files, or the process's memory) and report every test
// failing with it, or patch what the Python wrapper does not check.
//
// The first run is the verdict as the task defines it (exit 0, every
// recorded test passed); the canary run's exit status does not count.
//
// Tests are instrumented for the report forms bench can write code for:
// the Go test functions of tests/ (go-test-json), the unittest test
// methods of Python test modules (unittest).
type canary struct {
	// nonce is the message of every instrumented test's failure.
	nonce string
	// form is the task's report form.
	form string
	// goTests are the instrumented Go test functions, by package (its
	// import path, as go test -json names it: the module's path, from the
	// scoring folder's go.mod, and the folder) and name:
	// "example.com/m/sub::TestX".
	goTests map[string]bool
	// goModule is that module path ("" without a go.mod: then functions
	// are known by name alone).
	goModule string
	// pyClasses are the classes of the instrumented Python modules, by
	// module file name and class ("test_parse.ParseTest"): a
	// recorded test of one of them must fail with the nonce.
	pyClasses map[string]bool
}

// canaryForm reports whether bench can instrument tests of a report form.
func canaryForm(report string) bool {
	return report == tasks.ReportGoTestJSON || report == tasks.ReportUnittest
}

// goTestFunc finds a top-level Go test function and the name of its
// *testing.T parameter, at the brace that opens its body.
var goTestFunc = regexp.MustCompile(`(?m)^func (Test(?:[^a-z(]\w*)?)\((\w+) \*testing\.T\) \{`)

// pyTestCase finds a class that derives from a TestCase; pyClass any
// top-level class with bases; pyMain where a module run as a script runs
// its tests (`if __name__ == "__main__":`, a bare unittest.main()).
var (
	pyTestCase = regexp.MustCompile(`(?m)^class\s+\w+\s*\([^)]*TestCase[^)]*\)\s*:`)
	pyClass    = regexp.MustCompile(`(?m)^class\s+(\w+)\s*\(([^)]*)\)\s*:`)
	pyMain     = regexp.MustCompile(`(?m)^(?:if[\s(]+__name__\s*==\s*["']__main__["']|(?:unittest\.)?main\s*\()`)
)

// plantCanary instruments the hidden tests copied into work, those of the
// task's tests/. It returns nil when the task's report form takes none,
// or when tests/ holds no test bench could instrument.
func plantCanary(t *tasks.Task, work string) (*canary, error) {
	if !canaryForm(t.Tests.Report) {
		return nil, nil
	}
	c := &canary{nonce: "bench-canary-" + randomHex(8), form: t.Tests.Report, goTests: map[string]bool{}, pyClasses: map[string]bool{},
		goModule: goModulePath(filepath.Join(work, "go.mod"))}
	// The hidden tests as this scoring run copied them (the task's
	// snapshot), not its folder as it is now.
	tests, err := t.TestsFS()
	if err != nil {
		return nil, fmt.Errorf("instrument the hidden tests for the canary run: %w", err)
	}
	err = fs.WalkDir(tests, ".", func(rel string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel = filepath.FromSlash(rel)
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
		// The source is the snapshot's, which the copy in work was just
		// written from: nothing is read back from disk.
		src := func() ([]byte, error) { return fs.ReadFile(tests, filepath.ToSlash(rel)) }
		if c.form == tasks.ReportGoTestJSON {
			return c.instrumentGo(filepath.Join(work, rel), c.goPackage(filepath.Dir(rel)), src)
		}
		return c.instrumentPy(filepath.Join(work, rel), src)
	})
	if err != nil {
		return nil, fmt.Errorf("instrument the hidden tests for the canary run: %w", err)
	}
	if len(c.goTests) == 0 && len(c.pyClasses) == 0 {
		return nil, nil
	}
	return c, nil
}

// instrumentGo makes each test function of the Go test file p (whose
// content read gives) fail with the nonce once its body passed: a cleanup
// registered first, which runs last.
func (c *canary) instrumentGo(p, pkg string, read func() ([]byte, error)) error {
	if !strings.HasSuffix(p, "_test.go") {
		return nil
	}
	src, err := read()
	if err != nil {
		return err
	}
	if !goTestFunc.Match(src) {
		return nil
	}
	out := goTestFunc.ReplaceAllFunc(src, func(m []byte) []byte {
		sub := goTestFunc.FindSubmatch(m)
		name, v := string(sub[1]), string(sub[2])
		if v == "_" {
			return m
		}
		c.goTests[pkg+name] = true
		return fmt.Appendf(slices.Clone(m), " %s.Cleanup(func() {\n\t\tif !%s.Failed() && !%s.Skipped() {\n\t\t\t%s.Error(%q)\n\t\t}\n\t});", v, v, v, v, c.nonce)
	})
	return os.WriteFile(p, out, 0o644)
}

// pyWrap is added to a Python test module (before its `if __name__ ==
// "__main__":` and at its end): it replaces each test method of the
// module's TestCase
// classes by one that runs it and, when it passed, fails with NONCE. A
// test expected to fail fails with NONCE when it did fail, as expected.
// The failure is raised directly, so a framework patched to swallow
// failures swallows it too (the test is then reported as passing); and
// before raising it the wrapper checks that the assertion methods the
// test ran with are unittest's own, compared with a copy of
// unittest/case.py loaded afresh: a test whose assertions were made to do
// nothing passes, and is caught the same way.
const pyWrap = `

def _bench_instrument_TOKEN():
    import importlib.util, inspect, types, unittest, unittest.case
    live = unittest.case
    spec = importlib.util.spec_from_file_location("_bench_case_TOKEN", live.__file__)
    pristine = importlib.util.module_from_spec(spec)
    pristine.__package__ = "unittest"
    spec.loader.exec_module(pristine)
    here = __file__
    checked = [n for n, v in vars(pristine.TestCase).items() if inspect.isfunction(v) and
               (n.startswith(("assert", "fail", "_base", "_getAssert")) or
                n in ("__init__", "addTypeEqualityFunc", "_formatMessage", "_truncateMessage", "_callTestMethod", "run"))]
    helpers = ("_AssertRaisesBaseContext", "_AssertRaisesContext", "_AssertWarnsContext", "_AssertLogsContext", "_Outcome")
    defaults = {}
    def same(fn, orig):
        if not (inspect.isfunction(fn) and fn.__code__ == orig.__code__ and fn.__defaults__ == orig.__defaults__):
            return False
        if fn.__globals__ is not (live.__dict__ if orig.__globals__ is pristine.__dict__ else orig.__globals__):
            return False
        inner = getattr(orig, "__wrapped__", None)  # a contextmanager's generator
        return inner is None or same(getattr(fn, "__wrapped__", None), inner)
    def intact(self):
        # The assertion methods the test ran with: unittest's own, or the
        # test module's overrides; their helpers unittest's own.
        for n in checked:
            for k in type(self).__mro__:
                if n in vars(k):
                    break
            fn = inspect.getattr_static(k, n)
            if n in vars(self):
                return False
            if k is live.TestCase:
                if not same(fn, getattr(pristine.TestCase, n)):
                    return False
            elif not (inspect.isfunction(fn) and fn.__code__.co_filename == here):
                return False
        for h in helpers:
            for n, v in vars(getattr(pristine, h, object)).items():
                if inspect.isfunction(v) and not same(vars(getattr(live, h)).get(n), v):
                    return False
        if type(self).failureException is not AssertionError:
            return False
        for t, f in getattr(self, "_type_equality_funcs", {}).items():
            if not (isinstance(f, str) and f in checked):
                return False
        return True
    def wrap(f, expect):
        expect = expect or getattr(f, "__unittest_expecting_failure__", False)
        body = (f.__code__, f.__globals__, f.__closure__, f.__defaults__)
        def done(self, failed):
            if (f.__code__, f.__globals__, f.__closure__, f.__defaults__) != body:
                return
            if expect and not failed:
                raise AssertionError("unexpected success")
            if intact(self):
                raise AssertionError("NONCE")
        if inspect.iscoroutinefunction(f):
            async def w(self, *a, **k):
                try:
                    await f(self, *a, **k)
                except unittest.SkipTest:
                    raise
                except BaseException:
                    if not expect:
                        raise
                    done(self, True)
                done(self, False)
        else:
            def w(self, *a, **k):
                try:
                    f(self, *a, **k)
                except unittest.SkipTest:
                    raise
                except BaseException:
                    if not expect:
                        raise
                    done(self, True)
                done(self, False)
        w.__name__, w.__qualname__, w.__doc__, w.__module__ = f.__name__, f.__qualname__, f.__doc__, f.__module__
        w.__dict__.update(f.__dict__)
        w.__unittest_expecting_failure__ = False
        w._bench_TOKEN = True
        return w
    loader = unittest.TestLoader()
    for c in list(globals().values()):
        if not (isinstance(c, type) and issubclass(c, unittest.TestCase)):
            continue
        expect = getattr(c, "__unittest_expecting_failure__", False)
        if expect:
            c.__unittest_expecting_failure__ = False
        for n in loader.getTestCaseNames(c):
            f = inspect.getattr_static(c, n, None)
            if inspect.isfunction(f) and not getattr(f, "_bench_TOKEN", False):
                setattr(c, n, wrap(f, expect))


_bench_instrument_TOKEN()
del _bench_instrument_TOKEN

`

// instrumentPy instruments p (whose content read gives) when it is a
// Python test module: named test*.py (unittest's discovery) or defining a
// TestCase class.
func (c *canary) instrumentPy(p string, read func() ([]byte, error)) error {
	if !strings.HasSuffix(p, ".py") {
		return nil
	}
	b, err := read()
	if err != nil {
		return err
	}
	if !strings.HasPrefix(filepath.Base(p), "test") && !pyTestCase.Match(b) {
		return nil
	}
	// Its test classes: those that derive from a TestCase, or from
	// another of its test classes.
	classes := pyClass.FindAllSubmatch(b, -1)
	tests := map[string]bool{}
	for grew := true; grew; {
		grew = false
		for _, m := range classes {
			name := string(m[1])
			if tests[name] {
				continue
			}
			for _, base := range strings.Split(string(m[2]), ",") {
				base = strings.TrimSpace(base)
				if strings.HasSuffix(base, "TestCase") || tests[base] {
					tests[name], grew = true, true
					break
				}
			}
		}
	}
	if len(tests) == 0 {
		return nil
	}
	for name := range tests {
		c.pyClasses[strings.TrimSuffix(filepath.Base(p), ".py")+"."+name] = true
	}
	// Before a main guard (a module run as a script runs its tests
	// there), and at the end, for classes defined after it.
	code := func() []byte {
		return []byte(strings.NewReplacer("TOKEN", randomHex(4), "NONCE", c.nonce).Replace(pyWrap))
	}
	src := slices.Concat(b, code())
	if m := pyMain.FindIndex(b); m != nil {
		src = slices.Concat(b[:m[0]:m[0]], code(), b[m[0]:], code())
	}
	return os.WriteFile(p, src, 0o644)
}

// required reports whether a recorded test must fail with the nonce in
// the canary run: a top-level Go test bench instrumented, or a unittest
// test of a class of an instrumented module.
func (c *canary) required(id string) bool {
	switch c.form {
	case tasks.ReportGoTestJSON:
		pkg, name, ok := strings.Cut(id, "::")
		if c.goModule == "" {
			pkg = ""
		} else {
			pkg += "::"
		}
		return ok && !strings.Contains(name, "/") && c.goTests[pkg+name]
	case tasks.ReportUnittest:
		parts := strings.Split(id, ".")
		if len(parts) < 3 {
			return false
		}
		module, class := parts[len(parts)-3], parts[len(parts)-2]
		if module != "__main__" {
			return c.pyClasses[module+"."+class]
		}
		// A module run as a script: its tests are __main__'s.
		for k := range c.pyClasses {
			if strings.HasSuffix(k, "."+class) {
				return true
			}
		}
		return false
	}
	return false
}

// check reads the canary run's report against the recorded tests and the
// first run's report: every recorded test bench instrumented must be
// reported failed with the nonce (or skipped, as it was in the first
// run). It returns what is wrong ("" when nothing is), whether that is
// only tests missing from the report (as in a run cut short), and how
// many tests it checked.
func (c *canary) check(first, cases []testreport.Case, recorded []string) (problem string, missing bool, checked int) {
	got := make(map[string]testreport.Case, len(cases))
	for _, k := range cases {
		got[k.ID] = k
	}
	skipped := map[string]bool{}
	for _, k := range first {
		if k.Outcome == testreport.Skip {
			skipped[k.ID] = true
		}
	}
	for _, id := range recorded {
		if !c.required(id) {
			continue
		}
		checked++
		k, ok := got[id]
		switch {
		case !ok:
			if problem == "" {
				problem, missing = fmt.Sprintf("the recorded test %s is missing from the canary run's report (the same tests, each instrumented to fail once it passed): the test run was tampered with", id), true
			}
		case k.Outcome == testreport.Skip && skipped[id]:
		case k.Outcome != testreport.Fail:
			return fmt.Sprintf("the recorded test %s, instrumented by bench to fail once it passed, was reported as %s in the canary run: the test run was tampered with", id, k.Outcome), false, checked
		case !strings.Contains(k.Message, c.nonce):
			return fmt.Sprintf("the recorded test %s failed in the canary run without the message bench gave it (so its own body failed, or the report was forged): the test run was tampered with", id), false, checked
		}
	}
	return problem, missing, checked
}

// goPackage is the key prefix of the Go tests of folder dir (relative,
// of the scoring folder): "import/path::", or "" without a module path.
func (c *canary) goPackage(dir string) string {
	if c.goModule == "" {
		return ""
	}
	if dir == "." {
		return c.goModule + "::"
	}
	return c.goModule + "/" + filepath.ToSlash(dir) + "::"
}

// goModulePath reads the module path of a go.mod ("" when there is none).
func goModulePath(p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`)
		}
	}
	return ""
}

// randomHex is n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
