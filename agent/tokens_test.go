package agent_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/internal/ollamatest"
	"github.com/benchhq/bench/internal/openaitest"
)

// toolTurns is a conversation of three turns: two with tool calls, then
// an answer.
var toolTurns = ollamatest.Turns(
	ollamatest.Reply{Content: "let me look", Calls: []ollamatest.Call{{Name: "echo", Args: map[string]any{"text": "a"}}}},
	ollamatest.Reply{Calls: []ollamatest.Call{{Name: "echo", Args: map[string]any{"text": "b c"}}, {Name: "echo", Args: map[string]any{"text": "d"}}}},
	ollamatest.Reply{Content: "all done now"},
)

func runTokens(t *testing.T, opts ...openaitest.Option) (*openaitest.Server, *agent.Trajectory) {
	t.Helper()
	srv, model := newOpenAI(t, toolTurns, append([]openaitest.Option{openaitest.WithTokenIDs()}, opts...)...)
	reg := agent.NewRegistry()
	if err := reg.Add(echoTool("echo", agent.ClassRead, func(a map[string]any) (agent.Result, error) {
		return agent.Result{Text: "echoed " + a["text"].(string)}, nil
	})); err != nil {
		t.Fatal(err)
	}
	tr := agent.Run(context.Background(), agent.Config{
		Model: model, ModelName: "fake", Instruction: "echo things", Tools: reg, Tokens: true,
		Options: map[string]any{"num_ctx": 4096, "temperature": 0.7, "seed": 42}, MaxTurns: 5,
	})
	if tr.Stop != agent.StopAnswered || len(tr.Turns) != 3 {
		t.Fatalf("stop %s (%s) after %d turns, want answered after 3", tr.Stop, tr.Err, len(tr.Turns))
	}
	return srv, tr
}

// TestOpenAITokensAreWhatTheServerSampled: with a server that returns ids
// (vLLM's return_token_ids), every turn of a multi-turn attempt with tool
// calls keeps the prompt ids, the completion ids and logprobs the server
// sampled, exact, with the sampling settings; the request asked for them.
func TestOpenAITokensAreWhatTheServerSampled(t *testing.T) {
	srv, tr := runTokens(t)
	sampled := srv.Sampled()
	if len(sampled) != 3 {
		t.Fatalf("server sampled %d turns, want 3", len(sampled))
	}
	for i, tu := range tr.Turns {
		tok, s := tu.Tokens, sampled[i]
		if tok == nil || !tok.Exact || tok.Source != agent.TokensOpenAI || tok.Problem != "" {
			t.Fatalf("turn %d: tokens %+v, want exact from the openai server", i, tok)
		}
		if !slices.Equal(tok.PromptIDs, s.PromptIDs) || !slices.Equal(tok.CompletionIDs, s.CompletionIDs) {
			t.Errorf("turn %d: ids %v + %v, the server sampled %v + %v", i, tok.PromptIDs, tok.CompletionIDs, s.PromptIDs, s.CompletionIDs)
		}
		for j, lp := range s.Logprobs {
			if tok.Logprobs[j] != float32(lp) {
				t.Errorf("turn %d token %d: logprob %v, the server gave %v", i, j, tok.Logprobs[j], lp)
			}
		}
		if i > 0 {
			prev := tr.Turns[i-1].Tokens
			if seq := append(slices.Clone(prev.PromptIDs), prev.CompletionIDs...); !slices.Equal(tok.PromptIDs[:len(seq)], seq) {
				t.Errorf("turn %d: prompt does not start with the previous turn's prompt and completion", i)
			}
		}
		var sampling map[string]any
		if err := json.Unmarshal(tu.Sampling, &sampling); err != nil || sampling["temperature"] != 0.7 || sampling["seed"] != 42.0 || sampling["num_ctx"] != nil {
			t.Errorf("turn %d: sampling %s, want temperature and seed without num_ctx", i, tu.Sampling)
		}
	}
	for _, req := range srv.Requests() {
		if req["logprobs"] != true || req["return_token_ids"] != true || req["return_tokens_as_token_ids"] != true {
			t.Errorf("request asked %v %v %v, want logprobs, return_token_ids and return_tokens_as_token_ids", req["logprobs"], req["return_token_ids"], req["return_tokens_as_token_ids"])
		}
	}
}

