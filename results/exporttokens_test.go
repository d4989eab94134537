package results

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/benchhq/bench/agent"
)

// withTokens gives a trajectory of three turns the token data of a server
// whose prompts extend the conversation: turn i's prompt is the turn
// before's prompt and completion, then tool results (env ids).
func withTokens(tr *agent.Trajectory, seed int32) *agent.Trajectory {
	prompt := []int32{1, 2, 3, seed, 4}
	for i := range tr.Turns {
		completion := []int32{seed + 100 + int32(i), 500 + int32(i), 2}
		lps := []float32{-0.25, -1.5, -0.125}
		tr.Turns[i].Tokens = &agent.TurnTokens{Source: agent.TokensOpenAI, Exact: true,
			PromptIDs: slices.Clone(prompt), CompletionIDs: completion, Logprobs: lps}
		tr.Turns[i].Sampling = json.RawMessage(`{"seed":7,"temperature":1}`)
		tr.Turns[i].ModelDigest = "root=/w/step-3"
		tr.Turns[i].Endpoint = "http://gpu1:8000"
		prompt = append(append(prompt, completion...), 7, 8, seed+int32(i)) // tool results
	}
	return tr
}

func exportTokens(t *testing.T, s *Store, opts TokenExportOptions) ([]map[string]any, TokenExportStats) {
	t.Helper()
	var b bytes.Buffer
	stats, err := s.ExportTokens(context.Background(), &b, opts)
	if err != nil {
		t.Fatalf("ExportTokens: %v", err)
	}
	var out []map[string]any
	sc := bufio.NewScanner(&b)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line is not JSON: %v\n%s", err, sc.Text())
		}
		out = append(out, m)
	}
	return out, stats
}

func ints(v any) []int32 {
	var out []int32
	for _, x := range v.([]any) {
		out = append(out, int32(x.(float64)))
	}
	return out
}

