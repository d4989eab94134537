package harbor

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/benchhq/bench/tasks"
)

func TestLoadSuite(t *testing.T) {
	s, err := LoadSuite("testdata/suite", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(s.Tasks); got != 2 || len(s.Suite.Tasks) != 2 {
		t.Fatalf("tasks: got %d, want 2", got)
	}
	py, sh := s.Tasks[0], s.Tasks[1]

	if py.Task.ID != "py-fizzbuzz" || py.Image != "localhost:5000/bench/python-mini:1" || py.Dockerfile != nil {
		t.Errorf("py: id %q image %q dockerfile %v", py.Task.ID, py.Image, py.Dockerfile)
	}
	if !strings.Contains(py.Task.Instruction, "fizzbuzz.py") {
		t.Errorf("py instruction: %q", py.Task.Instruction)
	}
	if got, want := py.Task.Limits.WallTime.Duration, 10*time.Minute; got != want {
		t.Errorf("py wall time: got %s, want %s", got, want)
	}
	if got, want := py.Task.Tests.Timeout.Duration, 2*time.Minute; got != want {
		t.Errorf("py test timeout: got %s, want %s", got, want)
	}
	if py.Task.Tests.Command != TestCommand || py.Task.Tests.CanaryOr() {
		t.Errorf("py tests: %+v", py.Task.Tests)
	}
	if got, want := py.Task.Environment.TimeoutOr(), 5*time.Minute; got != want || !py.Task.Environment.Network {
		t.Errorf("py environment: %+v", py.Task.Environment)
	}
	if want := []string{"python", "fizzbuzz", "difficulty:easy", "category:programming"}; !slices.Equal(py.Task.Tags, want) {
		t.Errorf("py tags: got %q, want %q", py.Task.Tags, want)
	}
	if py.Task.Hash == "" {
		t.Error("py: no hash")
	}
	wantFields(t, "py", py.Notes, "environment.cpus", "environment.memory", "environment.storage", "environment/docker-compose.yaml")

	if sh.Image != "" || sh.Dockerfile == nil || sh.Dockerfile.From != "localhost:5000/bench/busybox:1" {
		t.Fatalf("sh: image %q dockerfile %+v", sh.Image, sh.Dockerfile)
	}
	if sh.Workdir != "$APP" {
		t.Errorf("sh workdir: %q (the Dockerfile's, expanded at replay)", sh.Workdir)
	}
	if sh.Task.Tests.Env["LC_ALL"] != "C" {
		t.Errorf("sh verifier env: %v", sh.Task.Tests.Env)
	}
	wantFields(t, "sh", sh.Notes, "environment.allow_internet", "environment.favourite_colour", "environment.gpus",
		DockerfilePath, DockerfilePath)

	// Under a profile with network, internet access is no note.
	s2, err := LoadSuite("testdata/suite/sh-count", Options{Network: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range s2.Tasks[0].Notes {
		if n.Field == "environment.allow_internet" {
			t.Errorf("noted under a profile with network: %s", n)
		}
	}
}

func wantFields(t *testing.T, name string, notes []Note, fields ...string) {
	t.Helper()
	var got []string
	for _, n := range notes {
		got = append(got, n.Field)
		if n.Msg == "" {
			t.Errorf("%s: note %s says nothing", name, n.Field)
		}
	}
	slices.Sort(fields)
	if !slices.Equal(got, fields) {
		t.Errorf("%s notes: got %q, want %q", name, notes, fields)
	}
}

func TestDetect(t *testing.T) {
	if !Detect("testdata/suite/sh-count") || !DetectSuite("testdata/suite") {
		t.Error("a Harbor folder not detected")
	}
	if DetectSuite("../tasks/suites/examples") || Detect("../tasks/suites/examples/recipe-trailing-dot") {
		t.Error("bench's own suite detected as Harbor")
	}
	// bench's format with files of the same names is still bench's.
	dir := writeTask(t, map[string]string{ConfigFile: "format = 1\ninstruction = \"x\"\n", InstructionFile: "x", TestScript: "true"})
	if Detect(dir) {
		t.Error("a task.toml with format = 1 detected as Harbor")
	}
}

// writeTask makes a Harbor task folder from files (path: content).
func writeTask(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "task-x")
	for p, c := range files {
		p = filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestLoadRefuses(t *testing.T) {
	base := func() map[string]string {
		return map[string]string{
			ConfigFile:      "[environment]\ndocker_image = \"x:1\"\n",
			InstructionFile: "do it",
			TestScript:      "exit 0",
		}
	}
	cases := []struct {
		name   string
		change func(m map[string]string)
		want   string // in the error
	}{
		{"no instruction", func(m map[string]string) { delete(m, InstructionFile) }, "instruction.md: cannot read the instruction"},
		{"empty instruction", func(m map[string]string) { m[InstructionFile] = " \n" }, "instruction.md: empty"},
		{"no test.sh", func(m map[string]string) { delete(m, TestScript) }, "tests/test.sh: missing"},
		{"bad toml", func(m map[string]string) { m[ConfigFile] = "[agent\n" }, "task.toml"},
		{"timeout a string", func(m map[string]string) { m[ConfigFile] = "[agent]\ntimeout_sec = \"long\"\n" }, "agent.timeout_sec"},
		{"negative timeout", func(m map[string]string) {
			m[ConfigFile] = "[verifier]\ntimeout_sec = -1.0\n[environment]\ndocker_image = \"x\"\n"
		}, "verifier.timeout_sec: expected a number of seconds"},
		{"no image no Dockerfile", func(m map[string]string) { m[ConfigFile] = "" }, "environment.docker_image: missing"},
		{"relative workdir", func(m map[string]string) {
			m[ConfigFile] = "[environment]\ndocker_image = \"x\"\nworkdir = \"app\"\n"
		}, "environment.workdir: expected an absolute path"},
		{"unreplayable Dockerfile", func(m map[string]string) {
			m[ConfigFile] = ""
			m[DockerfilePath] = "FROM debian\nUSER nobody\n"
		}, "line 2: USER: cannot be replayed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := base()
			c.change(m)
			_, err := Load(writeTask(t, m), Options{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error with %q", err, c.want)
			}
			if !strings.Contains(err.Error(), "task-x") {
				t.Errorf("the error does not name the task: %v", err)
			}
			var fe *tasks.FieldError
			if c.name != "unreplayable Dockerfile" && !errors.As(err, &fe) {
				t.Errorf("not a FieldError: %T", err)
			}
		})
	}
}