// TestOpenAITokensFromLogprobsAlone: a server that gives the ids only as
// "token_id:N" logprob tokens (vLLM before return_token_ids) has the
// completion ids but not the prompt's: not exact, and saying why.
func TestOpenAITokensFromLogprobsAlone(t *testing.T) {
	srv, tr := runTokens(t, openaitest.WithReplyFault(func(_ int, body map[string]any) {
		delete(body, "prompt_token_ids")
		delete(body["choices"].([]map[string]any)[0], "token_ids")
	}))
	for i, tu := range tr.Turns {
		if tu.Tokens.Exact || !slices.Equal(tu.Tokens.CompletionIDs, srv.Sampled()[i].CompletionIDs) || !strings.Contains(tu.Tokens.Problem, "no prompt token ids") {
			t.Errorf("turn %d: %+v, want the completion ids from the logprobs and not exact for want of the prompt's", i, tu.Tokens)
		}
	}
}

// TestOpenAITokensFromLlamaCppIDs: llama.cpp's server gives each
// logprob's token id as id, and no prompt ids: the completion ids are
// read, and the turn is not exact for want of the prompt's.
func TestOpenAITokensFromLlamaCppIDs(t *testing.T) {
	srv, tr := runTokens(t, openaitest.WithReplyFault(func(_ int, body map[string]any) {
		delete(body, "prompt_token_ids")
		ch := body["choices"].([]map[string]any)[0]
		ids := ch["token_ids"].([]int32)
		delete(ch, "token_ids")
		for i, c := range ch["logprobs"].(map[string]any)["content"].([]map[string]any) {
			c["token"], c["id"] = "text", ids[i]
		}
	}))
	for i, tu := range tr.Turns {
		if tu.Tokens.Exact || !slices.Equal(tu.Tokens.CompletionIDs, srv.Sampled()[i].CompletionIDs) || !strings.Contains(tu.Tokens.Problem, "no prompt token ids") {
			t.Errorf("turn %d: %+v", i, tu.Tokens)
		}
	}
}

// TestOpenAITokenFaults: a server that drops the ids on one turn, or
// gives logprobs of the wrong length, or ids that disagree with its usage
// counts: that turn is kept as not exact with the reason, the others stay
// exact, and the attempt itself goes on.
func TestOpenAITokenFaults(t *testing.T) {
	cases := []struct {
		name  string
		fault func(body map[string]any)
		want  string
	}{
		{"no ids", func(b map[string]any) {
			delete(b, "prompt_token_ids")
			ch := b["choices"].([]map[string]any)[0]
			delete(ch, "token_ids")
			delete(ch, "logprobs")
		}, "no token ids and no logprobs"},
		{"short logprobs", func(b map[string]any) {
			ch := b["choices"].([]map[string]any)[0]
			lp := ch["logprobs"].(map[string]any)
			c := lp["content"].([]map[string]any)
			lp["content"] = c[:len(c)-1]
		}, "logprobs for"},
		{"usage disagrees", func(b map[string]any) {
			b["usage"].(map[string]any)["completion_tokens"] = 999
		}, "counted 999 completion tokens"},
		{"ids disagree", func(b map[string]any) {
			ch := b["choices"].([]map[string]any)[0]
			ids := slices.Clone(ch["token_ids"].([]int32))
			ids[0]++
			ch["token_ids"] = ids
		}, "differ"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, tr := runTokens(t, openaitest.WithReplyFault(func(turn int, body map[string]any) {
				if turn == 1 {
					c.fault(body)
				}
			}))
			for i, tu := range tr.Turns {
				bad := i == 1
				if tu.Tokens.Exact == bad || bad != strings.Contains(tu.Tokens.Problem, c.want) {
					t.Errorf("turn %d: exact %v, problem %q; want turn 1 alone not exact for %q", i, tu.Tokens.Exact, tu.Tokens.Problem, c.want)
				}
			}
		})
	}
}

// TestOllamaLogprobsAreNotExact: Ollama is asked for logprobs and gives
// tokens as text: kept, and marked not exact.
func TestOllamaLogprobsAreNotExact(t *testing.T) {
	srv := ollamatest.New(ollamatest.Turns(ollamatest.Reply{Content: "three short words"}))
	t.Cleanup(srv.Close)
	model, err := agent.NewOllama(srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	tr := agent.Run(context.Background(), agent.Config{Model: model, ModelName: "fake", Instruction: "hi", Tokens: true, Options: map[string]any{"num_ctx": 2048}})
	if len(tr.Turns) != 1 {
		t.Fatalf("%d turns (%s %s)", len(tr.Turns), tr.Stop, tr.Err)
	}
	tok := tr.Turns[0].Tokens
	if tok == nil || tok.Exact || tok.Source != agent.TokensOllama || strings.Join(tok.Texts, " ") != "three short words" || len(tok.Logprobs) != 3 || tok.CompletionIDs != nil {
		t.Errorf("tokens %+v, want the three words as text with logprobs, not exact", tok)
	}
	if !srv.Requests()[0].Logprobs {
		t.Error("the request did not ask Ollama for logprobs")
	}
}
