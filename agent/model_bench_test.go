package agent_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/internal/cputime"
	"github.com/benchhq/bench/internal/ollamatest"
)

// chatScripts are the scripts a fake model spawned in a child process
// (ollamatest.Spawn) can serve to this package's benchmarks.
var chatScripts = map[string]ollamatest.Script{
	// a reply with one tool call, whatever the request
	"tool-call": func(*api.ChatRequest) ollamatest.Reply {
		return ollamatest.Reply{Content: "Reading the file first.", Calls: []ollamatest.Call{{Name: "read_file", Args: map[string]any{"path": "hello.py"}}}}
	},
}

func TestMain(m *testing.M) {
	ollamatest.ServeChild(chatScripts)
	os.Exit(m.Run())
}

// fifthTurn is the request of an attempt's fifth turn: the built-in tools,
// the system prompt, the task and four tool calls with their results.
func fifthTurn(tb testing.TB) *api.ChatRequest {
	tb.Helper()
	ws, err := agent.NewWorkspace(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	req := &api.ChatRequest{
		Model:   "fake",
		Options: map[string]any{"num_ctx": 8192, "num_predict": 2048, "temperature": 0.6, "seed": 42},
		Messages: []api.Message{
			{Role: "system", Content: agent.DefaultSystemPrompt},
			{Role: "user", Content: "Fix the greeting in hello.py: it says Helo instead of Hello."},
		},
	}
	for _, t := range agent.Builtins(ws, agent.BuiltinOptions{}) {
		def, err := agent.OllamaTool(t.Spec())
		if err != nil {
			tb.Fatal(err)
		}
		req.Tools = append(req.Tools, def)
	}
	result := strings.Repeat("def greet(name):\n    return 'Helo, ' + name\n", 20)
	for i := range 4 {
		args := api.NewToolCallFunctionArguments()
		args.Set("path", "hello.py")
		req.Messages = append(req.Messages,
			api.Message{Role: "assistant", Content: "Let me look.", ToolCalls: []api.ToolCall{{ID: "call_0", Function: api.ToolCallFunction{Index: i, Name: "read_file", Arguments: args}}}},
			api.Message{Role: "tool", Content: result, ToolName: "read_file", ToolCallID: "call_0"})
	}
	return req
}

// apiClient is a model that sends every request through the official
// client's Chat, as bench did before its direct POST (a streamed reply
// accumulated).
type apiClient struct{ c *api.Client }

func (m apiClient) Chat(ctx context.Context, req *api.ChatRequest) (*api.ChatResponse, error) {
	stream := false
	r := *req
	r.Stream = &stream
	var out *api.ChatResponse
	err := m.c.Chat(ctx, &r, func(resp api.ChatResponse) error {
		if out == nil {
			out = &resp
			return nil
		}
		out.Message.Content += resp.Message.Content
		out.Message.Thinking += resp.Message.Thinking
		out.Message.ToolCalls = append(out.Message.ToolCalls, resp.Message.ToolCalls...)
		if resp.Done {
			out.Done, out.DoneReason, out.Metrics = true, resp.DoneReason, resp.Metrics
		}
		return nil
	})
	return out, err
}

// encodedTools is bench's client sent the tool list encoded once, as the
// agent loop sends it.
type encodedTools struct {
	o     *agent.Ollama
	tools json.RawMessage
}

func (m encodedTools) Chat(ctx context.Context, req *api.ChatRequest) (*api.ChatResponse, error) {
	return m.o.ChatEncoded(ctx, req, agent.Encoded{Tools: m.tools})
}

// BenchmarkChat sends the request of a fifth turn to a fake model in a
// child process, through the official client's Chat (client=ollama-api)
// and through bench's model client (client=bench; client=bench-tools-encoded
// with the tool list encoded once, as the agent loop sends it), in one
// run. Reported:
// cpu-µs/op, this process's CPU time per request (the fake model's is not
// in it), and B/op.
//
//	go test -run '^$' -bench Chat -benchtime 500x ./agent/
func BenchmarkChat(b *testing.B) {
	srv := ollamatest.Spawn(b, "tool-call", ollamatest.SpawnOptions{})
	u, err := url.Parse(srv.URL)
	if err != nil {
		b.Fatal(err)
	}
	ours, err := agent.NewOllama(srv.URL, nil)
	if err != nil {
		b.Fatal(err)
	}
	req := fifthTurn(b)
	body, _ := json.Marshal(req)
	b.Logf("request: %d bytes, %d messages, %d tools", len(body), len(req.Messages), len(req.Tools))
	tools, err := json.Marshal(req.Tools)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		model agent.Model
	}{
		{"ollama-api", apiClient{api.NewClient(u, &http.Client{})}},
		{"bench", ours},
		{"bench-tools-encoded", encodedTools{ours, tools}},
	} {
		b.Run("client="+c.name, func(b *testing.B) {
			b.ReportAllocs()
			ctx := context.Background()
			cpu0 := cputime.Self()
			for b.Loop() {
				resp, err := c.model.Chat(ctx, req)
				if err != nil || len(resp.Message.ToolCalls) != 1 {
					b.Fatalf("chat: %v %+v", err, resp)
				}
			}
			b.ReportMetric(float64((cputime.Self()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}
