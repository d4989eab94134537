// Package agent is the agent loop: model turns, tool calls and limits, with
// the tool registry, the built-in tools, the permission policy, workspace
// confinement and the Ollama model client.
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"time"

	"github.com/ollama/ollama/api"
)

// DefaultSystemPrompt is the system prompt of a run that does not set one.
const DefaultSystemPrompt = `You are a careful software engineer working in a project folder. Use the tools to inspect and change files and to run commands; every path is relative to the project folder. Work step by step, check your changes by running them, and when the task is done answer with a short summary and no tool call.`

// Config is one attempt's loop: the model, its request options, the tools
// and the limits.
type Config struct {
	// Model answers chat requests.
	Model Model
	// ModelName is the model to ask (e.g. "qwen3:0.6b").
	ModelName string
	// Options are sent verbatim as the request's options map (temperature,
	// seed, num_ctx, num_predict...). A map, not api.Options: the struct
	// drops zero values such as temperature 0. num_ctx, when set, must be
	// an integer (see NumCtx).
	Options map[string]any
	// Think, when set, is sent as the request's think field.
	Think *api.ThinkValue
	// System is the system prompt; Instruction the task's request.
	System      string
	Instruction string
	// Tools are offered to the model; Policy decides each call. A nil
	// Policy is a ProfilePolicy with no profile: the standard profile.
	Tools  *Registry
	Policy Policy
	// Limits. Zero means no limit.
	MaxTurns  int
	MaxTokens int
	WallTime  time.Duration
	// RequestTimeout bounds one model request. A model server that does
	// not answer in time is an infrastructure failure, not the agent's.
	// Zero means no bound other than the wall time.
	RequestTimeout time.Duration
	// ContextLength is the model's own context length (Ollama.ContextLength),
	// 0 when unknown. Ollama lowers a num_ctx above it silently, so turns
	// are judged truncated against EffectiveContext(num_ctx, ContextLength).
	ContextLength int
	// Tokens asks the server for each turn's token data (Turn.Tokens):
	// token ids and logprobs from an OpenAI-compatible server that gives
	// them (a TokenModel), logprobs as text from Ollama.
	Tokens bool
	// CutIsAnError says that the server refuses a prompt longer than its
	// context instead of cutting it (OpenAI-compatible servers): no turn
	// is then judged truncated.
	CutIsAnError bool
	// Refresh, when set, is called before every turn but the first, with
	// the attempt's registry: it may change the tools (an MCP server's
	// list changed; mcp.Refresher) and says what changed, nil for
	// nothing. The next request carries the new list.
	Refresh func(ctx context.Context, reg *Registry) []ToolChange
}

var errWallTime = errors.New("wall-time limit reached")

// ErrRequestTimeout is the cause (context.Cause) of a request's context
// when the request outlived Config.RequestTimeout: the model server's
// fault, not the attempt's.
var ErrRequestTimeout = errors.New("model request timed out")

// EndpointModel is a Model that says which server answers it: the loop
// records it with each turn (Turn.Endpoint).
type EndpointModel interface {
	Model
	Endpoint() string
}

