// Package openaitest is a fake OpenAI-compatible server for tests: it
// speaks /v1/chat/completions and /v1/models over real HTTP, the way vLLM
// does, and plays the same scripts as the fake Ollama server
// (ollamatest.Script): each request is turned into an api.ChatRequest for
// the script, and the script's Reply into a chat completion. Like vLLM it
// answers 404 for a model it does not serve, 400 for tools sent without
// tool support, and 400 when the prompt and max_tokens do not fit in the
// model's context (it never truncates).
//
// It lives under internal/ so that it can serve the tests of several
// packages while never being linked into the bench command.
package openaitest

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/benchhq/bench/internal/ollamatest"
)

// Server is a running fake OpenAI-compatible server.
type Server struct {
	*httptest.Server

	script ollamatest.Script
	// models are the served names with the root (weights) /v1/models
	// gives; empty serves every name.
	models  map[string]string
	noTools map[string]bool
	// context is max_model_len (0: no limit).
	context int

	// tokens, when set, answers requests that ask for token data
	// (return_token_ids, logprobs) as vLLM does; see WithTokenIDs.
	tokens *tokenizer
	// fault, when set, may change a reply's body before it is sent.
	fault func(turn int, body map[string]any)

	mu       sync.Mutex
	requests []map[string]any
	sampled  []Sampled
}

// Option configures a Server.
type Option func(*Server)

// WithModels serves only these model names, each with the root
// "/models/NAME" in /v1/models.
func WithModels(names ...string) Option {
	return func(s *Server) {
		for _, n := range names {
			s.models[n] = "/models/" + n
		}
	}
}

// WithRoot serves model with this root (the weights it was loaded from),
// which is what tells two servers of one name apart.
func WithRoot(model, root string) Option {
	return func(s *Server) { s.models[model] = root }
}

// WithoutTools serves these models without tool support (vLLM started
// without --enable-auto-tool-choice).
func WithoutTools(names ...string) Option {
	return func(s *Server) {
		for _, n := range names {
			if _, ok := s.models[n]; !ok {
				s.models[n] = "/models/" + n
			}
			s.noTools[n] = true
		}
	}
}

// WithContext sets the models' context length (vLLM --max-model-len).
func WithContext(n int) Option {
	return func(s *Server) { s.context = n }
}

// WithTokenIDs makes the server answer a request that asks for token data
// as vLLM does: return_token_ids gives prompt_token_ids and each choice's
// token_ids, logprobs gives logprobs.content (with
// return_tokens_as_token_ids, each token as "token_id:N"), and the usage
// counts are the id lists' lengths. Its tokens are the words of a
// ChatML-like rendering of the conversation (see Tokens), so that each
// turn's prompt starts with the previous turn's prompt and completion.
func WithTokenIDs() Option {
	return func(s *Server) { s.tokens = newTokenizer() }
}

// WithReplyFault lets f change the body of the reply to the request of
// turn (the number of assistant messages it holds) before it is sent: a
// server that drops ids on some turns, or gives logprobs of the wrong
// length.
func WithReplyFault(f func(turn int, body map[string]any)) Option {
	return func(s *Server) { s.fault = f }
}

// New starts a fake server playing script. Close it when done.
func New(script ollamatest.Script, opts ...Option) *Server {
	s := &Server{script: script, models: map[string]string{}, noTools: map[string]bool{}}
	for _, o := range opts {
		o(s)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	mux.HandleFunc("GET /v1/models", s.list)
	s.Server = httptest.NewServer(mux)
	return s
}

// Requests returns every chat request body received, decoded, in arrival order.
func (s *Server) Requests() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	type model struct {
		ID          string `json:"id"`
		Object      string `json:"object"`
		OwnedBy     string `json:"owned_by"`
		Root        string `json:"root"`
		MaxModelLen int    `json:"max_model_len,omitempty"`
	}
	out := struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{Object: "list", Data: []model{}}
	for _, n := range slices.Sorted(maps.Keys(s.models)) {
		out.Data = append(out.Data, model{ID: n, Object: "model", OwnedBy: "vllm", Root: s.models[n], MaxModelLen: s.context})
	}
	writeJSON(w, http.StatusOK, out)
}

