package tasks

import (
	"cmp"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// validate checks the [tests] table beyond its command.
func (t Tests) validate(file string) error {
	switch t.Report {
	case "", ReportGoTestJSON, ReportUnittest, ReportTAP:
		if t.ReportFile != "" {
			return &FieldError{File: file, Field: "tests.report_file", Msg: fmt.Sprintf("only a %q report is read from a file; set report = %q or drop report_file", ReportJUnit, ReportJUnit)}
		}
	case ReportJUnit:
		if t.ReportFile == "" {
			return &FieldError{File: file, Field: "tests.report_file", Msg: "missing: the JUnit XML file the test command writes, relative to the scoring folder (e.g. \"report.xml\")"}
		}
		if msg := relPathProblem(t.ReportFile); msg != "" {
			return &FieldError{File: file, Field: "tests.report_file", Msg: msg}
		}
	default:
		return &FieldError{File: file, Field: "tests.report", Msg: fmt.Sprintf("expected %q, %q, %q or %q, got %q", ReportGoTestJSON, ReportJUnit, ReportUnittest, ReportTAP, t.Report)}
	}
	for i, g := range t.Result {
		if msg := CheckGlob(g); msg != "" {
			return &FieldError{File: file, Field: fmt.Sprintf("tests.result[%d]", i), Msg: msg}
		}
	}
	for k := range t.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return &FieldError{File: file, Field: "tests.env", Msg: fmt.Sprintf("%q is not a variable name", k)}
		}
		if k == "HOME" || k == "PATH" {
			return &FieldError{File: file, Field: "tests.env." + k, Msg: "is set by bench (a fresh HOME, the system PATH); it cannot be overridden"}
		}
	}
	return nil
}

// relPathProblem says what is wrong with a path that must stay inside a
// folder, or "".
func relPathProblem(p string) string {
	if filepath.IsAbs(p) {
		return fmt.Sprintf("%q: expected a path relative to the scoring folder", p)
	}
	for _, s := range strings.Split(filepath.ToSlash(p), "/") {
		if s == ".." {
			return fmt.Sprintf("%q: the path must stay inside the scoring folder", p)
		}
	}
	return ""
}

// Why a changed file of an attempt is not carried into scoring.
const (
	LeftOutNotResult = "not in [tests] result"
	LeftOutDotFile   = "a dot-file or in a dot-folder"
	LeftOutCache     = "a cache or bytecode"
	LeftOutPth       = "a Python path configuration file (.pth)"
	LeftOutHook      = "a test-runner or interpreter hook"
	LeftOutShadow    = "named like a Python standard-library module or a hidden test, which the tests would import in its place"
	LeftOutLink      = "a symbolic link"
	LeftOutSpecial   = "not a regular file (a pipe, socket or device)"
	// LeftOutUnreadable is a path of the attempt's workspace that cannot
	// be read (a path longer than the system allows, a folder without
	// permissions): what the agent leaves is never a failure of the
	// harness.
	LeftOutUnreadable = "cannot be read"
)

// cacheDirs are folders of tool caches and bytecode, never a result.
var cacheDirs = []string{"__pycache__"}

// hooks are files that tools load on their own to configure the test
// runner or the interpreter, so that they could decide a test's outcome
// without being part of the program under test.
var hooks = []string{"conftest.py", "sitecustomize.py", "usercustomize.py"}

// Counts reports whether a regular file the agent changed, added or
// removed, at rel (slash-separated, relative to the workspace root), is
// part of its result and is carried into the scoring folder; if not, it
// says why.
//
// Some files are never a result by accident: dot-files and anything in a
// dot-folder, caches and bytecode (__pycache__, *.pyc), Python path
// configuration (*.pth), and test-runner or interpreter hooks
// (conftest.py, sitecustomize.py, usercustomize.py). Without Result globs
// every other file counts; and, for a task with Python tests, the caller
// also leaves out files the agent added that the tests would import in
// place of a module they need (see Task.Shadowing). With Result globs a
// file counts when a glob matches it, and one of those kinds only when the
// glob names it: "src/**" does not carry src/conftest.py or src/.env, but
// "**/conftest.py", ".config/*.json" and "*.pth" carry what they name.
// Links and special files never count (the caller sees them as such).
func (t Tests) Counts(rel string) (bool, string) {
	rel = strings.TrimPrefix(path.Clean(filepath.ToSlash(rel)), "/")
	why, named := excluded(rel)
	if len(t.Result) == 0 {
		return why == "", why
	}
	for _, g := range t.Result {
		if !MatchGlob(g, rel) {
			continue
		}
		if why == "" || named(g) {
			return true, ""
		}
	}
	if why != "" {
		for _, g := range t.Result {
			if MatchGlob(g, rel) {
				return false, why + ", which a [tests] result glob carries only when it names it"
			}
		}
	}
	return false, LeftOutNotResult
}

