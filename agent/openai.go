package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ollama/ollama/api"
)

// OpenAIAPI is the name OpenAI-compatible servers go by in messages and
// in ModelError.API.
const OpenAIAPI = "openai-compatible server"

// The kinds of model error that mean the same on every backend. An error
// of an OpenAI-compatible server matches one of them with errors.Is.
var (
	// ErrModelNotFound: the server does not serve the model asked for.
	ErrModelNotFound = errors.New("model not found")
	// ErrNoToolSupport: the server (or the model's template) cannot take tools.
	ErrNoToolSupport = errors.New("no tool support")
	// ErrContextExceeded: the prompt and max_tokens do not fit in the
	// model's context. Ollama cuts such a prompt silently instead; an
	// OpenAI-compatible server refuses the request.
	ErrContextExceeded = errors.New("context length exceeded")
)

// OpenAI is the model client for an OpenAI-compatible server's
// /v1/chat/completions with tools: vLLM, SGLang, llama.cpp's server,
// LM Studio, Ollama's own /v1. It implements Model by translating the
// Ollama api types the loop speaks to and from the OpenAI shapes.
//
// What differs from Ollama's native API: num_ctx does not exist (the
// server's context is set when it starts, e.g. vLLM --max-model-len), and a
// conversation that outgrows it is an error (ErrContextExceeded), not a
// silent truncation; num_predict is sent as max_tokens; usage.prompt_tokens
// and usage.completion_tokens give the token counts; finish_reason
// "length" is done_reason "length". Options OpenAIOptions does not list
// are refused by CheckOpenAIOptions before a run starts.
type OpenAI struct {
	hc      *http.Client
	base    string // the server's root, without /v1
	chatURL string
	key     string
}

// NewOpenAI returns a client for the OpenAI-compatible server at base: its
// root ("http://gpu1:8000") or its /v1 base ("http://gpu1:8000/v1"). The
// API key, if the server wants one, comes from OPENAI_API_KEY.
func NewOpenAI(base string, hc *http.Client) (*OpenAI, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("openai-compatible server %q: expected a URL such as http://127.0.0.1:8000 or http://127.0.0.1:8000/v1", base)
	}
	if hc == nil {
		hc = &http.Client{}
	}
	root := strings.TrimSuffix(strings.TrimSuffix(u.String(), "/"), "/v1")
	return &OpenAI{hc: hc, base: root, chatURL: root + "/v1/chat/completions", key: os.Getenv("OPENAI_API_KEY")}, nil
}

// Endpoint returns the server's root URL.
func (o *OpenAI) Endpoint() string { return o.base }

// OpenAIOptions maps the run options an OpenAI-compatible server takes to
// the request fields they are sent as. num_ctx is accepted and not sent:
// bench keeps it as the context the run expects (for shares and the
// truncation check); the server's own context is set where it starts.
var OpenAIOptions = map[string]string{
	"temperature":       "temperature",
	"top_p":             "top_p",
	"top_k":             "top_k", // vLLM, SGLang, llama.cpp
	"min_p":             "min_p", // vLLM, SGLang, llama.cpp
	"seed":              "seed",
	"num_predict":       "max_tokens",
	"stop":              "stop",
	"presence_penalty":  "presence_penalty",
	"frequency_penalty": "frequency_penalty",
	"repeat_penalty":    "repetition_penalty", // vLLM, SGLang
	"num_ctx":           "",
}

// CheckOpenAIOptions refuses options an OpenAI-compatible server has no
// field for, naming the first one and what is accepted.
func CheckOpenAIOptions(opts map[string]any) error {
	for _, k := range slices.Sorted(maps.Keys(opts)) {
		if _, ok := OpenAIOptions[k]; !ok {
			return fmt.Errorf("option %s: an OpenAI-compatible server has no such parameter (expected some of: %s)", k, strings.Join(slices.Sorted(maps.Keys(OpenAIOptions)), ", "))
		}
	}
	return nil
}