// request is the part of a chat completion request the fake reads.
type request struct {
	Model    string `json:"model"`
	Messages []struct {
		Role       string  `json:"role"`
		Content    *string `json:"content"`
		ToolCallID string  `json:"tool_call_id"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
	Tools     []api.Tool `json:"tools"`
	MaxTokens *int       `json:"max_tokens"`
	Stream    bool       `json:"stream"`
	Logprobs  bool       `json:"logprobs"`
	// vLLM's fields for token ids.
	ReturnTokenIDs         bool `json:"return_token_ids"`
	ReturnTokensAsTokenIDs bool `json:"return_tokens_as_token_ids"`
}

// ollamaOptions are the request fields the script sees in Options, under
// Ollama's names.
var ollamaOptions = map[string]string{"temperature": "temperature", "top_p": "top_p", "seed": "seed", "max_tokens": "num_predict"}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	arrived := time.Now()
	var raw map[string]any
	var req request
	dec := json.NewDecoder(r.Body)
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		vllmError(w, http.StatusBadRequest, "BadRequestError", err.Error())
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, raw)
	s.mu.Unlock()
	b, _ := json.Marshal(raw)
	if err := json.Unmarshal(b, &req); err != nil {
		vllmError(w, http.StatusBadRequest, "BadRequestError", err.Error())
		return
	}
	if _, ok := s.models[req.Model]; len(s.models) > 0 && !ok {
		vllmError(w, http.StatusNotFound, "NotFoundError", fmt.Sprintf("The model `%s` does not exist.", req.Model))
		return
	}
	if s.noTools[req.Model] && len(req.Tools) > 0 {
		vllmError(w, http.StatusBadRequest, "BadRequestError", `"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set`)
		return
	}
	areq := ollamaRequest(&req, raw)
	prompt := ollamatest.CountWords(areq)
	maxTokens := 0
	if req.MaxTokens != nil {
		maxTokens = *req.MaxTokens
	}
	if s.context > 0 && prompt+maxTokens > s.context {
		vllmError(w, http.StatusBadRequest, "BadRequestError", fmt.Sprintf("This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion). Please reduce the length of the messages or completion.", s.context, prompt+maxTokens, prompt, maxTokens))
		return
	}
	rep := s.script(areq)
	if !ollamatest.Wait(r, arrived, rep.Delay) {
		return
	}
	if rep.Hangup {
		ollamatest.Hangup(w)
		return
	}
	if rep.Status != 0 {
		vllmError(w, rep.Status, "BadRequestError", rep.Error)
		return
	}
	body := completion(req.Model, rep, prompt)
	turn := 0
	for _, m := range req.Messages {
		if m.Role == "assistant" {
			turn++
		}
	}
	if s.tokens != nil {
		s.addTokens(body, &req, areq, rep)
	}
	if s.fault != nil {
		s.fault(turn, body)
	}
	writeJSON(w, http.StatusOK, body)
}

// ollamaRequest is the request as the scripts read it.
func ollamaRequest(req *request, raw map[string]any) *api.ChatRequest {
	out := &api.ChatRequest{Model: req.Model, Tools: req.Tools, Options: map[string]any{}}
	for _, m := range req.Messages {
		am := api.Message{Role: m.Role, ToolCallID: m.ToolCallID}
		if m.Content != nil {
			am.Content = *m.Content
		}
		for i, tc := range m.ToolCalls {
			args := api.NewToolCallFunctionArguments()
			_ = json.Unmarshal([]byte(tc.Function.Arguments), &args)
			am.ToolCalls = append(am.ToolCalls, api.ToolCall{ID: tc.ID, Function: api.ToolCallFunction{Index: i, Name: tc.Function.Name, Arguments: args}})
		}
		out.Messages = append(out.Messages, am)
	}
	for field, opt := range ollamaOptions {
		if v, ok := raw[field].(json.Number); ok {
			if n, err := v.Int64(); err == nil {
				out.Options[opt] = n
			} else if f, err := v.Float64(); err == nil {
				out.Options[opt] = f
			}
		}
	}
	return out
}

// completion is the chat completion of a scripted reply.
func completion(model string, rep ollamatest.Reply, prompt int) map[string]any {
	msg := map[string]any{"role": "assistant", "content": rep.Content}
	finish := "stop"
	if len(rep.Calls) > 0 {
		finish = "tool_calls"
		if rep.Content == "" {
			msg["content"] = nil
		}
		var calls []map[string]any
		for i, c := range rep.Calls {
			args, _ := json.Marshal(c.Args)
			if c.Args == nil {
				args = []byte("{}")
			}
			calls = append(calls, map[string]any{"id": fmt.Sprintf("chatcmpl-tool-%d", i), "type": "function",
				"function": map[string]any{"name": c.Name, "arguments": string(args)}})
		}
		msg["tool_calls"] = calls
	}
	if rep.DoneReason == "length" {
		finish = "length"
	}
	completionTokens := rep.CompletionTokens
	if completionTokens == 0 {
		completionTokens = len(strings.Fields(rep.Content)) + 10*len(rep.Calls)
	}
	if rep.PromptTokens != 0 {
		prompt = rep.PromptTokens
	}
	return map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "created": time.Now().Unix(), "model": model,
		"choices": []map[string]any{{"index": 0, "message": msg, "finish_reason": finish}},
		"usage":   map[string]any{"prompt_tokens": prompt, "completion_tokens": completionTokens, "total_tokens": prompt + completionTokens},
	}
}

// vllmError answers as vLLM does: {"object": "error", "message", "type", "code"}.
func vllmError(w http.ResponseWriter, status int, typ, msg string) {
	writeJSON(w, status, map[string]any{"object": "error", "message": msg, "type": typ, "param": nil, "code": status})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
