package tasks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestShadowing(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"task.toml":                     "format = 1\ninstruction = \"x\"\n[tests]\ncommand = \"python3 -m unittest -v test_x_hidden\"\n",
		"workspace/x.py":                "",
		"tests/test_x_hidden.py":        "",
		"tests/data.csv":                "",
		"tests/sub/test_deep_hidden.py": "",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	task, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	s, err := task.Shadowing()
	if err != nil {
		t.Fatal(err)
	}
	for rel, want := range map[string]bool{
		"unittest/__init__.py":                 true, // the test runner, replaced
		"unittest/mock.py":                     true,
		"hashlib.py":                           true, // a module the tests import
		"json.cpython-311-x86_64-linux-gnu.so": true,
		"test_x_hidden/__init__.py":            true, // a package wins over test_x_hidden.py
		"test_x_hidden.so":                     true,
		"sub/test_deep_hidden/__init__.py":     true,
		"sub/json.py":                          true, // beside hidden tests
		"x.py":                                 false,
		"test.py":                              false, // not in sys.stdlib_module_names
		"json.go":                              false, // not a Python module
		"data/json.py":                         false, // not where the tests import from
		"pkg/unittest/__init__.py":             false,
		"data.py":                              false, // data.csv is not a test module
	} {
		if got := s.Shadows(rel); got != want {
			t.Errorf("Shadows(%q) = %v, want %v", rel, got, want)
		}
	}
	if (Shadowing{}).Shadows("unittest/__init__.py") {
		t.Error("the zero Shadowing shadows")
	}
}

// TestCounts: what counts as the agent's result, under the default rule
// and under globs, which carry a dot-file, a cache, a .pth or a hook only
// when they name it.
func TestCounts(t *testing.T) {
	def := Tests{}
	src := Tests{Result: []string{"src/**"}}
	named := Tests{Result: []string{"**/conftest.py", ".config/*.json", "*.pth", "config/.env", "pkg/__pycache__/*.pyc"}}
	tests := []struct {
		rules Tests
		rel   string
		want  bool
		why   string
	}{
		{def, "main.py", true, ""},
		{def, "a/b/c.go", true, ""},
		{def, ".config/go/env", false, LeftOutDotFile},
		{def, "src/.env", false, LeftOutDotFile},
		{def, "__pycache__/x.cpython-311.pyc", false, LeftOutCache},
		{def, "x.pyc", false, LeftOutCache},
		{def, ".local/lib/python3.11/site-packages/x.pth", false, LeftOutDotFile},
		{def, "x.pth", false, LeftOutPth},
		{def, "sub/conftest.py", false, LeftOutHook},
		{def, "sitecustomize.py", false, LeftOutHook},
		{src, "src/main.py", true, ""},
		{src, "main.py", false, LeftOutNotResult},
		{src, "src/conftest.py", false, LeftOutHook},
		{src, "src/.env", false, LeftOutDotFile},
		{src, "src/x.pth", false, LeftOutPth},
		{src, "src/__pycache__/m.pyc", false, LeftOutCache},
		{src, "src/m.pyc", false, LeftOutCache},
		{src, "src/usercustomize.py", false, LeftOutHook},
		{named, "a/conftest.py", true, ""},
		{named, ".config/service.json", true, ""},
		{named, ".config/.hidden/service.json", false, LeftOutNotResult},
		{named, "x.pth", true, ""},
		{named, "config/.env", true, ""},
		{named, "pkg/__pycache__/m.pyc", true, ""},
		{named, "sitecustomize.py", false, LeftOutNotResult},
	}
	for _, tt := range tests {
		ok, why := tt.rules.Counts(tt.rel)
		if ok != tt.want || !strings.HasPrefix(why, tt.why) {
			t.Errorf("%v.Counts(%q) = %v, %q; want %v, %q", tt.rules.Result, tt.rel, ok, why, tt.want, tt.why)
		}
	}
}
