package main

import (
	"encoding/json"
	"math/rand/v2"

	"github.com/benchhq/bench/agent"
)

// vocab is the size of a generated vocabulary (Qwen's is 151,936).
const vocab = 151_936

// addTokens gives each turn of tr the token data a vLLM server returns:
// as many prompt and completion ids as the turn's counts, each prompt
// the turn before's prompt and completion followed by new ids (tool
// results), logprobs for the completion. The first prompt is the group's
// (*first, made on the group's first attempt): the attempts of a group
// are sent the same system prompt, tools and task, and the first turn's
// prompt count becomes its length. A turn marked truncated (the
// generated last turn, cut at num_ctx) gets a prompt of its own, as a
// server that cut the conversation would.
func addTokens(rng *rand.Rand, tr *agent.Trajectory, first *[]int32) {
	sampling := json.RawMessage(`{"num_predict":2048,"seed":1,"temperature":0.7}`)
	if *first == nil {
		*first = ids(rng, tr.Turns[0].PromptTokens)
	}
	tr.Turns[0].PromptTokens = len(*first)
	seq := *first
	for i := range tr.Turns {
		u := &tr.Turns[i]
		var prompt []int32
		switch need := u.PromptTokens - len(seq); {
		case i == 0:
			prompt = seq
		case u.Truncated:
			prompt = ids(rng, u.PromptTokens) // cut at num_ctx: no longer the conversation
		default:
			// The tool result and the template's markers; the count
			// follows (the group's first prompt may be longer than the
			// attempt's own was).
			prompt = append(seq[:len(seq):len(seq)], ids(rng, max(need, 40+rng.IntN(200)))...)
			u.PromptTokens = len(prompt)
		}
		completion := ids(rng, u.CompletionTokens)
		lps := make([]float32, len(completion))
		for j := range lps {
			lps[j] = -float32(rng.ExpFloat64() * 0.7)
		}
		u.Tokens = &agent.TurnTokens{Source: agent.TokensOpenAI, Exact: true, PromptIDs: prompt, CompletionIDs: completion, Logprobs: lps}
		u.Sampling = sampling
		u.ModelDigest = "root=/models/qwen3-4b"
		seq = append(prompt[:len(prompt):len(prompt)], completion...)
	}
}

// ids are n ids, most of them frequent (small), as text's are.
func ids(rng *rand.Rand, n int) []int32 {
	out := make([]int32, n)
	for i := range out {
		if rng.IntN(4) == 0 {
			out[i] = int32(rng.IntN(vocab))
		} else {
			out[i] = int32(rng.IntN(16384))
		}
	}
	return out
}