// excluded says why the file at rel is of a kind that is never a result
// by accident, or "", and whether a glob names it: every segment that
// makes it so (".config", "__pycache__", "conftest.py") is a segment of
// the glob, and a kind known by its extension ends the glob ("*.pth").
func excluded(rel string) (string, func(glob string) bool) {
	segs := strings.Split(rel, "/")
	why := ""
	var literal []string
	ext := ""
	for _, s := range segs {
		switch {
		case strings.HasPrefix(s, "."):
			why = cmp.Or(why, LeftOutDotFile)
			literal = append(literal, s)
		case slices.Contains(cacheDirs, s):
			why = cmp.Or(why, LeftOutCache)
			literal = append(literal, s)
		}
	}
	base := segs[len(segs)-1]
	switch e := path.Ext(base); {
	case e == ".pyc" || e == ".pyo":
		why, ext = cmp.Or(why, LeftOutCache), e
	case e == ".pth":
		why, ext = cmp.Or(why, LeftOutPth), e
	case slices.Contains(hooks, base):
		why = cmp.Or(why, LeftOutHook)
		literal = append(literal, base)
	}
	return why, func(g string) bool {
		gs := strings.Split(g, "/")
		for _, l := range literal {
			if !slices.Contains(gs, l) {
				return false
			}
		}
		return ext == "" || strings.HasSuffix(gs[len(gs)-1], ext)
	}
}

// Shadowing says which paths would be imported in place of a module that
// a task's Python hidden tests need: a module of Python's standard library
// (unittest/, hashlib.py) or a hidden test module (a package
// test_x_hidden/ beside test_x_hidden.py, which Python prefers), where the
// tests import from: the workspace root (the test command's folder, first
// on Python's path) and the folders that hold hidden tests. Under the
// default result rule such a path, when the agent added it, is left out
// (LeftOutShadow): it would put the agent's code into the tests' process
// even when its result is only data. The zero Shadowing (a task without
// Python tests) shadows nothing.
type Shadowing struct {
	dirs  map[string]bool // "" for the root, or "sub/dir"
	tests map[string]bool // "name" or "sub/dir/name" of each test module
}

// Shadowing reads the task's tests/ for its Python test modules.
func (t *Task) Shadowing() (Shadowing, error) {
	s := Shadowing{dirs: map[string]bool{}, tests: map[string]bool{}}
	tests, err := t.TestsFS()
	if err != nil {
		return Shadowing{}, fmt.Errorf("read the hidden tests of task %s: %w", t.ID, err)
	}
	err = fs.WalkDir(tests, ".", func(rel string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path.Ext(d.Name()) != ".py" {
			return err
		}
		dir := path.Dir(rel)
		if dir == "." {
			dir = ""
		}
		s.dirs[""], s.dirs[dir] = true, true
		s.tests[path.Join(dir, strings.TrimSuffix(d.Name(), ".py"))] = true
		return nil
	})
	if err != nil {
		return Shadowing{}, fmt.Errorf("read the hidden tests of task %s: %w", t.ID, err)
	}
	return s, nil
}

// pythonSuffixes are the file suffixes Python imports a module from.
var pythonSuffixes = []string{".py", ".pyc", ".pyw", ".so", ".pyd"}

// Shadows reports whether rel (slash-separated, relative to the workspace
// root) is, or lies in, a file or folder that Python would import in place
// of a standard-library module or a hidden test module.
func (s Shadowing) Shadows(rel string) bool {
	segs := strings.Split(path.Clean(rel), "/")
	for i, name := range segs {
		if !s.dirs[strings.Join(segs[:i], "/")] {
			continue
		}
		module := name
		if i == len(segs)-1 { // a file: a module only with a suffix Python imports
			dot := strings.IndexByte(name, '.')
			if dot < 0 || !slices.ContainsFunc(pythonSuffixes, func(x string) bool { return strings.HasSuffix(name, x) }) {
				continue
			}
			module = name[:dot]
		}
		if _, found := slices.BinarySearch(pythonStdlib, module); found || s.tests[path.Join(append(segs[:i:i], module)...)] {
			return true
		}
	}
	return false
}
