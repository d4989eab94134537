package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/ollama/ollama/api"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/internal/ollamatest"
)

// stubTool is a test tool whose behaviour is a function.
type stubTool struct {
	spec agent.Spec
	fn   func(map[string]any) (agent.Result, error)
	// call, when set, is used instead of fn: it sees the call's context.
	call func(context.Context, map[string]any) (agent.Result, error)
}

func (s stubTool) Spec() agent.Spec { return s.spec }
func (s stubTool) Call(ctx context.Context, args map[string]any) (agent.Result, error) {
	if s.call != nil {
		return s.call(ctx, args)
	}
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

// TestModelSilentPastTheWallTime: a model that never answers is the
// server's failure, not the agent's, whatever the wall time: the attempt
// is an infrastructure failure (retried), never a wall_time stop scored 0.
func TestModelSilentPastTheWallTime(t *testing.T) {
	srv := ollamatest.New(ollamatest.Turns(ollamatest.Reply{Content: "late", Delay: time.Minute}))
	defer srv.Close()
	model, err := agent.NewOllama(srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	tr := agent.Run(context.Background(), agent.Config{Model: model, ModelName: "fake", Instruction: "x",
		WallTime: 300 * time.Millisecond, RequestTimeout: 10 * time.Minute})
	if tr.Stop != agent.StopInfraError || !strings.Contains(tr.Err, "had not answered") || len(tr.Turns) != 0 {
		t.Errorf("stop %s (%q), %d turns; want an infrastructure failure saying the model had not answered", tr.Stop, tr.Err, len(tr.Turns))
	}
}

func TestReplyCutByNumPredict(t *testing.T) {
	tr := runLoop(t, ollamatest.Turns(ollamatest.Reply{Content: "Let me call the", DoneReason: "length"}))
	if tr.Stop != agent.StopReplyCut {
		t.Errorf("stop = %s, want reply_cut", tr.Stop)
	}
}

// A context that ends during a turn stops the turn: the calls after the one
// it cut do not run (the hidden tests would score their effects), yet each
// gets an answer so that the conversation stays whole.
func TestInterruptedTurnRunsNoMoreCalls(t *testing.T) {
	tests := []struct {
		name string
		// wallTime bounds the attempt; otherwise the first tool interrupts
		// the run itself, as SIGINT does.
		wallTime time.Duration
		// firstFails makes the first tool wait for the end and fail then;
		// otherwise it succeeds.
		firstFails bool
		writes     int
		wantStop   agent.StopReason
		wantKinds  []string
		wantText   string
	}{
		{"wall time during a slow call", time.Second, true, 1, agent.StopWallTime, []string{"timeout", "not_run"}, "wall-time limit was reached"},
		{"interrupted during a slow call", 0, true, 1, agent.StopCanceled, []string{"canceled", "not_run"}, "the run was interrupted"},
		{"interrupted by a call that succeeds", 0, false, 2, agent.StopCanceled, []string{"", "not_run", "not_run"}, "the run was interrupted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			slow := echoTool("run_slow", agent.ClassExec, nil)
			slow.call = func(ctx context.Context, _ map[string]any) (agent.Result, error) {
				if tt.wallTime == 0 {
					cancel()
				}
				if !tt.firstFails {
					return agent.Result{Text: "done"}, nil
				}
				<-ctx.Done() // a command running until it is killed
				return agent.Result{}, errors.New("killed")
			}
			var ran atomic.Bool
			write := echoTool("write", agent.ClassWrite, func(map[string]any) (agent.Result, error) {
				ran.Store(true)
				return agent.Result{Text: "written"}, nil
			})
			calls := []ollamatest.Call{{Name: "run_slow", Args: map[string]any{"text": "sleep"}}}
			for range tt.writes {
				calls = append(calls, ollamatest.Call{Name: "write", Args: map[string]any{"text": "x"}})
			}
			srv := ollamatest.New(ollamatest.Turns(ollamatest.Reply{Calls: calls}, ollamatest.Reply{Content: "ok"}))
			defer srv.Close()
			model, err := agent.NewOllama(srv.URL, nil)
			if err != nil {
				t.Fatal(err)
			}
			reg := agent.NewRegistry()
			for _, tool := range []agent.Tool{slow, write} {
				if err := reg.Add(tool); err != nil {
					t.Fatal(err)
				}
			}
			tr := agent.Run(ctx, agent.Config{
				Model: model, ModelName: "fake", Instruction: "do it", Tools: reg,
				MaxTurns: 10, WallTime: tt.wallTime,
			})
			if ran.Load() {
				t.Error("a call after the end of the attempt ran")
			}
			if tr.Stop != tt.wantStop {
				t.Errorf("stop = %s (%s), want %s", tr.Stop, tr.Err, tt.wantStop)
			}
			if tt.wantStop == agent.StopCanceled && tr.Err == "" {
				t.Error("an interruption without its cause in Err")
			}
			if len(tr.Calls) != len(tt.wantKinds) {
				t.Fatalf("%d calls recorded, want %d: %+v", len(tr.Calls), len(tt.wantKinds), tr.Calls)
			}
			tools := tr.Messages[len(tr.Messages)-len(tr.Calls):]
			for i, c := range tr.Calls {
				if c.ErrorKind != tt.wantKinds[i] || c.IsError != (tt.wantKinds[i] != "") || c.Index != i || c.Turn != 0 {
					t.Errorf("call %d: kind %q error %v index %d turn %d, want kind %q", i, c.ErrorKind, c.IsError, c.Index, c.Turn, tt.wantKinds[i])
				}
				if c.ErrorKind == "not_run" && (!strings.Contains(c.Result, tt.wantText) || c.Class != agent.ClassWrite || c.Arguments != `{"text":"x"}` || c.Decision != "") {
					t.Errorf("call %d not run: %+v, want its tool's class, its arguments, no decision and a text saying %q", i, c, tt.wantText)
				}
				if m := tools[i]; m.Role != "tool" || m.Content != c.Result || m.ToolName != c.Tool {
					t.Errorf("message for call %d = %+v, want the tool's answer %q", i, m, c.Result)
				}
			}
		})
	}
}

func TestNumCtx(t *testing.T) {
	tests := []struct {
		opts map[string]any
		want int
		ok   bool
	}{
		{nil, 0, true},
		{map[string]any{"num_ctx": 8192}, 8192, true},
		{map[string]any{"num_ctx": int64(4096)}, 4096, true},
		{map[string]any{"num_ctx": 2048.0}, 2048, true},
		{map[string]any{"num_ctx": json.Number("1024")}, 1024, true},
		{map[string]any{"num_ctx": 1.5}, 0, false},
		{map[string]any{"num_ctx": "8k"}, 0, false},
	}
	for _, tt := range tests {
		got, err := agent.NumCtx(tt.opts)
		if got != tt.want || (err == nil) != tt.ok {
			t.Errorf("NumCtx(%v) = %d, %v; want %d, ok %v", tt.opts, got, err, tt.want, tt.ok)
		}
	}
}

// A num_ctx that is not an integer is the harness's fault: the loop stops
// before the first request and says what is wrong.
func TestBadNumCtxStopsRun(t *testing.T) {
	tr := agent.Run(context.Background(), agent.Config{
		Model: nil, ModelName: "fake", Instruction: "do it", Options: map[string]any{"num_ctx": "8k"},
	})
	if tr.Stop != agent.StopInfraError || !strings.Contains(tr.Err, "num_ctx") || len(tr.Turns) != 0 {
		t.Errorf("stop = %s, err = %q, %d turns; want infra_error naming num_ctx before any turn", tr.Stop, tr.Err, len(tr.Turns))
	}
}

// policyFunc is a Policy that is a function.
type policyFunc func(context.Context, agent.Call) agent.Verdict

func (f policyFunc) Decide(ctx context.Context, c agent.Call) agent.Verdict { return f(ctx, c) }

// An interruption while the policy decides (an approver can take long)
// keeps the call from running, even when the answer is allow.
func TestInterruptedWhileDeciding(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var ran atomic.Bool
	write := echoTool("write", agent.ClassWrite, func(map[string]any) (agent.Result, error) {
		ran.Store(true)
		return agent.Result{Text: "written"}, nil
	})
	srv := ollamatest.New(ollamatest.Turns(ollamatest.Reply{Calls: []ollamatest.Call{{Name: "write", Args: map[string]any{"text": "x"}}}}, ollamatest.Reply{Content: "ok"}))
	defer srv.Close()
	model, err := agent.NewOllama(srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	reg := agent.NewRegistry()
	if err := reg.Add(write); err != nil {
		t.Fatal(err)
	}
	tr := agent.Run(ctx, agent.Config{
		Model: model, ModelName: "fake", Instruction: "do it", Tools: reg, MaxTurns: 10,
		Policy: policyFunc(func(context.Context, agent.Call) agent.Verdict {
			cancel()
			return agent.Verdict{Decision: agent.Allow, Rule: "test"}
		}),
	})
	if ran.Load() {
		t.Error("the call ran after the run was interrupted")
	}
	if tr.Stop != agent.StopCanceled || len(tr.Calls) != 1 || tr.Calls[0].ErrorKind != "not_run" || !strings.Contains(tr.Calls[0].Result, "interrupted") {
		t.Errorf("stop %s, calls %+v; want canceled and one call not run", tr.Stop, tr.Calls)
	}
}

// countingTool counts how often its Spec is asked for.
type countingTool struct {
	stubTool
	specs *atomic.Int32
}

func (c countingTool) Spec() agent.Spec {
	c.specs.Add(1)
	return c.stubTool.Spec()
}

// The registry takes a tool's spec once, at Add: the loop does not rebuild
// it for each call.
func TestRegistryTakesSpecOnce(t *testing.T) {
	var specs atomic.Int32
	tool := countingTool{echoTool("echo", agent.ClassRead, func(a map[string]any) (agent.Result, error) {
		return agent.Result{Text: "ok"}, nil
	}), &specs}
	call := ollamatest.Call{Name: "echo", Args: map[string]any{"text": "a"}}
	tr := runLoop(t, ollamatest.Turns(ollamatest.Reply{Calls: []ollamatest.Call{call, call}}, ollamatest.Reply{Calls: []ollamatest.Call{call}}, ollamatest.Reply{Content: "ok"}), tool)
	if len(tr.Calls) != 3 || tr.Calls[2].Class != agent.ClassRead || tr.Calls[2].Origin != agent.OriginBuiltin {
		t.Fatalf("calls %+v, want 3 with the tool's class and origin", tr.Calls)
	}
	if n := specs.Load(); n != 1 {
		t.Errorf("Spec() called %d times for 3 calls, want once (at Add)", n)
	}
}

func TestValidateJSON(t *testing.T) {
	reg := agent.NewRegistry()
	if err := reg.Add(echoTool("echo", agent.ClassRead, nil)); err != nil {
		t.Fatal(err)
	}
	if err := reg.Add(stubTool{spec: agent.Spec{Name: "free"}}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		tool, args string
		want       map[string]any
		wantErr    string
	}{
		{"echo", `{"text":"a"}`, map[string]any{"text": "a"}, ""},
		{"free", `{"n":1,"xs":[{"k":true}]}`, map[string]any{"n": 1.0, "xs": []any{map[string]any{"k": true}}}, ""},
		{"free", `null`, map[string]any{}, ""},
		{"echo", `{"text":3}`, nil, "do not match the schema of echo"},
		{"echo", `{}`, nil, "text"},
		{"free", `[1]`, nil, "not a JSON object: got an array"},
		{"free", `{`, nil, "not JSON"},
		{"free", ``, nil, "not JSON"},
		{"nope", `{}`, nil, `unknown tool "nope"`},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+tt.args, func(t *testing.T) {
			got, err := reg.ValidateJSON(tt.tool, []byte(tt.args))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ValidateJSON(%s, %s) = %v, %v; want an error about %q", tt.tool, tt.args, got, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ValidateJSON(%s, %s): %v", tt.tool, tt.args, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ValidateJSON(%s, %s) = %#v, want %#v", tt.tool, tt.args, got, tt.want)
			}
		})
	}
}

