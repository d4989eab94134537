package tasks

import (
	"os"
	"path/filepath"
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
