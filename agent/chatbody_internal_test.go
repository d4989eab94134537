package agent

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/ollama/ollama/api"
)

// The request sent with its tools and messages encoded ahead (each message
// once, as the loop adds it) is byte for byte the request encoded whole.
func TestChatBodyWithEncodedPartsIsTheWholeRequest(t *testing.T) {
	args := api.NewToolCallFunctionArguments()
	args.Set("path", "a <b> & \"c\".py")
	think := api.ThinkValue{Value: true}
	tool := api.Tool{Type: "function", Function: api.ToolFunction{Name: "read_file", Description: "Read <a> file & more"}}
	conversation := []api.Message{
		{Role: "system", Content: "You are an agent."},
		{Role: "user", Content: "Fix it: \"Helo\" → Hello, <b>now</b>\n"},
		{Role: "assistant", Content: "Looking.", ToolCalls: []api.ToolCall{{ID: "call_0", Function: api.ToolCallFunction{Name: "read_file", Arguments: args}}}},
		{Role: "tool", Content: "line 1\tHelo\u2028", ToolName: "read_file", ToolCallID: "call_0"},
		{Role: "assistant", Content: "", Thinking: "hmm"},
	}
	tests := []struct {
		name string
		req  api.ChatRequest
	}{
		{"plain", api.ChatRequest{Model: "qwen3:0.6b"}},
		{"odd model name", api.ChatRequest{Model: "a\"b<c>&d"}},
		{"options, think, format", api.ChatRequest{Model: "m", Options: map[string]any{"seed": 7, "num_ctx": 4096}, Think: &think, Format: json.RawMessage(`"json"`)}},
		{"tools", api.ChatRequest{Model: "m", Tools: api.Tools{tool}}},
		{"no messages", api.ChatRequest{Model: "m", Tools: api.Tools{tool}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var log messageLog
			for n := 0; n <= len(conversation); n++ {
				if tt.name == "no messages" && n > 0 {
					break
				}
				req := tt.req
				req.Messages = conversation[:n]
				want, err := chatBody(&req, Encoded{})
				if err != nil {
					t.Fatal(err)
				}
				msgs, err := log.encode(req.Messages)
				if err != nil {
					t.Fatal(err)
				}
				tools, err := json.Marshal(req.Tools)
				if err != nil {
					t.Fatal(err)
				}
				// The tools encoded ahead go last: the same request, the
				// fields in another order.
				wantTools, err := chatBody(&req, Encoded{Tools: tools})
				if err != nil {
					t.Fatal(err)
				}
				var a, b any
				if json.Unmarshal(want, &a) != nil || json.Unmarshal(wantTools, &b) != nil || !reflect.DeepEqual(a, b) {
					t.Fatalf("with the tools encoded ahead:\n%s\nwant the same as\n%s", wantTools, want)
				}
				for _, enc := range []Encoded{{Messages: msgs}, {Tools: tools, Messages: msgs}} {
					got, err := chatBody(&req, enc)
					if err != nil {
						t.Fatal(err)
					}
					want := want
					if enc.Tools != nil {
						want = wantTools
					}
					if !bytes.Equal(got, want) {
						t.Fatalf("%d messages, tools %t, messages %t encoded ahead:\n%s\nwant\n%s", n, enc.Tools != nil, enc.Messages != nil, got, want)
					}
				}
			}
		})
	}
}

// BenchmarkConversationBodies builds every request body of a 40-turn
// attempt whose tool results are 4 KB each: the messages encoded whole at
// every turn (whole), or each once as it is added (ahead), as the loop
// does. Reported per attempt.
//
//	go test -run '^$' -bench ConversationBodies -benchmem ./agent/
func BenchmarkConversationBodies(b *testing.B) {
	result := string(bytes.Repeat([]byte("def greet(name): return 'Helo, ' + name\n"), 100))
	tools, err := json.Marshal(api.Tools{{Type: "function", Function: api.ToolFunction{Name: "read_file", Description: "Read a file."}}})
	if err != nil {
		b.Fatal(err)
	}
	conversation := []api.Message{{Role: "system", Content: "You are an agent."}, {Role: "user", Content: "Fix the greeting."}}
	for i := range 40 {
		args := api.NewToolCallFunctionArguments()
		args.Set("path", "hello.py")
		conversation = append(conversation,
			api.Message{Role: "assistant", Content: "Looking.", ToolCalls: []api.ToolCall{{ID: "call_0", Function: api.ToolCallFunction{Index: i, Name: "read_file", Arguments: args}}}},
			api.Message{Role: "tool", Content: result, ToolName: "read_file", ToolCallID: "call_0"})
	}
	for _, ahead := range []bool{false, true} {
		name := "whole"
		if ahead {
			name = "ahead"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var log messageLog
				for turn := 1; turn <= 40; turn++ {
					req := api.ChatRequest{Model: "m", Messages: conversation[:2*turn], Options: map[string]any{"seed": 1}}
					enc := Encoded{Tools: tools}
					if ahead {
						var err error
						if enc.Messages, err = log.encode(req.Messages); err != nil {
							b.Fatal(err)
						}
					}
					if _, err := chatBody(&req, enc); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