// oaToolCall is a tool call in the OpenAI shape: arguments as a JSON string.
type oaToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type oaMessage struct {
	Role             string       `json:"role"`
	Content          *string      `json:"content"`
	ToolCalls        []oaToolCall `json:"tool_calls,omitempty"`
	ToolCallID       string       `json:"tool_call_id,omitempty"`
	ReasoningContent string       `json:"reasoning_content,omitempty"`
	Reasoning        string       `json:"reasoning,omitempty"`
}

type oaResponse struct {
	Model   string `json:"model"`
	Choices []struct {
		Message      oaMessage `json:"message"`
		FinishReason string    `json:"finish_reason"`
		// TokenIDs are the sampled ids (vLLM's return_token_ids).
		TokenIDs []int32     `json:"token_ids"`
		Logprobs *oaLogprobs `json:"logprobs"`
	} `json:"choices"`
	// PromptTokenIDs are the prompt's ids as the server rendered it
	// (vLLM's return_token_ids).
	PromptTokenIDs []int32 `json:"prompt_token_ids"`
	Usage          *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	// Timings is llama.cpp's server's own measure of a request.
	Timings *struct {
		PromptMS    float64 `json:"prompt_ms"`
		PredictedMS float64 `json:"predicted_ms"`
	} `json:"timings"`
}

// oaLogprobs is a choice's logprobs: one entry per sampled token. With
// vLLM's return_tokens_as_token_ids its token reads "token_id:N";
// llama.cpp's server gives the id as id, some others as token_id.
type oaLogprobs struct {
	Content []struct {
		Token   string  `json:"token"`
		Logprob float64 `json:"logprob"`
		TokenID *int32  `json:"token_id"`
		ID      *int32  `json:"id"`
	} `json:"content"`
}

// Chat sends one non-streaming chat completion and returns the reply in
// Ollama's shape.
func (o *OpenAI) Chat(ctx context.Context, req *api.ChatRequest) (*api.ChatResponse, error) {
	resp, _, err := o.ChatTokens(ctx, req)
	return resp, err
}

// ChatTokens is Chat that also returns the turn's token data when
// req.Logprobs asks for it: the request then asks for logprobs and ids
// the way vLLM takes them (logprobs, return_token_ids,
// return_tokens_as_token_ids); servers that do not know those fields
// ignore them, and the turn is then kept as not exact (TurnTokens.Problem).
func (o *OpenAI) ChatTokens(ctx context.Context, req *api.ChatRequest) (*api.ChatResponse, *TurnTokens, error) {
	body, err := openAIRequest(req)
	if err != nil {
		return nil, nil, &ModelError{API: OpenAIAPI, Host: o.base, Model: req.Model, Err: err}
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, o.chatURL, bytes.NewReader(body))
	if err != nil {
		return nil, nil, &ModelError{API: OpenAIAPI, Host: o.base, Model: req.Model, Err: err}
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	if o.key != "" {
		hreq.Header.Set("Authorization", "Bearer "+o.key)
	}
	start := time.Now()
	resp, err := o.hc.Do(hreq)
	if err != nil {
		return nil, nil, &ModelError{API: OpenAIAPI, Host: o.base, Model: req.Model, Err: err}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, &ModelError{API: OpenAIAPI, Host: o.base, Model: req.Model, Err: fmt.Errorf("read reply: %w", err)}
	}
	if resp.StatusCode/100 != 2 {
		return nil, nil, &ModelError{API: OpenAIAPI, Host: o.base, Model: req.Model, Err: ParseOpenAIError(resp.StatusCode, data)}
	}
	var r oaResponse
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, nil, &ModelError{API: OpenAIAPI, Host: o.base, Model: req.Model, Err: fmt.Errorf("reply is not a chat completion: %w", err)}
	}
	if len(r.Choices) == 0 {
		return nil, nil, &ModelError{API: OpenAIAPI, Host: o.base, Model: req.Model, Err: errors.New("reply has no choices")}
	}
	if r.Usage == nil {
		// Without it every turn would be stored as 0 tokens, the token
		// limit never reached and the tools' overhead measured as nothing.
		return nil, nil, &ModelError{API: OpenAIAPI, Host: o.base, Model: req.Model, Err: errors.New(`reply has no "usage" counts, which bench counts tokens by`)}
	}
	out := fromOpenAI(req, &r)
	out.TotalDuration = time.Since(start)
	if !req.Logprobs {
		return out, nil, nil
	}
	return out, openAITokens(&r), nil
}