// toolsOnce is a model that takes the tool list and the messages encoded
// and records what it was given each turn.
type toolsOnce struct {
	inner agent.Model
	got   [][]byte
	// messages says, turn by turn, whether the messages encoded ahead
	// were req.Messages encoded whole.
	messages []bool
}

func (m *toolsOnce) Chat(ctx context.Context, req *api.ChatRequest) (*api.ChatResponse, error) {
	return nil, errors.New("Chat called: the loop should send the encoded tool list")
}

func (m *toolsOnce) ChatEncoded(ctx context.Context, req *api.ChatRequest, enc agent.Encoded) (*api.ChatResponse, error) {
	m.got = append(m.got, enc.Tools)
	whole, _ := json.Marshal(req.Messages)
	m.messages = append(m.messages, bytes.Equal(enc.Messages, whole))
	return m.inner.Chat(ctx, req)
}

// The tool list is the same in every request of an attempt: it is encoded
// once, before the first turn, and the same bytes go with every turn.
func TestToolListEncodedOncePerAttempt(t *testing.T) {
	srv := ollamatest.New(ollamatest.Turns(
		ollamatest.Reply{Calls: []ollamatest.Call{{Name: "echo", Args: map[string]any{"text": "a"}}}},
		ollamatest.Reply{Calls: []ollamatest.Call{{Name: "echo", Args: map[string]any{"text": "b"}}}},
		ollamatest.Reply{Content: "done"}))
	defer srv.Close()
	inner, _ := agent.NewOllama(srv.URL, nil)
	model := &toolsOnce{inner: inner}
	reg := agent.NewRegistry()
	if err := reg.Add(echoTool("echo", agent.ClassRead, func(a map[string]any) (agent.Result, error) { return agent.Result{Text: "ok"}, nil })); err != nil {
		t.Fatal(err)
	}
	tr := agent.Run(context.Background(), agent.Config{Model: model, ModelName: "fake", Instruction: "do it", Tools: reg, MaxTurns: 5})
	if tr.Stop != agent.StopAnswered || len(model.got) != 3 {
		t.Fatalf("stop %s (%s), %d encoded requests; want answered after 3", tr.Stop, tr.Err, len(model.got))
	}
	want, _ := json.Marshal(tr.Tools)
	for i, b := range model.got {
		if string(b) != string(want) {
			t.Errorf("turn %d: tools %s, want %s", i, b, want)
		}
		if &b[0] != &model.got[0][0] {
			t.Errorf("turn %d: the tool list was encoded again", i)
		}
		if !model.messages[i] {
			t.Errorf("turn %d: the messages encoded ahead are not the request's", i)
		}
	}
}

