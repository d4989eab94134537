package evaluator

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/benchhq/bench/tasks"
)

// writeFiles writes files (slash-separated paths) under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// attemptOf makes a task of files (slash-separated paths in the task
// folder) and an attempt's workspace: a copy of the task's, then changed.
func attemptOf(t *testing.T, task, changed map[string]string) (*tasks.Task, string) {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, task)
	tk, err := tasks.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	if err := tk.CopyWorkspace(ws); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, ws, changed)
	return tk, ws
}

// TestCollectChangeLeavesOutShadows: under the default rule, what the
// agent adds that Python would import in place of the test runner or of a
// hidden test is left out; a task's own file of such a name still counts.
func TestCollectChangeLeavesOutShadows(t *testing.T) {
	task, ws := attemptOf(t, map[string]string{
		tasks.FileName:           "format = 1\ninstruction = \"x\"\n[tests]\ncommand = \"python3 -m unittest -v test_a_hidden\"\n",
		"workspace/answer.txt":   "",
		"workspace/calendar.py":  "x = 1\n",
		"tests/test_a_hidden.py": "",
	}, map[string]string{
		"answer.txt":                "42\n",
		"calendar.py":               "x = 2\n", // the task's own
		"unittest/__init__.py":      "import os; os._exit(0)\n",
		"test_a_hidden/__init__.py": "",
	})
	c, err := CollectChange(task, ws)
	if err != nil {
		t.Fatal(err)
	}
	var carried, shadows []string
	for _, f := range c.Carried {
		carried = append(carried, f.Path)
	}
	for _, l := range c.LeftOut {
		if l.Reason == tasks.LeftOutShadow {
			shadows = append(shadows, l.Path)
		}
	}
	if want := []string{"answer.txt", "calendar.py"}; !slices.Equal(carried, want) {
		t.Errorf("carried %v, want %v", carried, want)
	}
	if want := []string{"test_a_hidden/__init__.py", "unittest/__init__.py"}; !slices.Equal(shadows, want) {
		t.Errorf("left out as shadows %v, want %v", shadows, want)
	}
}

// TestCollectChangeAgainstWhatTheAttemptGot: the change is taken against
// the workspace the attempt was given (the task's snapshot, which scoring
// copies too), not the task folder as it is when the attempt ends: a task
// edited during a run changes neither what counts as the agent's work nor
// the diff stored with it.
func TestCollectChangeAgainstWhatTheAttemptGot(t *testing.T) {
	task, ws := attemptOf(t, map[string]string{
		tasks.FileName:         "format = 1\ninstruction = \"x\"\n[tests]\ncommand = \"true\"\n",
		"workspace/answer.txt": "0\n",
		"workspace/keep.txt":   "same\n",
		"workspace/gone.txt":   "bye\n",
	}, map[string]string{
		"answer.txt": "42\n",
	})
	if err := os.Remove(filepath.Join(ws, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	// The task folder, edited after the attempt got its copy.
	writeFiles(t, task.WorkspaceDir(), map[string]string{"answer.txt": "42\n", "keep.txt": "edited\n", "new.txt": "later\n"})
	if err := os.Remove(filepath.Join(task.WorkspaceDir(), "gone.txt")); err != nil {
		t.Fatal(err)
	}
	c, err := CollectChange(task, ws)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range c.Carried {
		got = append(got, f.Kind+" "+f.Path)
	}
	if want := []string{"modified answer.txt", "removed gone.txt"}; !slices.Equal(got, want) {
		t.Errorf("carried %v, want %v", got, want)
	}
	if !strings.Contains(c.Diff, "-0\n+42\n") || strings.Contains(c.Diff, "edited") || strings.Contains(c.Diff, "later") {
		t.Errorf("diff against the task folder as edited, not as the attempt got it:\n%s", c.Diff)
	}
}
