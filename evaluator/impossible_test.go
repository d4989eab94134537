package evaluator_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchhq/bench/evaluator"
	"github.com/benchhq/bench/internal/sandboxtest"
	"github.com/benchhq/bench/tasks"
)

// TestValidateNeverRecordsAnImpossibleTask: an impossible golden task's
// expected observations are its reference's with one case mutated by
// hand; bench validate, even asked to record (or finding none), must not
// record the reference's over them, which would make the task possible.
func TestValidateNeverRecordsAnImpossibleTask(t *testing.T) {
	dir := copyTree(t, filepath.Join("..", "tasks", "suites", "impossible", "recipe-trailing-dot-golden"))
	path := filepath.Join(dir, tasks.ExpectedFile)
	mutated, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	scorer := &evaluator.Scorer{Sandbox: sandboxtest.New(t), TempDir: t.TempDir()}
	ctx := context.Background()

	task, err := tasks.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	v, err := evaluator.Validate(ctx, task, scorer, evaluator.ValidateOptions{Record: true, TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if v.OK() || v.RecordedExpected || !strings.Contains(strings.Join(v.Problems, "\n"), "pancakes-visible.txt") {
		t.Errorf("validate --record: ok %v, recorded %v, problems %q; want the mutated case failing, nothing recorded", v.OK(), v.RecordedExpected, v.Problems)
	}
	if now, err := os.ReadFile(path); err != nil || !bytes.Equal(now, mutated) {
		t.Errorf("the mutated record was rewritten (%v)", err)
	}

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	task, err = tasks.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	v, err = evaluator.Validate(ctx, task, scorer, evaluator.ValidateOptions{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if v.OK() || v.RecordedExpected || !strings.Contains(strings.Join(v.Problems, "\n"), "never records one") {
		t.Errorf("validate without a record: ok %v, recorded %v, problems %q", v.OK(), v.RecordedExpected, v.Problems)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("a record was written for an impossible task: %v", err)
	}
}