// openAIRequest is the body of a chat completion for req.
func openAIRequest(req *api.ChatRequest) ([]byte, error) {
	body := map[string]any{"model": req.Model, "stream": false}
	msgs := make([]oaMessage, 0, len(req.Messages))
	for _, m := range req.Messages {
		om := oaMessage{Role: m.Role}
		content := m.Content
		om.Content = &content
		if m.Role == "tool" {
			om.ToolCallID = m.ToolCallID
		}
		for _, tc := range m.ToolCalls {
			var c oaToolCall
			c.ID, c.Type = tc.ID, "function"
			c.Function.Name = tc.Function.Name
			c.Function.Arguments = tc.Function.Arguments.String()
			if raw, ok := tc.Function.Arguments.Get(RawArgumentsKey); ok && tc.Function.Arguments.Len() == 1 {
				c.Function.Arguments, _ = raw.(string) // sent back as the model wrote it
			}
			om.ToolCalls = append(om.ToolCalls, c)
		}
		if len(om.ToolCalls) > 0 && content == "" {
			om.Content = nil // OpenAI's shape: null content beside tool calls
		}
		msgs = append(msgs, om)
	}
	body["messages"] = msgs
	if req.Logprobs {
		// vLLM: prompt_token_ids and token_ids in the reply
		// (return_token_ids, 0.10.2 and later), and each logprob's token
		// as "token_id:N" (return_tokens_as_token_ids, older ones too).
		body["logprobs"] = true
		body["return_token_ids"] = true
		body["return_tokens_as_token_ids"] = true
	}
	if len(req.Tools) > 0 {
		body["tools"] = req.Tools // api.Tool marshals to the OpenAI function shape
	}
	for k, v := range req.Options {
		field, ok := OpenAIOptions[k]
		if !ok {
			return nil, CheckOpenAIOptions(map[string]any{k: v})
		}
		if field == "" {
			continue
		}
		if k == "num_predict" {
			if n, ok := number(v); ok && n <= 0 {
				continue // Ollama's -1 (no limit) and -2 (fill the context): no max_tokens
			}
		}
		body[field] = v
	}
	return json.Marshal(body)
}

// RawArgumentsKey holds, as a string, tool-call arguments that a server
// sent but that are not a JSON object: the call reaches the loop with this
// one argument, the tool's schema check refuses it, and the model reads
// that its arguments were bad. What the model wrote is stored as it was.
const RawArgumentsKey = "_raw_arguments"

// fromOpenAI turns a chat completion into Ollama's reply shape. A tool call
// without an id gets one, unique in the conversation, so that the tool
// message answering it can name it on the next request.
func fromOpenAI(req *api.ChatRequest, r *oaResponse) *api.ChatResponse {
	ch := r.Choices[0]
	msg := api.Message{Role: "assistant", Thinking: ch.Message.ReasoningContent}
	if msg.Thinking == "" {
		msg.Thinking = ch.Message.Reasoning
	}
	if ch.Message.Content != nil {
		msg.Content = *ch.Message.Content
	}
	turn := 0
	for _, m := range req.Messages {
		if m.Role == "assistant" {
			turn++
		}
	}
	for i, c := range ch.Message.ToolCalls {
		args := api.NewToolCallFunctionArguments()
		if err := json.Unmarshal([]byte(c.Function.Arguments), &args); err != nil || c.Function.Arguments == "" {
			args = api.NewToolCallFunctionArguments()
			if strings.TrimSpace(c.Function.Arguments) != "" {
				args.Set(RawArgumentsKey, c.Function.Arguments)
			}
		}
		id := c.ID
		if id == "" {
			id = fmt.Sprintf("call_%d_%d", turn, i)
		}
		msg.ToolCalls = append(msg.ToolCalls, api.ToolCall{ID: id, Function: api.ToolCallFunction{Index: i, Name: c.Function.Name, Arguments: args}})
	}
	out := &api.ChatResponse{Model: r.Model, CreatedAt: time.Now().UTC(), Message: msg, Done: true}
	switch ch.FinishReason {
	case "length":
		out.DoneReason = "length"
	case "stop", "tool_calls", "function_call", "":
		out.DoneReason = "stop"
	default:
		out.DoneReason = ch.FinishReason // content_filter and the like, kept as said
	}
	if r.Usage != nil {
		out.PromptEvalCount, out.EvalCount = r.Usage.PromptTokens, r.Usage.CompletionTokens
	}
	if t := r.Timings; t != nil {
		out.PromptEvalDuration = time.Duration(t.PromptMS * float64(time.Millisecond))
		out.EvalDuration = time.Duration(t.PredictedMS * float64(time.Millisecond))
	}
	return out
}

