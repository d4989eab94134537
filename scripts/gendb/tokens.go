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
// results), logprobs for the completion. A turn whose prompt count is
// below that (the generated last turn, cut at num_ctx) gets a prompt of
// its own, as a server that rendered the conversation anew would.
func addTokens(rng *rand.Rand, tr *agent.Trajectory) {
	sampling := json.RawMessage(`{"num_predict":2048,"seed":1,"temperature":0.7}`)
	var seq []int32
	for i := range tr.Turns {
		u := &tr.Turns[i]
		var prompt []int32
		if need := u.PromptTokens - len(seq); need > 0 {
			prompt = append(seq[:len(seq):len(seq)], ids(rng, need)...)
		} else {
			prompt = ids(rng, u.PromptTokens)
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
