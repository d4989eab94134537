package overhead_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/internal/ollamatest"
	"github.com/benchhq/bench/overhead"
)

func turns(prompts ...int) []agent.Turn {
	out := make([]agent.Turn, len(prompts))
	for i, p := range prompts {
		out[i] = agent.Turn{Index: i, PromptTokens: p}
	}
	return out
}

func TestDetectTruncation(t *testing.T) {
	tests := []struct {
		name    string
		prompts []int
		numCtx  int
		want    []bool
	}{
		{"none", nil, 100, []bool{}},
		{"growing", []int{10, 20, 30}, 100, []bool{false, false, false}},
		{"reaches num_ctx", []int{50, 100, 100}, 100, []bool{false, true, true}},
		{"first turn already cut", []int{100}, 100, []bool{true}},
		{"over num_ctx", []int{120}, 100, []bool{true}},
		{"stops growing below num_ctx", []int{60, 90, 70, 80, 95}, 100, []bool{false, false, true, true, false}},
		{"same length twice", []int{60, 60}, 0, []bool{false, true}},
		{"no num_ctx: only growth", []int{60, 500, 400}, 0, []bool{false, false, true}},
		{"unknown counts skipped", []int{0, 50, 0, 60}, 100, []bool{false, false, false, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := overhead.DetectTruncation(turns(tt.prompts...), tt.numCtx)
			if !slices.Equal(got, tt.want) {
				t.Errorf("DetectTruncation(%v, %d) = %v, want %v", tt.prompts, tt.numCtx, got, tt.want)
			}
		})
	}
}

func TestMarkTruncated(t *testing.T) {
	tr := &agent.Trajectory{Turns: turns(40, 80, 70)}
	tr.Turns[0].Truncated = true // marked by the loop: kept
	if n := overhead.MarkTruncated(tr, 1000); n != 2 {
		t.Errorf("marked %d, want 2", n)
	}
	got := []bool{tr.Turns[0].Truncated, tr.Turns[1].Truncated, tr.Turns[2].Truncated}
	if !slices.Equal(got, []bool{true, false, true}) {
		t.Errorf("marks %v", got)
	}
}

// Against the fake server, which truncates at num_ctx like Ollama: a
// conversation that outgrows a small num_ctx is caught.
func TestDetectTruncationInALoop(t *testing.T) {
	long := strings.Repeat("word ", 30)
	var replies []ollamatest.Reply
	for range 6 {
		replies = append(replies, ollamatest.Reply{Content: long, Calls: []ollamatest.Call{{Name: "echo", Args: map[string]any{"text": "x"}}}})
	}
	srv := ollamatest.New(ollamatest.Turns(replies...))
	defer srv.Close()
	model, err := agent.NewOllama(srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	reg := agent.NewRegistry()
	if err := reg.Add(stubTool{agent.Spec{Name: "echo", Class: agent.ClassRead, Origin: agent.OriginBuiltin}}); err != nil {
		t.Fatal(err)
	}
	const numCtx = 150
	tr := agent.Run(context.Background(), agent.Config{
		Model: model, ModelName: "fake", Instruction: "go", Tools: reg,
		Options: map[string]any{"num_ctx": numCtx}, MaxTurns: 6,
	})
	if len(tr.Turns) != 6 {
		t.Fatalf("%d turns (%s %s), want 6", len(tr.Turns), tr.Stop, tr.Err)
	}
	var prompts []int
	for _, tu := range tr.Turns {
		prompts = append(prompts, tu.PromptTokens)
	}
	got := overhead.DetectTruncation(tr.Turns, numCtx)
	// Each turn adds about 45 words: the third prompt passes 150.
	want := make([]bool, len(prompts))
	for i, p := range prompts {
		want[i] = p >= numCtx
	}
	if !slices.Equal(got, want) || !got[len(got)-1] || got[0] {
		t.Errorf("prompts %v: detected %v, want %v", prompts, got, want)
	}
	if n := overhead.MarkTruncated(tr, numCtx); n != countTrue(want) {
		t.Errorf("marked %d, want %d", n, countTrue(want))
	}
}

func countTrue(bs []bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

func BenchmarkDetectTruncation(b *testing.B) {
	ts := make([]agent.Turn, 200)
	for i := range ts {
		ts[i].PromptTokens = 100 + 37*i
	}
	for b.Loop() {
		overhead.DetectTruncation(ts, 8192)
	}
}

func ExampleMarkTruncated() {
	tr := &agent.Trajectory{Turns: turns(3000, 5200, 8192, 7000)}
	n := overhead.MarkTruncated(tr, 8192)
	fmt.Printf("%d of %d turns truncated\n", n, len(tr.Turns))
	// Output:
	// 2 of 4 turns truncated
}
