package agent

// DetectTruncation says, turn by turn, whether Ollama probably truncated
// the prompt. Ollama cuts a prompt longer than its context silently: the
// request succeeds and prompt_eval_count is what it kept. Its context is
// num_ctx, or the model's own context length when num_ctx is above it
// (Ollama lowers num_ctx to it without telling the client): pass
// EffectiveContext(num_ctx, the model's context length) as numCtx. Two
// signs give it away:
//   - the prompt reached the context (prompt_eval_count >= numCtx);
//   - the prompt stopped growing: within one attempt every request repeats
//     the whole conversation and adds to it, so the true prompt grows turn
//     after turn; a turn whose prompt is no longer than an earlier turn's
//     lost part of the conversation.
//
// A turn with no prompt count (0) is never marked and is not compared.
// numCtx <= 0 skips the first test. Run applies the same rule as each turn
// arrives and records it in Turn.Truncated.
func DetectTruncation(turns []Turn, numCtx int) []bool {
	out := make([]bool, len(turns))
	longest := 0
	for i, t := range turns {
		out[i], longest = truncated(t.PromptTokens, longest, numCtx)
	}
	return out
}

// truncated applies DetectTruncation's rule to one turn's prompt count,
// given the longest prompt of the turns before it; it returns the verdict
// and the longest prompt including this turn.
func truncated(prompt, longest, numCtx int) (bool, int) {
	if prompt <= 0 {
		return false, longest
	}
	cut := (numCtx > 0 && prompt >= numCtx) || (longest > 0 && prompt <= longest)
	return cut, max(longest, prompt)
}
