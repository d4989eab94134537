package evaluator_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchhq/bench/evaluator"
	"github.com/benchhq/bench/tasks"
)

// TestTestsThatCannotBePlacedScoreZero: when what the agent left in the
// workspace keeps the hidden tests out, the attempt failed them; the run
// goes on.
func TestTestsThatCannotBePlacedScoreZero(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "task")
	for name, body := range map[string]string{
		"task.toml":       "format = 1\ninstruction = \"x\"\n[tests]\ncommand = \"true\"\n",
		"workspace/a.txt": "a",
		"tests/test_x.py": "real",
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
		os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644)
	}
	task, err := tasks.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	planted := filepath.Join(ws, "test_x.py")
	os.WriteFile(planted, []byte("fake"), 0o644)
	// An immutable file stops even root from replacing it.
	if out, err := exec.Command("chattr", "+i", planted).CombinedOutput(); err != nil {
		if os.Getenv("BENCH_REQUIRE_FAULTS") == "1" {
			t.Fatalf("chattr: %v %s", err, out)
		}
		t.Skipf("cannot make a file immutable here: %v %s", err, out)
	}
	defer exec.Command("chattr", "-i", planted).Run()

	res, err := evaluator.RunHiddenTests(context.Background(), task, ws, nil)
	if err != nil {
		t.Fatalf("err = %v, want a scored result", err)
	}
	if res.Passed || res.Reward() != 0 || !strings.Contains(res.Output, "could not be placed") {
		t.Errorf("result %+v, want reward 0 saying the tests could not be placed", res)
	}
}
