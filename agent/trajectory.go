package agent

import (
	"encoding/json"
	"time"

	"github.com/ollama/ollama/api"
)

// StopReason says why an attempt's loop ended.
type StopReason string

// The reasons a loop stops.
const (
	// StopAnswered: the model answered without calling a tool.
	StopAnswered StopReason = "answered"
	// StopReplyCut: the model's reply, with no tool call, was cut by
	// num_predict (Ollama's done_reason "length"): it may have been about
	// to call a tool. Scored like any ending; told apart for analysis.
	StopReplyCut StopReason = "reply_cut"
	// StopMaxTurns: the turn limit was reached.
	StopMaxTurns StopReason = "max_turns"
	// StopMaxTokens: the total token limit (prompt + completion over all turns) was reached.
	StopMaxTokens StopReason = "max_tokens"
	// StopWallTime: the attempt's wall-time limit was reached.
	StopWallTime StopReason = "wall_time"
	// StopContextFull: an OpenAI-compatible server refused the next
	// request because the conversation and max_tokens no longer fit in
	// the model's context (Ollama would have cut the prompt silently).
	// A limit reached, scored like max_tokens.
	StopContextFull StopReason = "context_full"
	// StopInfraError: the model server failed (unreachable, 5xx, died);
	// the attempt says nothing about the agent and must not be scored.
	StopInfraError StopReason = "infra_error"
	// StopCanceled: the run was interrupted (SIGINT).
	StopCanceled StopReason = "canceled"
)

// Turn is one model request and its reply.
type Turn struct {
	// Index counts turns from 0.
	Index int
	// PromptTokens is Ollama's prompt_eval_count: the whole prompt's length.
	PromptTokens int
	// CompletionTokens is Ollama's eval_count.
	CompletionTokens int
	// TotalDuration, LoadDuration, PromptDuration and EvalDuration are
	// Ollama's own timings.
	TotalDuration  time.Duration
	LoadDuration   time.Duration
	PromptDuration time.Duration
	EvalDuration   time.Duration
	// Wall is the time the request took as seen by the harness.
	Wall time.Duration
	// DoneReason is Ollama's done_reason ("stop", "length").
	DoneReason string
	// ToolCalls is the number of tool calls the reply asked for.
	ToolCalls int
	// Endpoint is the model server that answered (its URL), when the
	// Model says (EndpointModel).
	Endpoint string
	// Tokens is the turn's token data, when the run asked for it
	// (Config.Tokens): the ids and logprobs the server sampled.
	Tokens *TurnTokens
	// Sampling is the sampling settings the turn was asked with, as JSON
	// (temperature, top_p, seed...: the request's options without
	// num_ctx), when the run asked for token data.
	Sampling json.RawMessage
	// ModelDigest names the weights that served the turn, as the endpoint
	// told them (Ollama's digest, vLLM's root): set by the runner, "" when
	// unknown. A trainer drops turns sampled by stale weights with it.
	ModelDigest string
	// Truncated marks a turn whose prompt Ollama probably cut: it reached
	// the context (num_ctx, or the model's context length when smaller), or
	// it was no longer than an earlier turn's (see DetectTruncation).
	Truncated bool
}

// Decision is what the permission policy said of a call.
type Decision string

// The decisions a policy gives.
const (
	Allow Decision = "allow"
	Ask   Decision = "ask"
	Deny  Decision = "deny"
)

// CallRecord is one tool call, as the harness handled it.
type CallRecord struct {
	// Turn is the index of the turn whose reply asked for the call.
	Turn int
	// Index counts calls within the attempt from 0.
	Index int
	// Tool is the name the model called; it may name no tool.
	Tool string
	// Origin is where the tool came from ("builtin", "mcp:<server>"), empty if unknown.
	Origin string
	// Class is the permission class the call was decided under.
	Class Class
	// Decision, Rule and Approver record the permission decision: what it
	// was, which rule matched, and who answered an "ask".
	Decision Decision
	Rule     string
	Approver string
	// Arguments is the arguments as the model sent them, as JSON.
	Arguments string
	// Result is the observation returned to the model.
	Result string
	// IsError marks an error observation.
	IsError bool
	// ErrorKind classifies an error observation: "unknown_tool",
	// "bad_arguments", "denied", "tool_error", "transport", "protocol",
	// "timeout" (cut by a call timeout or the attempt's wall time),
	// "canceled" (cut by an interruption of the run) or "not_run" (the
	// attempt ended before the call's turn came).
	ErrorKind string
	// Details is what the tool recorded beside the observation
	// (Result.Details), as JSON; nil when nothing.
	Details json.RawMessage
	// Duration is how long the call took.
	Duration time.Duration
}

// ToolChange is a change of the tools offered during an attempt: an MCP
// server announced that its tool list changed, and it was listed again
// before the turn Turn.
type ToolChange struct {
	// Turn is the first turn sent with the new list.
	Turn int `json:"turn"`
	// Origin is where the tools come from ("mcp:<server>").
	Origin string `json:"origin"`
	// Added, Removed and Changed name the tools (as the model sees them)
	// that the list gained, lost, or offers with another description or
	// schema.
	Added   []string `json:"added,omitempty"`
	Removed []string `json:"removed,omitempty"`
	Changed []string `json:"changed,omitempty"`
	// Notes say what was refused or went wrong (a tool not offered and
	// why, a listing that failed); they are for the operator.
	Notes []string `json:"notes,omitempty"`
	// ToolsJSON is the whole tool list sent from Turn on, as the model
	// gets it, for the overhead of that turn's tools.
	ToolsJSON json.RawMessage `json:"tools_json,omitempty"`
}

// Trajectory is everything an attempt's loop did.
type Trajectory struct {
	// Messages is the conversation exactly as sent to the model, with the
	// final reply appended.
	Messages []api.Message
	// Tools is the tool definitions as sent to the model.
	Tools []api.Tool
	// ToolsJSON is Tools encoded, the bytes sent to the model (the loop
	// encodes them once per attempt); nil when Tools was never encoded.
	// The store keeps these bytes rather than encoding Tools again.
	ToolsJSON json.RawMessage
	// ToolChanges are the changes of the tool list during the attempt
	// (Config.Refresh), in order; Tools and ToolsJSON are the first list.
	ToolChanges []ToolChange
	Turns       []Turn
	Calls       []CallRecord
	// Stop says why the loop ended.
	Stop StopReason
	// Err describes an infrastructure failure or an interruption; empty otherwise.
	Err string
	// Wall is the loop's whole duration.
	Wall time.Duration
	// Unanswered is how long the last request waited when the model never
	// answered it (the loop then ended): model time that no turn holds.
	Unanswered time.Duration
}

// PromptTokens sums prompt tokens over the turns.
func (t *Trajectory) PromptTokens() int {
	n := 0
	for _, tu := range t.Turns {
		n += tu.PromptTokens
	}
	return n
}

// TruncatedTurns counts the turns marked Truncated.
func (t *Trajectory) TruncatedTurns() int {
	n := 0
	for _, tu := range t.Turns {
		if tu.Truncated {
			n++
		}
	}
	return n
}

// CompletionTokens sums completion tokens over the turns.
func (t *Trajectory) CompletionTokens() int {
	n := 0
	for _, tu := range t.Turns {
		n += tu.CompletionTokens
	}
	return n
}
