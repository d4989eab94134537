package overhead_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/benchhq/bench/bound"
	"github.com/benchhq/bench/internal/ollamatest"
	"github.com/benchhq/bench/overhead"
)

// The issue's case: num_ctx 8192 sent to a model whose own context is
// smaller than the prompt with every tool. Ollama lowers num_ctx to the
// model's context without a word and reports the cut count; judged against
// num_ctx, the cut looked like a plain figure (and the framing like a
// saving). Judged against the model's context, it is a bound.
func TestMeasureJudgesAgainstTheModelsContext(t *testing.T) {
	sets := []overhead.ToolSet{issuesSet(), memorySet()}
	memory := baseline + words(t, memorySet().Tools[0])
	modelCtx := memory + 2 // holds the memory tool alone, not the issues tools
	m, _ := model(t, nil, ollamatest.WithContextLength(modelCtx))
	n, err := m.ContextLength(context.Background(), "fake")
	if err != nil || n != modelCtx {
		t.Fatalf("ContextLength = %d, %v; want %d", n, err, modelCtx)
	}
	r, err := overhead.Measure(context.Background(), m, "fake", map[string]any{"num_ctx": 8192}, n, sets)
	if err != nil {
		t.Fatal(err)
	}
	if r.Context() != modelCtx || r.NumCtx != 8192 || r.ModelContext != modelCtx {
		t.Errorf("context %d (num_ctx %d, model %d), want %d", r.Context(), r.NumCtx, r.ModelContext, modelCtx)
	}
	if !r.All.Truncated || r.All.PromptTokens != modelCtx || !r.Sets[0].Truncated {
		t.Errorf("all %+v, issues %+v: want both cut at the model's %d", r.All, r.Sets[0].Count, modelCtx)
	}
	if r.Sets[1].Truncated {
		t.Errorf("the memory set fits the model's context: %+v", r.Sets[1].Count)
	}
	if b := r.TotalBound(); b.Kind != bound.AtLeast || b.N != modelCtx-baseline {
		t.Errorf("TotalBound = %+v, want at least %d", b, modelCtx-baseline)
	}
	w := strings.Join(r.Warnings(), "\n")
	for _, want := range []string{"model's context length", "cannot hold them"} {
		if !strings.Contains(w, want) {
			t.Errorf("warnings %q lack %q", w, want)
		}
	}
	if strings.Contains(w, "--num-ctx") {
		t.Errorf("warnings %q suggest a larger num_ctx, which Ollama would lower again", w)
	}
	var b bytes.Buffer
	if err := overhead.WriteTable(&b, r, overhead.View{Turns: 10}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, "lowered to the model's context") {
		t.Errorf("title does not say the context was lowered:\n%s", out)
	}
	for _, line := range strings.Split(out, "\n") {
		fields := strings.Fields(line)
		if len(fields) < 3 || fields[0] != "issues" && fields[0] != "all" {
			continue // the set of issues tools and all tools were cut
		}
		for _, f := range fields[3:] {
			if f[0] >= '0' && f[0] <= '9' || f[0] == '-' || f[0] == '+' {
				t.Errorf("row %q prints %q as a plain figure: it comes from a cut count", line, f)
			}
		}
	}
	if !strings.Contains(out, "≥, ≤: bounds") {
		t.Errorf("table does not explain its bounds:\n%s", out)
	}
}
