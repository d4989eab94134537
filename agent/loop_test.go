package agent_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/internal/ollamatest"
)

// stubTool is a test tool whose behaviour is a function.
type stubTool struct {
	spec agent.Spec
	fn   func(map[string]any) (agent.Result, error)
}

func (s stubTool) Spec() agent.Spec { return s.spec }
func (s stubTool) Call(_ context.Context, args map[string]any) (agent.Result, error) {
	return s.fn(args)
}

func echoTool(name string, class agent.Class, fn func(map[string]any) (agent.Result, error)) stubTool {
	return stubTool{
		spec: agent.Spec{
			Name: name, Description: "test tool", Class: class, Origin: agent.OriginBuiltin,
			InputSchema: &jsonschema.Schema{
				Type:                 "object",
				Required:             []string{"text"},
				Properties:           map[string]*jsonschema.Schema{"text": {Type: "string"}},
				AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
			},
		},
		fn: fn,
	}
}

func runLoop(t *testing.T, script ollamatest.Script, tools ...agent.Tool) *agent.Trajectory {
	t.Helper()
	srv := ollamatest.New(script)
	t.Cleanup(srv.Close)
	model, err := agent.NewOllama(srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	reg := agent.NewRegistry()
	for _, tool := range tools {
		if err := reg.Add(tool); err != nil {
			t.Fatal(err)
		}
	}
	return agent.Run(context.Background(), agent.Config{
		Model: model, ModelName: "fake", Instruction: "do it", Tools: reg,
		Options: map[string]any{"num_ctx": 150}, MaxTurns: 10,
	})
}

func TestErrorsBecomeObservations(t *testing.T) {
	ok := func(a map[string]any) (agent.Result, error) {
		return agent.Result{Text: "echo " + a["text"].(string)}, nil
	}
	tests := []struct {
		name     string
		call     ollamatest.Call
		tool     agent.Tool
		wantKind string
		wantText string
	}{
		{"unknown tool", ollamatest.Call{Name: "nope", Args: map[string]any{}}, echoTool("echo", agent.ClassRead, ok), "unknown_tool", `no tool named "nope"`},
		{"missing argument", ollamatest.Call{Name: "echo", Args: map[string]any{}}, echoTool("echo", agent.ClassRead, ok), "bad_arguments", "text"},
		{"wrong type", ollamatest.Call{Name: "echo", Args: map[string]any{"text": 3}}, echoTool("echo", agent.ClassRead, ok), "bad_arguments", "schema"},
		{"extra argument", ollamatest.Call{Name: "echo", Args: map[string]any{"text": "a", "x": 1}}, echoTool("echo", agent.ClassRead, ok), "bad_arguments", "schema"},
		{"tool error", ollamatest.Call{Name: "echo", Args: map[string]any{"text": "a"}}, echoTool("echo", agent.ClassRead, func(map[string]any) (agent.Result, error) {
			return agent.Result{}, errors.New("disk on fire")
		}), "tool_error", "disk on fire"},
		{"tool panic", ollamatest.Call{Name: "echo", Args: map[string]any{"text": "a"}}, echoTool("echo", agent.ClassRead, func(map[string]any) (agent.Result, error) {
			panic("boom")
		}), "tool_error", "boom"},
		{"no class is denied", ollamatest.Call{Name: "echo", Args: map[string]any{"text": "a"}}, echoTool("echo", "", ok), "denied", "Denied by policy"},
		{"unknown class is denied", ollamatest.Call{Name: "echo", Args: map[string]any{"text": "a"}}, echoTool("echo", "teleport", ok), "denied", "retrying will not help"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := runLoop(t, ollamatest.Turns(ollamatest.Reply{Calls: []ollamatest.Call{tt.call}}, ollamatest.Reply{Content: "ok"}), tt.tool)
			if tr.Stop != agent.StopAnswered {
				t.Fatalf("stop = %s (%s), want answered: the loop must go on after an error", tr.Stop, tr.Err)
			}
			if len(tr.Calls) != 1 {
				t.Fatalf("calls = %d, want 1", len(tr.Calls))
			}
			c := tr.Calls[0]
			if !c.IsError || c.ErrorKind != tt.wantKind || !strings.Contains(c.Result, tt.wantText) {
				t.Errorf("call = error %v kind %q result %q; want error kind %q containing %q", c.IsError, c.ErrorKind, c.Result, tt.wantKind, tt.wantText)
			}
			// the observation is what the model reads next
			last := tr.Messages[len(tr.Messages)-2]
			if last.Role != "tool" || last.Content != c.Result {
				t.Errorf("tool message = %+v, want the observation", last)
			}
		})
	}
}

