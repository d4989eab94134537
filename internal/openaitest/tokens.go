package openaitest

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/ollama/ollama/api"

	"github.com/benchhq/bench/internal/ollamatest"
)

// Sampled is what the server tokenised and sampled for one request: what
// an export of exact token data must give back, turn by turn.
type Sampled struct {
	// Turn is the number of assistant messages in the request.
	Turn int
	// PromptIDs are the rendered prompt's ids; CompletionIDs the sampled
	// ids, with their Logprobs.
	PromptIDs     []int32
	CompletionIDs []int32
	Logprobs      []float64
}

// Sampled returns the token data of every request answered with token
// ids (WithTokenIDs), in the order answered.
func (s *Server) Sampled() []Sampled {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Sampled(nil), s.sampled...)
}

// tokenizer gives each distinct word an id, in the order first seen,
// after the template's own tokens.
type tokenizer struct {
	mu  sync.Mutex
	ids map[string]int32
}

// The template's tokens.
const (
	imStart  = "<|im_start|>"
	imEnd    = "<|im_end|>"
	callOpen = "<tool_call>"
	callEnd  = "</tool_call>"
	toolsTag = "<tools>"
)

func newTokenizer() *tokenizer {
	t := &tokenizer{ids: map[string]int32{}}
	for _, w := range []string{imStart, imEnd, callOpen, callEnd, toolsTag} {
		t.id(w)
	}
	return t
}

func (t *tokenizer) id(w string) int32 {
	t.mu.Lock()
	defer t.mu.Unlock()
	n, ok := t.ids[w]
	if !ok {
		n = int32(len(t.ids))
		t.ids[w] = n
	}
	return n
}

func (t *tokenizer) encode(words []string) []int32 {
	out := make([]int32, len(words))
	for i, w := range words {
		out[i] = t.id(w)
	}
	return out
}

// body is a message's rendered words after its role: its content, then
// each tool call, then the end of the message.
func body(content string, calls []api.ToolCall) []string {
	words := strings.Fields(content)
	for _, c := range calls {
		words = append(words, callOpen, c.Function.Name)
		words = append(words, strings.Fields(c.Function.Arguments.String())...)
		words = append(words, callEnd)
	}
	return append(words, imEnd)
}

// render is the prompt of a request: the tools' names, each message, and
// the start of the assistant's reply.
func render(req *api.ChatRequest) []string {
	var words []string
	if len(req.Tools) > 0 {
		words = append(words, toolsTag)
		for _, t := range req.Tools {
			words = append(words, t.Function.Name)
		}
	}
	for _, m := range req.Messages {
		words = append(words, imStart, m.Role)
		words = append(words, body(m.Content, m.ToolCalls)...)
	}
	return append(words, imStart, "assistant")
}

// addTokens adds to a completion's body the token data req asks for.
func (s *Server) addTokens(out map[string]any, req *request, areq *api.ChatRequest, rep ollamatest.Reply) {
	if !req.ReturnTokenIDs && !req.Logprobs {
		return
	}
	var calls []api.ToolCall
	for _, c := range rep.Calls {
		args := api.NewToolCallFunctionArguments()
		b, _ := json.Marshal(c.Args)
		if c.Args == nil {
			b = []byte("{}")
		}
		_ = json.Unmarshal(b, &args)
		calls = append(calls, api.ToolCall{Function: api.ToolCallFunction{Name: c.Name, Arguments: args}})
	}
	prompt := s.tokens.encode(render(areq))
	completion := s.tokens.encode(body(rep.Content, calls))
	logprobs := make([]float64, len(completion))
	for i, id := range completion {
		logprobs[i] = -float64(int(id)%13+1) / 8 // exact in float32
	}
	choice := out["choices"].([]map[string]any)[0]
	if req.ReturnTokenIDs {
		out["prompt_token_ids"] = prompt
		choice["token_ids"] = completion
	}
	if req.Logprobs {
		content := make([]map[string]any, len(completion))
		for i, id := range completion {
			tok := fmt.Sprintf("tok%d", id)
			if req.ReturnTokensAsTokenIDs {
				tok = fmt.Sprintf("token_id:%d", id)
			}
			content[i] = map[string]any{"token": tok, "logprob": logprobs[i], "bytes": []int{}, "top_logprobs": []any{}}
		}
		choice["logprobs"] = map[string]any{"content": content}
	}
	out["usage"] = map[string]any{"prompt_tokens": len(prompt), "completion_tokens": len(completion), "total_tokens": len(prompt) + len(completion)}
	turn := 0
	for _, m := range areq.Messages {
		if m.Role == "assistant" {
			turn++
		}
	}
	s.mu.Lock()
	s.sampled = append(s.sampled, Sampled{Turn: turn, PromptIDs: prompt, CompletionIDs: completion, Logprobs: logprobs})
	s.mu.Unlock()
}
