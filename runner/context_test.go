package runner_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/benchhq/bench/internal/ollamatest"
	"github.com/benchhq/bench/results"
	"github.com/benchhq/bench/runner"
)

// The run: num_ctx 8192 against a model whose own context is
// smaller than every prompt of the attempt. Ollama (and the fake server)
// lower num_ctx silently and report the cut counts; the run must warn
// before it starts, mark those turns truncated, and store the model's
// context with the overhead.
func TestRunJudgesTruncationAgainstTheModelsContext(t *testing.T) {
	const modelCtx = 400 // below the prompt with the six built-in tools
	f := newFixture(t, solveRecipe(t), ollamatest.WithContextLength(modelCtx))
	var log bytes.Buffer
	f.runner.Log = &log
	plan := &runner.Plan{Model: "fake", Suite: loadTask(t, "recipe-trailing-dot"), Attempts: 1,
		Options: map[string]any{"num_ctx": 8192}}
	f.run(plan, "r1")

	text := log.String()
	warn := strings.Index(text, "above the context length of fake (400)")
	measure := strings.Index(text, "measuring")
	if warn < 0 || measure < 0 || warn > measure {
		t.Errorf("no warning before the run about num_ctx above the model's context:\n%s", text)
	}
	if !strings.Contains(text, "≥") {
		t.Errorf("the tool overhead, measured from cut prompts, is not given as a bound:\n%s", text)
	}
	turns := f.count(`SELECT count(*) FROM turns`)
	cut := f.count(`SELECT count(*) FROM turns WHERE truncated = 1`)
	if turns == 0 || cut != turns {
		t.Errorf("%d of %d turns marked truncated: every prompt was cut at %d", cut, turns, modelCtx)
	}
	if n := f.count(`SELECT count(*) FROM turns WHERE prompt_tokens > ?`, modelCtx); n != 0 {
		t.Errorf("%d turns report more prompt tokens than the model's context", n)
	}
	if n := f.count(`SELECT model_context FROM overhead WHERE run_id = 'r1'`); n != modelCtx {
		t.Errorf("overhead.model_context = %d, want %d", n, modelCtx)
	}
	if n := f.count(`SELECT truncated FROM overhead WHERE run_id = 'r1'`); n != 1 {
		t.Errorf("overhead.truncated = %d, want 1", n)
	}
	rep, err := f.store.Report(context.Background(), "r1", results.ReportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if tt := rep.ToolTokens[0]; tt.Context != modelCtx || tt.ModelContext != modelCtx || !tt.Truncated {
		t.Errorf("report tool tokens %+v: want context %d, truncated", tt, modelCtx)
	}
}