func TestToolCallsRunInOrder(t *testing.T) {
	var seen []string
	tool := echoTool("echo", agent.ClassRead, func(a map[string]any) (agent.Result, error) {
		seen = append(seen, a["text"].(string))
		return agent.Result{Text: "ok " + a["text"].(string)}, nil
	})
	tr := runLoop(t, ollamatest.Turns(ollamatest.Reply{Calls: []ollamatest.Call{
		{Name: "echo", Args: map[string]any{"text": "1"}},
		{Name: "echo", Args: map[string]any{"text": "2"}},
		{Name: "echo", Args: map[string]any{"text": "3"}},
	}}), tool)
	if strings.Join(seen, ",") != "1,2,3" {
		t.Errorf("calls ran as %v, want 1,2,3", seen)
	}
	var tools []string
	for _, m := range tr.Messages {
		if m.Role == "tool" {
			tools = append(tools, m.Content)
		}
	}
	if strings.Join(tools, "|") != "ok 1|ok 2|ok 3" {
		t.Errorf("tool messages %v, want one per call in order", tools)
	}
	if tr.Calls[2].Index != 2 || tr.Calls[2].Turn != 0 {
		t.Errorf("call indexes wrong: %+v", tr.Calls[2])
	}
}

func TestTruncatedPromptIsMarked(t *testing.T) {
	long := strings.Repeat("word ", 200)
	tr := runLoop(t, ollamatest.Turns(ollamatest.Reply{Content: long}))
	if len(tr.Turns) != 1 {
		t.Fatalf("turns = %d", len(tr.Turns))
	}
	// the fake counts under 100 prompt words: under num_ctx 150, not truncated
	if tr.Turns[0].Truncated {
		t.Errorf("short prompt marked truncated: %+v", tr.Turns[0])
	}
	tool := echoTool("echo", agent.ClassRead, func(map[string]any) (agent.Result, error) { return agent.Result{Text: long}, nil })
	tr = runLoop(t, ollamatest.Turns(ollamatest.Reply{Calls: []ollamatest.Call{{Name: "echo", Args: map[string]any{"text": "a"}}}}, ollamatest.Reply{Content: "ok"}), tool)
	if !tr.Turns[1].Truncated || tr.Turns[1].PromptTokens != 150 {
		t.Errorf("prompt over num_ctx: turn %+v, want truncated at 150", tr.Turns[1])
	}
}

func TestModelErrorIsInfraError(t *testing.T) {
	tr := runLoop(t, ollamatest.Turns(ollamatest.Reply{Status: 503, Error: "server busy"}))
	if tr.Stop != agent.StopInfraError || !strings.Contains(tr.Err, "server busy") {
		t.Errorf("stop = %s, err = %q; want infra_error with the server's message", tr.Stop, tr.Err)
	}
}

func TestReplyCutByNumPredict(t *testing.T) {
	tr := runLoop(t, ollamatest.Turns(ollamatest.Reply{Content: "Let me call the", DoneReason: "length"}))
	if tr.Stop != agent.StopReplyCut {
		t.Errorf("stop = %s, want reply_cut", tr.Stop)
	}
}