// Run drives the loop until the model answers without a tool call or a
// limit is hit. It never returns an error: everything that happens,
// including a model server that fails, is recorded in the trajectory, whose
// Stop says how it ended.
func Run(ctx context.Context, cfg Config) *Trajectory {
	start := time.Now()
	tr := &Trajectory{}
	defer func() { tr.Wall = time.Since(start) }()

	if cfg.WallTime > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, cfg.WallTime, errWallTime)
		defer cancel()
	}
	policy := cfg.Policy
	if policy == nil {
		policy = &ProfilePolicy{}
	}
	reg := cfg.Tools
	if reg == nil {
		reg = NewRegistry()
	}
	numCtx, err := NumCtx(cfg.Options)
	if err != nil {
		// The runner measures the tool overhead, which reads num_ctx,
		// before any attempt; reaching this is a harness bug too.
		tr.Stop, tr.Err = StopInfraError, err.Error()
		return tr
	}
	// The tool list is the same in every request of the attempt (until a
	// Refresh changes it): it is encoded once, kept for the store, and a
	// model client that can take it encoded gets those bytes every turn.
	// The runner checks definitions before the run starts; failing here
	// is a harness bug, and it must not look like the agent's.
	tools, toolsJSON, err := toolList(reg)
	if err != nil {
		tr.Stop, tr.Err = StopInfraError, err.Error()
		return tr
	}
	tr.Tools = tools
	if tr.Tools != nil {
		tr.ToolsJSON = toolsJSON
	}
	// A model that takes the request partly encoded gets the tool list
	// and the messages so, each encoded once.
	em, encodes := cfg.Model.(EncodedModel)
	var msgs messageLog
	system := cfg.System
	if system == "" {
		system = DefaultSystemPrompt
	}
	tr.Messages = []api.Message{
		{Role: "system", Content: system},
		{Role: "user", Content: cfg.Instruction},
	}
	limit := EffectiveContext(numCtx, cfg.ContextLength) // where Ollama cuts the prompt
	var sampling json.RawMessage
	tm, tokenModel := cfg.Model.(TokenModel)
	if cfg.Tokens {
		if sampling, err = samplingJSON(cfg.Options); err != nil {
			tr.Stop, tr.Err = StopInfraError, fmt.Sprintf("sampling options: %v", err)
			return tr
		}
	}
	tokens := 0
	longest := 0 // the longest prompt so far, for DetectTruncation's rule
	for turn := 0; ; turn++ {
		if cfg.MaxTurns > 0 && turn >= cfg.MaxTurns {
			tr.Stop = StopMaxTurns
			return tr
		}
		if stop, msg := interrupted(ctx); stop != "" {
			tr.Stop, tr.Err = stop, msg
			return tr
		}
		if turn > 0 && cfg.Refresh != nil {
			if changes := cfg.Refresh(ctx, reg); len(changes) > 0 {
				if tools, toolsJSON, err = toolList(reg); err != nil {
					tr.Stop, tr.Err = StopInfraError, err.Error()
					return tr
				}
				for _, ch := range changes {
					ch.Turn, ch.ToolsJSON = turn, toolsJSON
					tr.ToolChanges = append(tr.ToolChanges, ch)
				}
			}
		}
		req := &api.ChatRequest{
			Model:    cfg.ModelName,
			Messages: tr.Messages,
			Tools:    tools,
			Options:  cfg.Options,
			Think:    cfg.Think,
			Logprobs: cfg.Tokens,
		}
		send := cfg.Model.Chat
		var turnTokens *TurnTokens
		switch {
		case cfg.Tokens && tokenModel:
			send = func(ctx context.Context, req *api.ChatRequest) (*api.ChatResponse, error) {
				resp, t, err := tm.ChatTokens(ctx, req)
				turnTokens = t
				return resp, err
			}
		case encodes:
			enc := Encoded{Tools: toolsJSON}
			if enc.Messages, err = msgs.encode(tr.Messages); err != nil {
				tr.Stop, tr.Err = StopInfraError, fmt.Sprintf("encode the messages: %v", err)
				return tr
			}
			send = func(ctx context.Context, req *api.ChatRequest) (*api.ChatResponse, error) {
				return em.ChatEncoded(ctx, req, enc)
			}
		}
		t0 := time.Now()
		resp, err := chat(ctx, cfg, req, send)
		if err != nil {
			tr.Unanswered = time.Since(t0)
			if wallTimeUp(ctx) {
				// The model had not answered when the attempt's time ran
				// out: a server that is slow or stuck, not the agent's
				// doing. Only the agent's own turns and tools may spend
				// its wall time against it.
				tr.Stop = StopInfraError
				tr.Err = fmt.Sprintf("the model server had not answered when the attempt's wall time of %s ran out (the request had waited %s)",
					cfg.WallTime, time.Since(t0).Round(time.Millisecond))
			} else if stop, msg := interrupted(ctx); stop != "" {
				tr.Stop, tr.Err = stop, msg
			} else if errors.Is(err, ErrContextExceeded) {
				// The conversation outgrew the context of a server that
				// refuses rather than truncates: a limit, like max_tokens.
				tr.Stop, tr.Err = StopContextFull, err.Error()
			} else {
				tr.Stop, tr.Err = StopInfraError, err.Error()
			}
			return tr
		}
		msg := resp.Message
		if msg.Role == "" {
			msg.Role = "assistant"
		}
		tr.Messages = append(tr.Messages, msg)
		tu := Turn{
			Index:            turn,
			PromptTokens:     resp.PromptEvalCount,
			CompletionTokens: resp.EvalCount,
			TotalDuration:    resp.TotalDuration,
			LoadDuration:     resp.LoadDuration,
			PromptDuration:   resp.PromptEvalDuration,
			EvalDuration:     resp.EvalDuration,
			Wall:             time.Since(t0),
			DoneReason:       resp.DoneReason,
			ToolCalls:        len(msg.ToolCalls),
		}
		if cfg.Tokens {
			tu.Sampling = sampling
			switch {
			case turnTokens != nil:
				tu.Tokens = turnTokens
			case tokenModel:
				tu.Tokens = &TurnTokens{Source: TokensNone, Problem: "the server returned no token ids and no logprobs"}
			default:
				tu.Tokens = ollamaTokens(resp)
			}
		}
		if em, ok := cfg.Model.(EndpointModel); ok {
			tu.Endpoint = em.Endpoint()
		}
		if !cfg.CutIsAnError {
			tu.Truncated, longest = truncated(resp.PromptEvalCount, longest, limit)
		}
		tr.Turns = append(tr.Turns, tu)
		tokens += resp.PromptEvalCount + resp.EvalCount

		if len(msg.ToolCalls) == 0 {
			tr.Stop = StopAnswered
			if resp.DoneReason == "length" {
				tr.Stop = StopReplyCut
			}
			return tr
		}
		for i, tc := range msg.ToolCalls {
			if stop, errText := interrupted(ctx); stop != "" {
				// The attempt is over: the rest of the turn's calls must not
				// change the workspace the hidden tests score. Each still
				// gets its answer, so that the conversation stays whole.
				for _, tc := range msg.ToolCalls[i:] {
					rec, out := notRun(ctx, reg, tc)
					rec.Turn, rec.Index = turn, len(tr.Calls)
					tr.Calls = append(tr.Calls, rec)
					tr.Messages = append(tr.Messages, out)
				}
				tr.Stop, tr.Err = stop, errText
				return tr
			}
			rec, out := execute(ctx, reg, policy, tc)
			rec.Turn, rec.Index = turn, len(tr.Calls)
			tr.Calls = append(tr.Calls, rec)
			tr.Messages = append(tr.Messages, out)
		}
		if cfg.MaxTokens > 0 && tokens >= cfg.MaxTokens {
			tr.Stop = StopMaxTokens
			return tr
		}
	}
}

