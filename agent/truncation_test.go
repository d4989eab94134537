package agent_test

import (
	"context"
	"fmt"
	"log"
	"slices"
	"strings"
	"testing"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/internal/ollamatest"
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
			got := agent.DetectTruncation(turns(tt.prompts...), tt.numCtx)
			if !slices.Equal(got, tt.want) {
				t.Errorf("DetectTruncation(%v, %d) = %v, want %v", tt.prompts, tt.numCtx, got, tt.want)
			}
		})
	}
}

// promptsTool is a tool that answers "stub", for scripted conversations.
func promptsTool() agent.Tool {
	return stubTool{
		spec: agent.Spec{Name: "echo", Class: agent.ClassRead, Origin: agent.OriginBuiltin},
		fn:   func(map[string]any) (agent.Result, error) { return agent.Result{Text: "stub"}, nil },
	}
}

// scriptedPrompts runs the loop against replies reporting these prompt
// counts: a tool call each, and an answer last.
func scriptedPrompts(t testing.TB, numCtx int, prompts ...int) *agent.Trajectory {
	t.Helper()
	var replies []ollamatest.Reply
	for i, p := range prompts {
		r := ollamatest.Reply{PromptTokens: p, Content: "done"}
		if i < len(prompts)-1 {
			r = ollamatest.Reply{PromptTokens: p, Calls: []ollamatest.Call{{Name: "echo", Args: map[string]any{"text": "x"}}}}
		}
		replies = append(replies, r)
	}
	srv := ollamatest.New(ollamatest.Turns(replies...))
	defer srv.Close()
	model, err := agent.NewOllama(srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	reg := agent.NewRegistry()
	if err := reg.Add(promptsTool()); err != nil {
		t.Fatal(err)
	}
	return agent.Run(context.Background(), agent.Config{
		Model: model, ModelName: "fake", Instruction: "go", Tools: reg,
		Options: map[string]any{"num_ctx": numCtx}, MaxTurns: len(prompts),
	})
}

// Run marks truncated turns by both of DetectTruncation's signs as the
// turns arrive, and the trajectory counts them.
func TestRunMarksTruncatedTurns(t *testing.T) {
	tests := []struct {
		name    string
		numCtx  int
		prompts []int
		want    []bool
	}{
		{"stopped growing", 1000, []int{40, 80, 70}, []bool{false, false, true}},
		{"reached num_ctx", 80, []int{40, 80, 70}, []bool{false, true, true}},
		{"first turn cut, then growing", 40, []int{40, 80, 90}, []bool{true, true, true}},
		{"growing", 1000, []int{40, 80, 90}, []bool{false, false, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := scriptedPrompts(t, tt.numCtx, tt.prompts...)
			if len(tr.Turns) != len(tt.prompts) {
				t.Fatalf("%d turns (%s %s), want %d", len(tr.Turns), tr.Stop, tr.Err, len(tt.prompts))
			}
			var got []bool
			for _, tu := range tr.Turns {
				got = append(got, tu.Truncated)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("prompts %v, num_ctx %d: marks %v, want %v", tt.prompts, tt.numCtx, got, tt.want)
			}
			if n := tr.TruncatedTurns(); n != countTrue(tt.want) {
				t.Errorf("TruncatedTurns() = %d, want %d", n, countTrue(tt.want))
			}
		})
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
	if err := reg.Add(promptsTool()); err != nil {
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
	var marked []bool
	for _, tu := range tr.Turns {
		prompts = append(prompts, tu.PromptTokens)
		marked = append(marked, tu.Truncated)
	}
	got := agent.DetectTruncation(tr.Turns, numCtx)
	// Each turn adds about 45 words: the third prompt passes 150.
	want := make([]bool, len(prompts))
	for i, p := range prompts {
		want[i] = p >= numCtx
	}
	if !slices.Equal(got, want) || !got[len(got)-1] || got[0] {
		t.Errorf("prompts %v: detected %v, want %v", prompts, got, want)
	}
	if !slices.Equal(marked, want) {
		t.Errorf("prompts %v: Run marked %v, want %v", prompts, marked, want)
	}
	if n := tr.TruncatedTurns(); n != countTrue(want) {
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
		agent.DetectTruncation(ts, 8192)
	}
}

// Spot the turns whose prompt Ollama cut at num_ctx: the second reached
// it; the third and the fourth are shorter than the second, although each
// turn's prompt repeats the conversation so far and adds to it.
func ExampleDetectTruncation() {
	turns := []agent.Turn{{PromptTokens: 900}, {PromptTokens: 1024}, {PromptTokens: 1000}, {PromptTokens: 980}}
	fmt.Println(agent.DetectTruncation(turns, 1024))
	// Output:
	// [false true true true]
}

// Run marks the turns whose prompt Ollama probably cut as they arrive;
// here the fake server reports prompts of 3000, 5200, 8192 and 7000 tokens
// under num_ctx 8192: the third reached it, the fourth is shorter than it.
func ExampleTrajectory_TruncatedTurns() {
	var replies []ollamatest.Reply
	for _, p := range []int{3000, 5200, 8192} {
		replies = append(replies, ollamatest.Reply{PromptTokens: p, Calls: []ollamatest.Call{{Name: "echo", Args: map[string]any{}}}})
	}
	replies = append(replies, ollamatest.Reply{PromptTokens: 7000, Content: "done"})
	srv := ollamatest.New(ollamatest.Turns(replies...))
	defer srv.Close()
	model, err := agent.NewOllama(srv.URL, nil)
	if err != nil {
		log.Fatal(err)
	}
	reg := agent.NewRegistry()
	if err := reg.Add(promptsTool()); err != nil {
		log.Fatal(err)
	}
	tr := agent.Run(context.Background(), agent.Config{
		Model: model, ModelName: "fake", Instruction: "go", Tools: reg,
		Options: map[string]any{"num_ctx": 8192},
	})
	fmt.Printf("%d of %d turns truncated\n", tr.TruncatedTurns(), len(tr.Turns))
	// Output:
	// 2 of 4 turns truncated
}
