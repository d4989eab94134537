package overhead

import "github.com/benchhq/bench/agent"

// DetectTruncation says, turn by turn, whether Ollama probably truncated
// the prompt. Ollama cuts a prompt longer than num_ctx silently: the
// request succeeds and prompt_eval_count is what it kept. Two signs give it
// away:
//   - the prompt reached num_ctx (prompt_eval_count >= numCtx);
//   - the prompt stopped growing: within one attempt every request repeats
//     the whole conversation and adds to it, so the true prompt grows turn
//     after turn; a turn whose prompt is no longer than an earlier turn's
//     lost part of the conversation.
//
// A turn with no prompt count (0) is never marked and is not compared.
// numCtx <= 0 skips the first test.
func DetectTruncation(turns []agent.Turn, numCtx int) []bool {
	out := make([]bool, len(turns))
	longest := 0
	for i, t := range turns {
		if t.PromptTokens <= 0 {
			continue
		}
		out[i] = (numCtx > 0 && t.PromptTokens >= numCtx) || (longest > 0 && t.PromptTokens <= longest)
		longest = max(longest, t.PromptTokens)
	}
	return out
}

// MarkTruncated sets Turn.Truncated on the turns of tr that DetectTruncation
// finds (it never clears a mark) and returns how many turns are marked.
func MarkTruncated(tr *agent.Trajectory, numCtx int) int {
	n := 0
	for i, cut := range DetectTruncation(tr.Turns, numCtx) {
		if cut {
			tr.Turns[i].Truncated = true
		}
		if tr.Turns[i].Truncated {
			n++
		}
	}
	return n
}