// openAITokens reads a reply's token data: the prompt's and the
// completion's ids and the completion's logprobs, checked against each
// other and against the usage counts.
func openAITokens(r *oaResponse) *TurnTokens {
	ch := r.Choices[0]
	t := &TurnTokens{Source: TokensOpenAI, PromptIDs: r.PromptTokenIDs, CompletionIDs: ch.TokenIDs}
	var fromLogprobs []int32 // the ids the logprobs name, when each does
	if lp := ch.Logprobs; lp != nil {
		t.Logprobs = make([]float32, len(lp.Content))
		fromLogprobs = make([]int32, 0, len(lp.Content))
		for i, c := range lp.Content {
			t.Logprobs[i] = float32(c.Logprob)
			if c.TokenID != nil {
				fromLogprobs = append(fromLogprobs, *c.TokenID)
			} else if c.ID != nil {
				fromLogprobs = append(fromLogprobs, *c.ID)
			} else if n, ok := tokenIDText(c.Token); ok {
				fromLogprobs = append(fromLogprobs, n)
			}
		}
		if len(fromLogprobs) != len(lp.Content) {
			fromLogprobs = nil
		}
	}
	prompt, completion := -1, -1
	if r.Usage != nil {
		prompt, completion = r.Usage.PromptTokens, r.Usage.CompletionTokens
	}
	if t.CompletionIDs == nil && fromLogprobs != nil {
		t.CompletionIDs = fromLogprobs
	}
	if t.CompletionIDs == nil && t.PromptIDs == nil && t.Logprobs == nil {
		return &TurnTokens{Source: TokensNone, Problem: "the server returned no token ids and no logprobs"}
	}
	t.checkTokens(prompt, completion)
	if t.Exact && fromLogprobs != nil && !slices.Equal(fromLogprobs, t.CompletionIDs) {
		t.Exact, t.Problem = false, "the completion's token_ids and its logprobs' token ids differ"
	}
	return t
}

// tokenIDText reads vLLM's "token_id:N".
func tokenIDText(s string) (int32, bool) {
	rest, ok := strings.CutPrefix(s, "token_id:")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(rest, 10, 32)
	return int32(n), err == nil && n >= 0
}

// OpenAIError is an error answer of an OpenAI-compatible server, with its
// HTTP status and what the body said. It matches ErrModelNotFound,
// ErrNoToolSupport or ErrContextExceeded (errors.Is) when the server's
// words say so: each server words them its own way (see Kind).
type OpenAIError struct {
	// Status is the HTTP status.
	Status int
	// Message, Type and Code are the body's error fields ("" when absent).
	Message string
	Type    string
	Code    string
	// Kind is one of the Err* kinds above, or nil.
	Kind error
}

