package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/internal/ollamatest"
	"github.com/benchhq/bench/internal/openaitest"
)

func newOpenAI(t *testing.T, script ollamatest.Script, opts ...openaitest.Option) (*openaitest.Server, *agent.OpenAI) {
	t.Helper()
	srv := openaitest.New(script, opts...)
	t.Cleanup(srv.Close)
	m, err := agent.NewOpenAI(srv.URL+"/v1", nil)
	if err != nil {
		t.Fatal(err)
	}
	return srv, m
}

// TestOpenAILoopRunsTools drives the whole loop through the OpenAI
// backend: tool calls with their arguments and ids, the tool message that
// answers each, token counts from usage, and the endpoint of each turn.
func TestOpenAILoopRunsTools(t *testing.T) {
	var got []string
	tool := echoTool("echo", agent.ClassRead, func(a map[string]any) (agent.Result, error) {
		got = append(got, a["text"].(string))
		return agent.Result{Text: "echoed " + a["text"].(string)}, nil
	})
	srv, model := newOpenAI(t, ollamatest.Turns(
		ollamatest.Reply{Calls: []ollamatest.Call{{Name: "echo", Args: map[string]any{"text": "a"}}, {Name: "echo", Args: map[string]any{"text": "b"}}}, PromptTokens: 40, CompletionTokens: 7},
		ollamatest.Reply{Content: "all done", PromptTokens: 90, CompletionTokens: 3},
	))
	reg := agent.NewRegistry()
	if err := reg.Add(tool); err != nil {
		t.Fatal(err)
	}
	tr := agent.Run(context.Background(), agent.Config{
		Model: model, ModelName: "fake", Instruction: "echo a then b", Tools: reg,
		Options: map[string]any{"num_ctx": 4096, "temperature": 0, "seed": 42, "num_predict": 64}, MaxTurns: 5,
	})
	if tr.Stop != agent.StopAnswered {
		t.Fatalf("stop %s (%s), want answered", tr.Stop, tr.Err)
	}
	if strings.Join(got, ",") != "a,b" {
		t.Errorf("tool ran with %v, want a,b", got)
	}
	if len(tr.Turns) != 2 || tr.Turns[0].PromptTokens != 40 || tr.Turns[0].CompletionTokens != 7 || tr.Turns[1].PromptTokens != 90 {
		t.Errorf("turns %+v: want the usage counts 40/7 and 90/3", tr.Turns)
	}
	for _, tu := range tr.Turns {
		if tu.Endpoint != srv.URL {
			t.Errorf("turn %d endpoint %q, want %q", tu.Index, tu.Endpoint, srv.URL)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("requests %d, want 2", len(reqs))
	}
	first := reqs[0]
	for k, want := range map[string]string{"temperature": "0", "seed": "42", "max_tokens": "64"} {
		if v, ok := first[k].(json.Number); !ok || v.String() != want {
			t.Errorf("request %s = %v, want %s (sent even when zero)", k, first[k], want)
		}
	}
	for _, k := range []string{"num_ctx", "num_predict", "options"} {
		if _, ok := first[k]; ok {
			t.Errorf("request has %s: an OpenAI server has no such field", k)
		}
	}
	tools, _ := first["tools"].([]any)
	if len(tools) != 1 || tools[0].(map[string]any)["type"] != "function" {
		t.Errorf("tools %v, want one function tool", first["tools"])
	}
	// The second request answers each call by its id.
	msgs := reqs[1]["messages"].([]any)
	asst := msgs[2].(map[string]any)
	calls := asst["tool_calls"].([]any)
	if asst["content"] != nil || len(calls) != 2 {
		t.Fatalf("assistant message %v: want null content and two calls", asst)
	}
	for i, c := range calls {
		cm := c.(map[string]any)
		fn := cm["function"].(map[string]any)
		if _, ok := fn["arguments"].(string); !ok {
			t.Errorf("call %d arguments %v: want a JSON string", i, fn["arguments"])
		}
		answer := msgs[3+i].(map[string]any)
		if answer["role"] != "tool" || answer["tool_call_id"] != cm["id"] || cm["id"] == "" {
			t.Errorf("message %d %v does not answer call id %v", 3+i, answer, cm["id"])
		}
	}
}

func TestOpenAIReplyCutAndIDs(t *testing.T) {
	// A server that gives tool calls no id, arguments that are not JSON,
	// and finish_reason "length".
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if strings.Contains(r.URL.Path, "cut") {
			w.Write([]byte(`{"choices":[{"message":{"role":"assistant","content":"I was about to"},"finish_reason":"length"}],"usage":{"prompt_tokens":5,"completion_tokens":64}}`))
			return
		}
		w.Write([]byte(`{"choices":[{"message":{"role":"assistant","content":null,"reasoning_content":"hmm","tool_calls":[{"type":"function","function":{"name":"echo","arguments":"{\"text\": \"x\"}"}},{"type":"function","function":{"name":"echo","arguments":"{text: x"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":5,"completion_tokens":9},"timings":{"prompt_ms":12.5,"predicted_ms":40}}`))
	}))
	defer srv.Close()
	m, _ := agent.NewOpenAI(srv.URL, nil)
	resp, err := m.Chat(context.Background(), &api.ChatRequest{Model: "m", Messages: []api.Message{{Role: "user", Content: "hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	tc := resp.Message.ToolCalls
	if len(tc) != 2 || tc[0].ID == "" || tc[0].ID == tc[1].ID {
		t.Fatalf("tool calls %+v: want two, each with its own id", tc)
	}
	if v, _ := tc[0].Function.Arguments.Get("text"); v != "x" {
		t.Errorf("arguments %s, want text x", tc[0].Function.Arguments.String())
	}
	if v, _ := tc[1].Function.Arguments.Get(agent.RawArgumentsKey); v != "{text: x" {
		t.Errorf("broken arguments %s: want the raw text kept under %s", tc[1].Function.Arguments.String(), agent.RawArgumentsKey)
	}
	if resp.Message.Thinking != "hmm" || resp.DoneReason != "stop" || resp.PromptEvalDuration.Milliseconds() != 12 || resp.EvalDuration.Milliseconds() != 40 {
		t.Errorf("reply %+v: want thinking, done_reason stop and llama.cpp's timings", resp)
	}

	cut, _ := agent.NewOpenAI(srv.URL+"/cut", nil)
	resp, err = cut.Chat(context.Background(), &api.ChatRequest{Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if resp.DoneReason != "length" || resp.EvalCount != 64 {
		t.Errorf("cut reply: done_reason %q eval %d, want length and 64", resp.DoneReason, resp.EvalCount)
	}
}

func TestParseOpenAIError(t *testing.T) {
	tests := []struct {
		server string
		status int
		body   string
		want   error
	}{
		{"vllm model", 404, `{"object":"error","message":"The model ` + "`nope`" + ` does not exist.","type":"NotFoundError","param":null,"code":404}`, agent.ErrModelNotFound},
		{"openai model", 404, `{"error":{"message":"The model ` + "`nope`" + ` does not exist or you do not have access to it.","type":"invalid_request_error","param":null,"code":"model_not_found"}}`, agent.ErrModelNotFound},
		{"ollama v1 model", 404, `{"error":{"message":"model \"nope\" not found, try pulling it first","type":"api_error","param":null,"code":null}}`, agent.ErrModelNotFound},
		{"vllm tools", 400, `{"object":"error","message":"\"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set","type":"BadRequestError","param":null,"code":400}`, agent.ErrNoToolSupport},
		{"llama.cpp tools", 500, `{"error":{"code":500,"message":"tools param requires --jinja flag","type":"server_error"}}`, agent.ErrNoToolSupport},
		{"ollama v1 tools", 400, `{"error":{"message":"registry.ollama.ai/library/gemma:latest does not support tools","type":"api_error","param":null,"code":null}}`, agent.ErrNoToolSupport},
		{"vllm context", 400, `{"error":{"message":"'max_tokens' or 'max_completion_tokens' is too large: 8000. This model's maximum context length is 4096 tokens and your request has 2778 input tokens (8000 > 4096 - 2778). None","type":"BadRequestError","param":null,"code":400}}`, agent.ErrContextExceeded},
		{"openai context", 400, `{"error":{"message":"This model's maximum context length is 8192 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`, agent.ErrContextExceeded},
		{"llama.cpp context", 400, `{"error":{"code":400,"message":"request (4476 tokens) exceeds the available context size (4096 tokens)","type":"exceed_context_size_error","n_prompt_tokens":4476,"n_ctx":4096}}`, agent.ErrContextExceeded},
		{"sglang context", 400, `{"object":"error","message":"The input (5000 tokens) is longer than the model's context length (4096 tokens).","type":"BadRequestError","param":null,"code":400}`, agent.ErrContextExceeded},
		{"server down", 503, `upstream connect error`, nil},
		{"engine dead", 500, `{"object":"error","message":"EngineCore encountered an issue.","type":"InternalServerError","code":500}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.server, func(t *testing.T) {
			e := agent.ParseOpenAIError(tt.status, []byte(tt.body))
			if e.Kind != tt.want {
				t.Errorf("kind %v, want %v (message %q)", e.Kind, tt.want, e.Message)
			}
			if tt.want != nil && !errors.Is(e, tt.want) {
				t.Errorf("errors.Is(%v, %v) = false", e, tt.want)
			}
			if e.Message == "" || !strings.Contains(e.Error(), e.Message) {
				t.Errorf("error %q lacks the server's message", e.Error())
			}
		})
	}
}

// TestOpenAIErrorsSayWhatToDo: the errors of an OpenAI-compatible server,
// through the real client and the fake server, get the same kind of
// hint as Ollama's.
func TestOpenAIErrorsSayWhatToDo(t *testing.T) {
	_, model := newOpenAI(t, ollamatest.Turns(), openaitest.WithModels("qwen3"), openaitest.WithoutTools("base"), openaitest.WithContext(50))
	tool := []api.Tool{{Type: "function", Function: api.ToolFunction{Name: "t", Description: "d"}}}
	long := strings.Repeat("word ", 60)
	dead, _ := agent.NewOpenAI(closedPort(t), nil)
	tests := []struct {
		name  string
		model agent.Model
		req   api.ChatRequest
		kind  error
		hint  string
	}{
		{"unknown model", model, api.ChatRequest{Model: "nope", Messages: []api.Message{{Role: "user", Content: "hi"}}}, agent.ErrModelNotFound, "/v1/models"},
		{"no tools", model, api.ChatRequest{Model: "base", Tools: tool, Messages: []api.Message{{Role: "user", Content: "hi"}}}, agent.ErrNoToolSupport, "--enable-auto-tool-choice"},
		{"context", model, api.ChatRequest{Model: "qwen3", Messages: []api.Message{{Role: "user", Content: long}}}, agent.ErrContextExceeded, "--max-model-len"},
		{"unreachable", dead, api.ChatRequest{Model: "qwen3"}, nil, "no openai-compatible server answers"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.model.Chat(context.Background(), &tt.req)
			var me *agent.ModelError
			if !errors.As(err, &me) {
				t.Fatalf("error %v: want a *ModelError", err)
			}
			if tt.kind != nil && !errors.Is(err, tt.kind) {
				t.Errorf("error %v: want kind %v", err, tt.kind)
			}
			if !strings.Contains(me.Hint(), tt.hint) {
				t.Errorf("hint %q: want it to say %q", me.Hint(), tt.hint)
			}
			if !strings.HasPrefix(err.Error(), "openai-compatible server at ") {
				t.Errorf("error %q: want it to name the kind of server", err)
			}
		})
	}
}

// TestOpenAIContextFullEndsTheAttempt: a server that refuses a prompt
// longer than its context ends the attempt as a limit reached (scored),
// not as an infrastructure failure (retried, never scored).
func TestOpenAIContextFullEndsTheAttempt(t *testing.T) {
	tool := echoTool("echo", agent.ClassRead, func(a map[string]any) (agent.Result, error) {
		return agent.Result{Text: strings.Repeat("lots of output ", 40)}, nil
	})
	_, model := newOpenAI(t, ollamatest.Turns(
		ollamatest.Reply{Calls: []ollamatest.Call{{Name: "echo", Args: map[string]any{"text": "a"}}}},
		ollamatest.Reply{Content: "done"},
	), openaitest.WithContext(200))
	reg := agent.NewRegistry()
	if err := reg.Add(tool); err != nil {
		t.Fatal(err)
	}
	tr := agent.Run(context.Background(), agent.Config{Model: model, ModelName: "fake", Instruction: "go", Tools: reg,
		Options: map[string]any{"num_ctx": 200, "num_predict": 20}, MaxTurns: 5})
	if tr.Stop != agent.StopContextFull {
		t.Fatalf("stop %s (%s), want %s", tr.Stop, tr.Err, agent.StopContextFull)
	}
	if len(tr.Turns) != 1 || !strings.Contains(tr.Err, "maximum context length") {
		t.Errorf("turns %d, err %q: want the first turn kept and the server's words", len(tr.Turns), tr.Err)
	}
}

func TestCheckOpenAIOptions(t *testing.T) {
	if err := agent.CheckOpenAIOptions(map[string]any{"temperature": 0.2, "num_ctx": 8192, "num_predict": 100, "top_k": 20}); err != nil {
		t.Errorf("valid options refused: %v", err)
	}
	err := agent.CheckOpenAIOptions(map[string]any{"temperature": 0.2, "num_gpu": 1})
	if err == nil || !strings.Contains(err.Error(), "num_gpu") || !strings.Contains(err.Error(), "max") && !strings.Contains(err.Error(), "temperature") {
		t.Errorf("error %v: want num_gpu refused, with what is accepted", err)
	}
	if _, err := agent.NewOpenAI("gpu1:8000", nil); err == nil {
		t.Error("a URL without a scheme was accepted")
	}
}

// TestOpenAIReplyWithoutUsageIsAnError: a chat completion without its
// "usage" counts is refused, rather than stored as turns of 0 tokens.
func TestOpenAIReplyWithoutUsageIsAnError(t *testing.T) {
	body := `{"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}`
	m, err := agent.NewOpenAI(rawServer(t, http.StatusOK, body), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Chat(context.Background(), &api.ChatRequest{Model: "m"}); err == nil || !strings.Contains(err.Error(), "usage") {
		t.Errorf("a reply without usage: %v, want an error that says so", err)
	}
}