// samplingJSON is the sampling settings among opts, as JSON: every
// option but num_ctx, which sets the context rather than the sampling.
func samplingJSON(opts map[string]any) (json.RawMessage, error) {
	s := make(map[string]any, len(opts))
	for k, v := range opts {
		if k != "num_ctx" {
			s[k] = v
		}
	}
	return json.Marshal(s) // keys sorted: the same settings give the same bytes
}

// toolList is the registry's tools as the model gets them, and encoded.
func toolList(reg *Registry) ([]api.Tool, json.RawMessage, error) {
	var tools []api.Tool
	for _, spec := range reg.Specs() {
		def, err := OllamaTool(spec)
		if err != nil {
			return nil, nil, fmt.Errorf("tool definition: %w", err)
		}
		tools = append(tools, def)
	}
	b, err := json.Marshal(tools)
	if err != nil {
		return nil, nil, fmt.Errorf("tool definitions: %w", err)
	}
	return tools, b, nil
}

// Encoded holds parts of a chat request already in JSON, to be sent in
// place of the request's own: the loop encodes the tool list once per
// attempt, and each message once, when it is added, rather than all of
// them every turn. A nil part is the request's own, encoded then.
type Encoded struct {
	// Tools is the JSON of req.Tools.
	Tools json.RawMessage
	// Messages is the JSON array of req.Messages.
	Messages json.RawMessage
}

// EncodedModel is a Model that can be sent parts of a request already
// encoded, as Ollama can.
type EncodedModel interface {
	ChatEncoded(ctx context.Context, req *api.ChatRequest, enc Encoded) (*api.ChatResponse, error)
}

// messageLog is the JSON of an attempt's messages, each encoded once, as
// it is added (the loop only appends them).
type messageLog struct {
	buf []byte // "[" and the messages encoded so far, comma-separated
	n   int    // how many
}

// encode returns the JSON array of msgs, of which the first l.n are
// those encoded before. The array is l's own: valid until the next call
// (a request's body copies it).
func (l *messageLog) encode(msgs []api.Message) (json.RawMessage, error) {
	if l.buf == nil {
		l.buf = append(l.buf, '[')
	}
	for _, m := range msgs[l.n:] {
		b, err := json.Marshal(m)
		if err != nil {
			return nil, err
		}
		if l.n > 0 {
			l.buf = append(l.buf, ',')
		}
		l.buf = append(l.buf, b...)
		l.n++
	}
	return append(l.buf, ']'), nil
}

// chat sends one request through send under the request timeout.
func chat(ctx context.Context, cfg Config, req *api.ChatRequest, send func(context.Context, *api.ChatRequest) (*api.ChatResponse, error)) (*api.ChatResponse, error) {
	if cfg.RequestTimeout <= 0 {
		return send(ctx, req)
	}
	rctx, cancel := context.WithTimeoutCause(ctx, cfg.RequestTimeout, ErrRequestTimeout)
	defer cancel()
	resp, err := send(rctx, req)
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(rctx), ErrRequestTimeout) {
		return nil, fmt.Errorf("the model server gave no reply within %s: %w", cfg.RequestTimeout, err)
	}
	return resp, err
}

