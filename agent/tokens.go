package agent

import (
	"context"
	"fmt"

	"github.com/ollama/ollama/api"
)

// The sources of a turn's token data (TurnTokens.Source).
const (
	// TokensOpenAI: an OpenAI-compatible server's token ids and logprobs
	// (vLLM's return_token_ids and return_tokens_as_token_ids).
	TokensOpenAI = "openai"
	// TokensOllama: Ollama's logprobs, tokens as text without ids: never
	// exact.
	TokensOllama = "ollama"
	// TokensNone: tokens were asked for and the server gave nothing.
	TokensNone = "none"
)

// TurnTokens is what the model server said of one turn's tokens: the
// prompt it tokenised, the tokens it sampled and their log-probabilities.
// Trainers need the ids as sampled: stored messages tokenised again give
// other ids (chat templates, tool-call formatting), which corrupts the
// importance ratios of on-policy training silently. So a turn is Exact
// only when the server gave both id lists and one logprob per sampled
// token, consistent with its own usage counts; anything less is kept
// with the Problem that makes it inexact, and never exported as ids.
type TurnTokens struct {
	// Source says where the data came from (TokensOpenAI, TokensOllama,
	// TokensNone).
	Source string
	// Exact: PromptIDs and CompletionIDs are the ids the server
	// tokenised and sampled, with one logprob per completion id.
	Exact bool
	// Problem says why a turn with token data is not exact ("" when it is).
	Problem string
	// PromptIDs are the ids of the whole prompt as the server rendered
	// it (chat template, tools); nil when not given.
	PromptIDs []int32
	// CompletionIDs are the sampled ids, stop token included when the
	// server counts it; nil when not given.
	CompletionIDs []int32
	// Logprobs are the sampled tokens' log-probabilities, in order.
	Logprobs []float32
	// Texts are the sampled tokens as text, when the server gives text
	// rather than ids (Ollama).
	Texts []string
}

// TokenModel is a Model that can return a turn's token data beside its
// reply: the token ids and logprobs the server sampled. A nil TurnTokens
// means the server gave none.
type TokenModel interface {
	Model
	ChatTokens(ctx context.Context, req *api.ChatRequest) (*api.ChatResponse, *TurnTokens, error)
}

// ollamaTokens is the token data of an Ollama reply asked with logprobs:
// the tokens as text with their logprobs, which are not ids.
func ollamaTokens(resp *api.ChatResponse) *TurnTokens {
	if len(resp.Logprobs) == 0 {
		return &TurnTokens{Source: TokensNone, Problem: "the server returned no logprobs"}
	}
	t := &TurnTokens{Source: TokensOllama, Problem: "Ollama gives the sampled tokens as text, without ids or the prompt's ids"}
	t.Texts = make([]string, len(resp.Logprobs))
	t.Logprobs = make([]float32, len(resp.Logprobs))
	for i, lp := range resp.Logprobs {
		t.Texts[i], t.Logprobs[i] = lp.Token, float32(lp.Logprob)
	}
	return t
}

// checkTokens decides whether t is exact against the server's own usage
// counts (negative when unknown), setting Exact and Problem.
func (t *TurnTokens) checkTokens(promptTokens, completionTokens int) {
	t.Exact = false
	switch {
	case t.CompletionIDs == nil:
		t.Problem = "the server returned no completion token ids (vLLM returns them with return_token_ids, or as token_id:N logprob tokens with return_tokens_as_token_ids)"
	case t.PromptIDs == nil:
		t.Problem = "the server returned no prompt token ids (vLLM 0.10.2 and later return them with return_token_ids)"
	case t.Logprobs == nil:
		t.Problem = "the server returned no logprobs"
	case len(t.Logprobs) != len(t.CompletionIDs):
		t.Problem = fmt.Sprintf("the server returned %d logprobs for %d completion token ids", len(t.Logprobs), len(t.CompletionIDs))
	case completionTokens >= 0 && completionTokens != len(t.CompletionIDs):
		t.Problem = fmt.Sprintf("the server returned %d completion token ids but counted %d completion tokens in usage", len(t.CompletionIDs), completionTokens)
	case promptTokens >= 0 && promptTokens != len(t.PromptIDs):
		t.Problem = fmt.Sprintf("the server returned %d prompt token ids but counted %d prompt tokens in usage", len(t.PromptIDs), promptTokens)
	default:
		t.Exact, t.Problem = true, ""
	}
}