// ParseOpenAIError reads an error body of any of the shapes such servers
// use: {"error": {"message", "type", "code"}} (OpenAI, llama.cpp, newer
// vLLM), {"object": "error", "message", "type", "code"} (vLLM, SGLang),
// {"error": "text"} (Ollama, LM Studio), or plain text.
func ParseOpenAIError(status int, body []byte) *OpenAIError {
	e := &OpenAIError{Status: status}
	var shapes struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    any             `json:"code"`
		Detail  any             `json:"detail"`
	}
	if json.Unmarshal(body, &shapes) == nil {
		var inner struct {
			Message string `json:"message"`
			Type    string `json:"type"`
			Code    any    `json:"code"`
		}
		var text string
		switch {
		case len(shapes.Error) > 0 && json.Unmarshal(shapes.Error, &inner) == nil && inner.Message != "":
			e.Message, e.Type, e.Code = inner.Message, inner.Type, codeText(inner.Code)
		case len(shapes.Error) > 0 && json.Unmarshal(shapes.Error, &text) == nil:
			e.Message = text
		case shapes.Message != "":
			e.Message, e.Type, e.Code = shapes.Message, shapes.Type, codeText(shapes.Code)
		case shapes.Detail != nil:
			b, _ := json.Marshal(shapes.Detail)
			e.Message = string(b)
		}
	}
	if e.Message == "" {
		e.Message = strings.TrimSpace(string(body))
		if len(e.Message) > 500 {
			e.Message = e.Message[:500] + "..."
		}
	}
	e.Kind = openAIKind(e)
	return e
}

func codeText(c any) string {
	switch v := c.(type) {
	case nil:
		return ""
	case string:
		return v
	case float64:
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprint(c)
}

// openAIKind tells the kinds apart by the words servers use for them.
func openAIKind(e *OpenAIError) error {
	msg := strings.ToLower(e.Message)
	has := func(words ...string) bool {
		for _, w := range words {
			if strings.Contains(msg, w) {
				return true
			}
		}
		return false
	}
	switch {
	case e.Code == "context_length_exceeded" || e.Type == "exceed_context_size_error" ||
		has("maximum context length", "context length", "context size", "context window", "exceeds the available context", "context the overflows", "too many tokens", "prompt is too long"):
		// OpenAI and vLLM: "This model's maximum context length is N tokens";
		// llama.cpp: "the request exceeds the available context size";
		// SGLang: "longer than the model's context length"; LM Studio:
		// "...when context the overflows".
		return ErrContextExceeded
	case has("tool choice requires", "tools param requires", "unsupported param: tools", "does not support tools", "does not support tool", "tool calling is not supported", "tools are not supported"):
		// vLLM without --enable-auto-tool-choice; llama.cpp without --jinja
		// (HTTP 500); Ollama's /v1 for a template without tools.
		return ErrNoToolSupport
	case e.Code == "model_not_found" || e.Type == "NotFoundError" ||
		(has("model") && has("does not exist", "not found", "no such model", "not loaded", "unknown model")) ||
		(e.Status == http.StatusNotFound && has("model")):
		return ErrModelNotFound
	}
	return nil
}

// Error says what the server answered.
func (e *OpenAIError) Error() string {
	s := fmt.Sprintf("HTTP %d", e.Status)
	if e.Kind != nil {
		s = e.Kind.Error() + ", " + s
	}
	return s + ": " + e.Message
}

// Is matches the error's kind.
func (e *OpenAIError) Is(target error) bool { return e.Kind != nil && target == e.Kind }

// HTTPStatus is the HTTP status of the answer.
func (e *OpenAIError) HTTPStatus() int { return e.Status }

// hint says what to do, as ModelError.Hint does for Ollama's errors.
func (e *OpenAIError) hint(me *ModelError) string {
	switch e.Kind {
	case ErrModelNotFound:
		return fmt.Sprintf("the server at %s does not serve a model named %s: its GET /v1/models lists the names it serves (vLLM: --served-model-name; llama.cpp: --alias)", me.Host, me.Model)
	case ErrNoToolSupport:
		return fmt.Sprintf("the server at %s cannot take tools for %s: start vLLM with --enable-auto-tool-choice --tool-call-parser NAME, llama.cpp's server with --jinja, or pick a model whose template has tools", me.Host, me.Model)
	case ErrContextExceeded:
		return fmt.Sprintf("the prompt and max_tokens (--num-predict) do not fit in the context of %s at %s: start the server with a longer context (vLLM --max-model-len, llama.cpp -c), or lower --num-predict", me.Model, me.Host)
	}
	return ""
}