// A Refresh that changes the tools before a turn sends that turn the new
// list, and the change is recorded with the turn it took effect at.
func TestRefreshChangesTheToolList(t *testing.T) {
	srv := ollamatest.New(ollamatest.Turns(
		ollamatest.Reply{Calls: []ollamatest.Call{{Name: "echo", Args: map[string]any{"text": "a"}}}},
		ollamatest.Reply{Calls: []ollamatest.Call{{Name: "shout", Args: map[string]any{"text": "b"}}}},
		ollamatest.Reply{Content: "done"}))
	defer srv.Close()
	inner, _ := agent.NewOllama(srv.URL, nil)
	model := &toolsOnce{inner: inner}
	ok := func(a map[string]any) (agent.Result, error) { return agent.Result{Text: "ok"}, nil }
	reg := agent.NewRegistry()
	if err := reg.Add(echoTool("echo", agent.ClassRead, ok)); err != nil {
		t.Fatal(err)
	}
	refreshed := 0
	refresh := func(_ context.Context, reg *agent.Registry) []agent.ToolChange {
		refreshed++
		if refreshed != 1 {
			return nil
		}
		shout := echoTool("shout", agent.ClassRead, ok)
		shout.spec.Origin = "mcp:x"
		if errs := reg.Replace("mcp:x", []agent.Tool{shout}); len(errs) > 0 {
			t.Fatal(errs)
		}
		return []agent.ToolChange{{Origin: "mcp:x", Added: []string{"shout"}}}
	}
	tr := agent.Run(context.Background(), agent.Config{Model: model, ModelName: "fake", Instruction: "do it", Tools: reg, MaxTurns: 5, Refresh: refresh})
	if tr.Stop != agent.StopAnswered || len(model.got) != 3 || refreshed != 2 {
		t.Fatalf("stop %s (%s), %d requests, %d refreshes; want answered after 3 requests and 2 refreshes", tr.Stop, tr.Err, len(model.got), refreshed)
	}
	if strings.Contains(string(model.got[0]), "shout") || !strings.Contains(string(model.got[1]), `"shout"`) || !strings.Contains(string(model.got[2]), `"shout"`) {
		t.Errorf("tool lists sent:\n%s\n%s\n%s", model.got[0], model.got[1], model.got[2])
	}
	if tr.Calls[1].IsError || tr.Calls[1].Tool != "shout" {
		t.Errorf("the new tool's call: %+v", tr.Calls[1])
	}
	if len(tr.ToolChanges) != 1 || tr.ToolChanges[0].Turn != 1 || string(tr.ToolChanges[0].ToolsJSON) != string(model.got[1]) {
		t.Errorf("changes %+v", tr.ToolChanges)
	}
	if strings.Contains(string(tr.ToolsJSON), "shout") {
		t.Errorf("ToolsJSON is not the first list: %s", tr.ToolsJSON)
	}
}

// Replace puts a server's new tools where its old ones stood, and refuses
// a name another origin holds.
func TestRegistryReplace(t *testing.T) {
	ok := func(map[string]any) (agent.Result, error) { return agent.Result{}, nil }
	tool := func(name, origin string) agent.Tool {
		s := echoTool(name, agent.ClassRead, ok)
		s.spec.Origin = origin
		return s
	}
	reg := agent.NewRegistry()
	for _, tl := range []agent.Tool{tool("a", "builtin"), tool("x__1", "mcp:x"), tool("x__2", "mcp:x"), tool("y__1", "mcp:y")} {
		if err := reg.Add(tl); err != nil {
			t.Fatal(err)
		}
	}
	errs := reg.Replace("mcp:x", []agent.Tool{tool("x__3", "mcp:x"), tool("a", "mcp:x"), tool("x__1", "mcp:x")})
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), `tool "a" from mcp:x collides with the tool of the same name from builtin`) {
		t.Errorf("errors %v", errs)
	}
	var order []string
	for _, s := range reg.Specs() {
		order = append(order, s.Name)
	}
	if strings.Join(order, " ") != "a x__3 x__1 y__1" {
		t.Errorf("order %v", order)
	}
}
