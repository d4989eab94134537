package agent_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/internal/ollamatest"
)

func TestContextLength(t *testing.T) {
	srv := ollamatest.New(ollamatest.Turns(), ollamatest.WithModels("small"), ollamatest.WithContextLength(2048))
	defer srv.Close()
	model, err := agent.NewOllama(srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	n, err := model.ContextLength(context.Background(), "small")
	if err != nil || n != 2048 {
		t.Errorf("ContextLength(small) = %d, %v; want 2048", n, err)
	}
	_, err = model.ContextLength(context.Background(), "nope")
	var me *agent.ModelError
	if !errors.As(err, &me) || !strings.Contains(me.Hint(), "ollama pull nope") {
		t.Errorf("ContextLength(nope) error %v: want a ModelError that says to pull it", err)
	}
}

func TestEffectiveContext(t *testing.T) {
	tests := []struct{ numCtx, modelCtx, want int }{
		{8192, 2048, 2048},
		{2048, 8192, 2048},
		{8192, 0, 8192},
		{0, 2048, 2048},
		{0, 0, 0},
	}
	for _, tt := range tests {
		if got := agent.EffectiveContext(tt.numCtx, tt.modelCtx); got != tt.want {
			t.Errorf("EffectiveContext(%d, %d) = %d, want %d", tt.numCtx, tt.modelCtx, got, tt.want)
		}
	}
	if w := agent.ContextWarning("m", 8192, 2048); !strings.Contains(w, "lowers it to 2048") {
		t.Errorf("ContextWarning = %q", w)
	}
	if w := agent.ContextWarning("m", 2048, 8192); w != "" {
		t.Errorf("ContextWarning below the model's context = %q, want none", w)
	}
}

// A model whose own context (100) is below num_ctx (8192): the fake server,
// like Ollama, cuts every prompt at 100 and reports 100. The loop must judge
// those turns truncated against the context really used.
func TestRunJudgesTruncationAgainstTheModelsContext(t *testing.T) {
	long := strings.Repeat("word ", 40)
	var replies []ollamatest.Reply
	for range 4 {
		replies = append(replies, ollamatest.Reply{Content: long, Calls: []ollamatest.Call{{Name: "echo", Args: map[string]any{"text": "x"}}}})
	}
	srv := ollamatest.New(ollamatest.Turns(replies...), ollamatest.WithContextLength(100))
	defer srv.Close()
	model, err := agent.NewOllama(srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	modelCtx, err := model.ContextLength(context.Background(), "fake")
	if err != nil {
		t.Fatal(err)
	}
	reg := agent.NewRegistry()
	if err := reg.Add(promptsTool()); err != nil {
		t.Fatal(err)
	}
	tr := agent.Run(context.Background(), agent.Config{
		Model: model, ModelName: "fake", Instruction: "go", Tools: reg,
		Options: map[string]any{"num_ctx": 8192}, MaxTurns: 4, ContextLength: modelCtx,
	})
	if len(tr.Turns) != 4 {
		t.Fatalf("%d turns (%s %s)", len(tr.Turns), tr.Stop, tr.Err)
	}
	cut := 0
	for _, tu := range tr.Turns {
		if tu.PromptTokens > 100 {
			t.Errorf("turn %d reported %d prompt tokens: the fake server should cut at the model's 100", tu.Index, tu.PromptTokens)
		}
		if tu.PromptTokens == 100 && !tu.Truncated {
			t.Errorf("turn %d: prompt 100 = the model's context, not marked truncated", tu.Index)
		}
		if tu.Truncated {
			cut++
		}
	}
	if cut == 0 {
		t.Errorf("no turn marked truncated: %+v", tr.Turns)
	}
}

// A server that will not tell (an error other than 404) leaves the length
// unknown and the run going; a model that is not pulled stops it.
func TestContextLengthUnknown(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":"method not allowed"}`, http.StatusMethodNotAllowed)
	}))
	defer srv.Close()
	model, err := agent.NewOllama(srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = model.ContextLength(context.Background(), "m")
	if err == nil || !agent.OnlyUnknown(err) {
		t.Errorf("405 from /api/show: %v, OnlyUnknown %v; want an error that only means unknown", err, agent.OnlyUnknown(err))
	}
	fake := ollamatest.New(ollamatest.Turns(), ollamatest.WithModels("a"))
	defer fake.Close()
	model, _ = agent.NewOllama(fake.URL, nil)
	if _, err := model.ContextLength(context.Background(), "b"); agent.OnlyUnknown(err) {
		t.Errorf("a model that is not pulled: %v counted as only unknown", err)
	}
}