// interrupted says whether ctx is done, and why in the loop's terms.
func interrupted(ctx context.Context) (StopReason, string) {
	if ctx.Err() == nil {
		return "", ""
	}
	if wallTimeUp(ctx) {
		return StopWallTime, ""
	}
	return StopCanceled, context.Cause(ctx).Error()
}

// wallTimeUp reports whether ctx ended at the attempt's wall-time limit
// (rather than by an interruption of the run).
func wallTimeUp(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), errWallTime)
}

// notRunText is the observation of a call not run because ctx ended.
func notRunText(ctx context.Context) string {
	if wallTimeUp(ctx) {
		return "Not run: the attempt's wall-time limit was reached."
	}
	return "Not run: the run was interrupted."
}

// notRun is the record and answer of a call that was not run because ctx
// ended before its turn came.
func notRun(ctx context.Context, reg *Registry, tc api.ToolCall) (CallRecord, api.Message) {
	text := notRunText(ctx)
	rec := CallRecord{Tool: tc.Function.Name, Arguments: tc.Function.Arguments.String(), Result: text, IsError: true, ErrorKind: "not_run"}
	if spec, ok := reg.Spec(tc.Function.Name); ok {
		rec.Origin, rec.Class = spec.Origin, spec.Class
	}
	return rec, api.Message{Role: "tool", Content: text, ToolName: tc.Function.Name, ToolCallID: tc.ID}
}

// execute runs one tool call: lookup, argument validation, policy, call.
// Each failure becomes an error observation; none stops the loop.
func execute(ctx context.Context, reg *Registry, policy Policy, tc api.ToolCall) (CallRecord, api.Message) {
	name := tc.Function.Name
	rec := CallRecord{Tool: name, Arguments: tc.Function.Arguments.String()}
	start := time.Now()
	finish := func(text string, isErr bool, kind string) (CallRecord, api.Message) {
		rec.Result, rec.IsError, rec.ErrorKind = text, isErr, kind
		rec.Duration = time.Since(start)
		return rec, api.Message{Role: "tool", Content: text, ToolName: name, ToolCallID: tc.ID}
	}

	tool, ok := reg.Lookup(name)
	if !ok {
		return finish(fmt.Sprintf("Error: there is no tool named %q. Available tools: %s.", name, strings.Join(reg.Names(), ", ")), true, "unknown_tool")
	}
	spec, _ := reg.Spec(name)
	rec.Origin, rec.Class = spec.Origin, spec.Class
	// The arguments as recorded are the arguments checked and passed on.
	args, err := reg.ValidateJSON(name, []byte(rec.Arguments))
	if err != nil {
		return finish("Error: "+err.Error()+". The tool did not run; fix the arguments and call it again.", true, "bad_arguments")
	}
	call := Call{Tool: name, Class: spec.Class, Origin: spec.Origin, Args: args}
	v := policy.Decide(ctx, call)
	rec.Decision, rec.Rule, rec.Approver = v.Decision, v.Rule, v.Approver
	if v.Decision != Allow {
		return finish(DeniedText(call, v), true, "denied")
	}
	if ctx.Err() != nil {
		// ctx ended while the policy decided (an approver may take long).
		return finish(notRunText(ctx), true, "not_run")
	}
	res, err := safeCall(ctx, tool, args)
	if err != nil {
		kind := "tool_error"
		switch {
		case ctx.Err() == nil:
		case wallTimeUp(ctx):
			kind = "timeout"
		default:
			kind = "canceled"
		}
		return finish(fmt.Sprintf("Error: %s failed: %v", name, err), true, kind)
	}
	kind := ""
	if res.IsError {
		kind = res.Kind
		if kind == "" {
			kind = "tool_error"
		}
	}
	rec.Details = res.Details
	return finish(res.Text, res.IsError, kind)
}

// safeCall runs a tool, turning a panic into an error so that one broken
// tool cannot take the run down.
func safeCall(ctx context.Context, t Tool, args map[string]any) (res Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error in tool: %v\n%s", r, firstLines(string(debug.Stack()), 8))
		}
	}()
	return t.Call(ctx, args)
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}

// NumCtx reads num_ctx from Ollama options, whatever numeric type it was
// written with (flags give int, TOML int64, JSON float64); 0 when it is
// not set, an error naming the option when it is not an integer.
func NumCtx(opts map[string]any) (int, error) {
	const key = "num_ctx"
	v, ok := opts[key]
	if !ok {
		return 0, nil
	}
	if n, ok := integer(v); ok {
		return int(n), nil
	}
	return 0, fmt.Errorf("options: %s: expected an integer, got %v (%T)", key, v, v)
}