// TestTokenDataRoundTrip: what SaveAttempt stores of the turns' token
// data reads back whole (prompts made whole from the shared prefix),
// and the prompts are not stored again every turn.
func TestTokenDataRoundTrip(t *testing.T) {
	s, _ := openTemp(t)
	run := createRun(t, s)
	ctx := context.Background()
	a := finishedAttempt(run.ID, AttemptKey{Arm: "baseline", Task: "csv-sum", Index: 0}, 1)
	withTokens(a.Trajectory, 9)
	a.Trajectory.Turns[1].Tokens = &agent.TurnTokens{Source: agent.TokensOllama, Problem: "no ids", Texts: []string{"a", "b"}, Logprobs: []float32{-1, -2}}
	ids, err := s.SaveAttempts(ctx, []*Attempt{a})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.TurnTokens(ctx, ids[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("%d turns read back, want 3", len(got))
	}
	for i, g := range got {
		want := a.Trajectory.Turns[i].Tokens
		if g.Exact != want.Exact || g.Source != want.Source || g.Problem != want.Problem ||
			!slices.Equal(g.PromptIDs, want.PromptIDs) || !slices.Equal(g.CompletionIDs, want.CompletionIDs) ||
			!slices.Equal(g.Logprobs, want.Logprobs) || !slices.Equal(g.Texts, want.Texts) || string(g.Sampling) != string(a.Trajectory.Turns[i].Sampling) {
			t.Errorf("turn %d read back %+v, stored %+v", i, g, want)
		}
	}
	var shared []int
	if err := s.DB().Select(&shared, `SELECT prompt_shared FROM turn_tokens WHERE attempt_id = ? ORDER BY turn_idx`, ids[0]); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(shared, []int{0, 0, 0}) {
		t.Errorf("prompt_shared %v: turn 1 has no ids and turn 2 follows it, so nothing is shared", shared)
	}
	// A second attempt of the group starts with the same prompt: stored once.
	b := finishedAttempt(run.ID, AttemptKey{Arm: "baseline", Task: "csv-sum", Index: 1}, 0)
	withTokens(b.Trajectory, 9)
	bid, err := s.SaveAttempt(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	var prompts, inline int
	if err := s.DB().Get(&prompts, `SELECT count(*) FROM token_prompts`); err != nil || prompts != 1 {
		t.Errorf("%d first prompts stored (%v), want the group's one", prompts, err)
	}
	if err := s.DB().Get(&inline, `SELECT count(*) FROM turn_tokens WHERE turn_idx = 0 AND (prompt_ids IS NOT NULL OR prompt_ref IS NULL)`); err != nil || inline != 0 {
		t.Errorf("%d first turns store their prompt themselves (%v)", inline, err)
	}
	if got, err := s.TurnTokens(ctx, bid); err != nil || !slices.Equal(got[0].PromptIDs, b.Trajectory.Turns[0].Tokens.PromptIDs) || !slices.Equal(got[2].PromptIDs, b.Trajectory.Turns[2].Tokens.PromptIDs) {
		t.Errorf("second attempt read back %v, %v", got, err)
	}
}

// TestExportTokensTRL: the trl form concatenates each attempt's turns
// into one sequence whose mask covers exactly the sampled ids, with the
// logprobs of those, reward and advantage; attempts without exact ids
// are left out and counted, by reason, and never re-tokenised.
func TestExportTokensTRL(t *testing.T) {
	s, _ := openTemp(t)
	run := createRun(t, s)
	ctx := context.Background()
	var as []*Attempt
	for i := range 4 {
		a := finishedAttempt(run.ID, AttemptKey{Arm: "baseline", Task: "csv-sum", Index: i}, i%2)
		withTokens(a.Trajectory, int32(10+i))
		as = append(as, a)
	}
	as[1].Trajectory.Turns[2].Tokens.Exact, as[1].Trajectory.Turns[2].Tokens.Problem = false, "the server returned 2 logprobs for 3 completion token ids"
	as[2].Trajectory.Turns[1].Tokens.PromptIDs[0] = 99 // the template rendered turn 0 anew
	plain := finishedAttempt(run.ID, AttemptKey{Arm: "baseline", Task: "recipe-trailing-dot", Index: 0}, 1)
	as = append(as, plain)
	if _, err := s.SaveAttempts(ctx, as); err != nil {
		t.Fatal(err)
	}
	lines, stats := exportTokens(t, s, TokenExportOptions{})
	if len(lines) != 2 || stats.Lines != 2 || stats.LeftOutTotal() != 3 {
		t.Fatalf("%d lines, stats %+v: want attempts 0 and 3, three left out", len(lines), stats)
	}
	for reason, want := range map[string]int{
		"a turn's tokens are not exact: the server returned N logprobs for N completion token ids": 1,
		"no token data stored (run without --tokens)":                                              1,
	} {
		if stats.LeftOut[reason] != want {
			t.Errorf("left out for %q: %d, want %d (all: %v)", reason, stats.LeftOut[reason], want, stats.LeftOut)
		}
	}
	for _, l := range lines {
		idx := int(l["index"].(float64))
		tr := as[idx].Trajectory
		var ids []int32
		var mask []int32
		ids = append(ids, ints(l["prompt_ids"])...)
		seq := append(ints(l["prompt_ids"]), ints(l["completion_ids"])...)
		mask = ints(l["env_mask"])
		lps := l["logprobs"].([]any)
		if len(mask) != len(seq)-len(ids) || len(lps) != len(mask) {
			t.Fatalf("attempt %d: %d completion ids, %d mask, %d logprobs", idx, len(seq)-len(ids), len(mask), len(lps))
		}
		last := tr.Turns[2].Tokens
		if want := append(slices.Clone(last.PromptIDs), last.CompletionIDs...); !slices.Equal(seq, want) {
			t.Errorf("attempt %d: sequence %v, want the last prompt and completion %v", idx, seq, want)
		}
		// The mask is 1 exactly on each turn's completion.
		var sampled []int32
		for i, m := range mask {
			if m == 1 {
				sampled = append(sampled, seq[len(ids)+i])
				if lps[i].(float64) == 0 {
					t.Errorf("attempt %d: sampled token %d has logprob 0", idx, i)
				}
			} else if lps[i].(float64) != 0 {
				t.Errorf("attempt %d: env token %d has logprob %v", idx, i, lps[i])
			}
		}
		var want []int32
		for _, tu := range tr.Turns {
			want = append(want, tu.Tokens.CompletionIDs...)
		}
		if !slices.Equal(sampled, want) {
			t.Errorf("attempt %d: masked ids %v, sampled %v", idx, sampled, want)
		}
		if l["reward"].(float64) != float64(idx%2) || l["advantage_method"] == "" || l["group_size"].(float64) != 4 {
			t.Errorf("attempt %d: reward %v advantage %v (%v) group %v", idx, l["reward"], l["advantage"], l["advantage_method"], l["group_size"])
		}
		// RolloutOf (what bench serve streams) gives the same.
		var ts []*agent.TurnTokens
		for _, tu := range tr.Turns {
			ts = append(ts, tu.Tokens)
		}
		ro, why := RolloutOf(ts)
		if why != "" || !slices.Equal(ro.PromptIDs, ids) || !slices.Equal(ro.CompletionIDs, seq[len(ids):]) || len(ro.EnvMask) != len(mask) {
			t.Errorf("attempt %d: RolloutOf %+v (%s) differs from the export", idx, ro, why)
		}
		for i := range mask {
			if int32(ro.EnvMask[i]) != mask[i] || float64(ro.Logprobs[i]) != lps[i].(float64) {
				t.Errorf("attempt %d: RolloutOf token %d: mask %d logprob %v, export %d %v", idx, i, ro.EnvMask[i], ro.Logprobs[i], mask[i], lps[i])
				break
			}
		}
		if d := l["model_digests"].([]any); len(d) != 3 || d[0] != "root=/w/step-3" {
			t.Errorf("attempt %d: model_digests %v", idx, d)
		}
	}
	// The re-rendered attempt is in the verifiers form, turn by turn.
	lines, stats = exportTokens(t, s, TokenExportOptions{Format: TokensVerifiers})
	if len(lines) != 3 || stats.LeftOutTotal() != 2 {
		t.Fatalf("verifiers: %d lines, left out %v; want 3 and 2", len(lines), stats.LeftOut)
	}
	for _, l := range lines {
		tr := as[int(l["index"].(float64))].Trajectory
		for i, tu := range l["turns"].([]any) {
			m := tu.(map[string]any)
			if !slices.Equal(ints(m["prompt_ids"]), tr.Turns[i].Tokens.PromptIDs) || !slices.Equal(ints(m["completion_ids"]), tr.Turns[i].Tokens.CompletionIDs) ||
				len(m["completion_logprobs"].([]any)) != len(tr.Turns[i].Tokens.CompletionIDs) {
				t.Errorf("attempt %v turn %d: %v", l["index"], i, m)
			}
		}
	}
	// Other weights than asked: left out.
	_, stats = exportTokens(t, s, TokenExportOptions{ModelDigest: "root=/w/step-4"})
	if stats.Lines != 0 || !strings.Contains(strings.Join(slices.Collect(maps.Keys(stats.LeftOut)), "|"), "other weights") {
		t.Errorf("with another digest: %d lines, left out %v", stats.Lines, stats.LeftOut)
	}
}
