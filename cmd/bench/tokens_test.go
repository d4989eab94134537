package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/benchhq/bench/internal/ollamatest"
	"github.com/benchhq/bench/internal/openaitest"
	"github.com/benchhq/bench/results"
)

// toolScript reads the recipe, lists the folder and answers: three turns,
// two with tool calls.
var toolScript = ollamatest.Turns(
	ollamatest.Reply{Content: "first a look", Calls: []ollamatest.Call{{Name: "read_file", Args: map[string]any{"path": "recipe.py"}}}},
	ollamatest.Reply{Calls: []ollamatest.Call{{Name: "list_dir", Args: map[string]any{"path": "."}}}},
	ollamatest.Reply{Content: "I looked at it."},
)

func int32s(v any) []int32 {
	var out []int32
	for _, x := range v.([]any) {
		out = append(out, int32(x.(float64)))
	}
	return out
}

// TestRunTokensThenExportTRL: bench run --tokens against a server that
// gives token ids, then bench export --tokens trl: each attempt's
// exported ids are, turn by turn, what the server sampled, and the mask
// covers exactly the sampled ids.
func TestRunTokensThenExportTRL(t *testing.T) {
	srv := openaitest.New(toolScript, openaitest.WithModels("qwen"), openaitest.WithTokenIDs())
	defer srv.Close()
	dir := t.TempDir()
	db := filepath.Join(dir, "bench.db")
	code, _, stderr := bench(t, "run", "--api", "openai", "--host", srv.URL, "--model", "qwen", "--task", recipeTask,
		"--attempts", "2", "-j", "1", "--tokens", "--temperature", "0.6", "--no-progress", "--db", db)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	// The server's samples, attempt by attempt (one at a time: -j 1).
	var attempts [][]openaitest.Sampled
	for _, s := range srv.Sampled() {
		if s.Turn == 0 {
			attempts = append(attempts, nil)
		}
		attempts[len(attempts)-1] = append(attempts[len(attempts)-1], s)
	}
	if len(attempts) != 2 || len(attempts[0]) != 3 {
		t.Fatalf("the server sampled %d attempts (%v), want 2 of 3 turns", len(attempts), attempts)
	}
	out := filepath.Join(dir, "trl.jsonl")
	code, _, stderr = bench(t, "export", "--db", db, "--tokens", "trl", "--out", out)
	if code != 0 || !strings.Contains(stderr, "exported 2 attempts") {
		t.Fatalf("export: exit %d\n%s", code, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	for i, text := range lines {
		var l map[string]any
		if err := json.Unmarshal([]byte(text), &l); err != nil {
			t.Fatal(err)
		}
		turns := attempts[int(l["index"].(float64))]
		prompt, completion, mask := int32s(l["prompt_ids"]), int32s(l["completion_ids"]), int32s(l["env_mask"])
		if !slices.Equal(prompt, turns[0].PromptIDs) {
			t.Errorf("line %d: prompt_ids %v, the server's first prompt %v", i, prompt, turns[0].PromptIDs)
		}
		// Turn by turn: each turn's new prompt part (mask 0) then its
		// sampled ids (mask 1), with the server's logprobs.
		lps := l["logprobs"].([]any)
		pos := 0
		seq := slices.Clone(turns[0].PromptIDs)
		for k, s := range turns {
			env := s.PromptIDs[len(seq):]
			if !slices.Equal(s.PromptIDs[:len(seq)], seq) {
				t.Fatalf("turn %d: the server's prompt does not extend the conversation", k)
			}
			for j, id := range env {
				if completion[pos+j] != id || mask[pos+j] != 0 {
					t.Errorf("line %d turn %d env %d: id %d mask %d, want %d mask 0", i, k, j, completion[pos+j], mask[pos+j], id)
				}
			}
			pos += len(env)
			for j, id := range s.CompletionIDs {
				if completion[pos+j] != id || mask[pos+j] != 1 || float32(lps[pos+j].(float64)) != float32(s.Logprobs[j]) {
					t.Errorf("line %d turn %d token %d: id %d mask %d logprob %v, the server sampled %d with %v", i, k, j, completion[pos+j], mask[pos+j], lps[pos+j], id, s.Logprobs[j])
				}
			}
			pos += len(s.CompletionIDs)
			seq = append(append(seq, env...), s.CompletionIDs...)
		}
		if pos != len(completion) || len(mask) != len(completion) || len(lps) != len(completion) {
			t.Errorf("line %d: %d completion ids, %d mask, %d logprobs; the server's turns make %d", i, len(completion), len(mask), len(lps), pos)
		}
		if l["sampling"].(map[string]any)["temperature"] != 0.6 {
			t.Errorf("line %d: sampling %v", i, l["sampling"])
		}
		if d := l["model_digests"].([]any); len(d) != 3 || d[0] != "root=/models/qwen" {
			t.Errorf("line %d: model_digests %v, want the server's /v1/models root on every turn", i, d)
		}
	}
}

// TestExportTokensLeavesOutBadTurns: a server that drops the ids on some
// turn, or gives logprobs of the wrong length: those attempts are stored
// and scored, and left out of the token export with a count and a
// reason; the messages export still has them.
func TestExportTokensLeavesOutBadTurns(t *testing.T) {
	n := 0
	srv := openaitest.New(toolScript, openaitest.WithModels("qwen"), openaitest.WithTokenIDs(),
		openaitest.WithReplyFault(func(turn int, body map[string]any) {
			if turn != 1 {
				return
			}
			n++
			if n > 2 {
				return // attempt 2: whole
			}
			ch := body["choices"].([]map[string]any)[0]
			if n == 1 { // attempt 0: no ids on its second turn
				delete(body, "prompt_token_ids")
				delete(ch, "token_ids")
				delete(ch, "logprobs")
				return
			}
			lp := ch["logprobs"].(map[string]any) // attempt 1: a logprob short
			c := lp["content"].([]map[string]any)
			lp["content"] = c[:len(c)-1]
		}))
	defer srv.Close()
	dir := t.TempDir()
	db := filepath.Join(dir, "bench.db")
	code, _, stderr := bench(t, "run", "--api", "openai", "--host", srv.URL, "--model", "qwen", "--task", recipeTask,
		"--attempts", "3", "-j", "1", "--tokens", "--no-progress", "--db", db)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "token data: 7 of 9 turns exact; attempts with other turns are left out") || !strings.Contains(stderr, "1: the server returned N logprobs for N completion token ids") {
		t.Errorf("the run did not say what of its token data is exact:\n%s", stderr)
	}
	code, out, stderr := bench(t, "export", "--db", db, "--tokens", "verifiers")
	if code != 0 || strings.Count(out, "\n") != 1 || !strings.Contains(stderr, "2 attempts without exact token data left out") ||
		!strings.Contains(stderr, "no token ids and no logprobs") || !strings.Contains(stderr, "N logprobs for N completion token ids") {
		t.Errorf("export --tokens: exit %d, %d lines\n%s", code, strings.Count(out, "\n"), stderr)
	}
	code, out, _ = bench(t, "export", "--db", db)
	if code != 0 || strings.Count(out, "\n") != 3 {
		t.Errorf("the messages export has %d lines, want all 3 attempts", strings.Count(out, "\n"))
	}
	if code, _, stderr := bench(t, "export", "--db", db, "--tokens", "rllib"); code != 2 || !strings.Contains(stderr, "expected trl or verifiers") {
		t.Errorf("--tokens rllib: exit %d, %s", code, stderr)
	}
}

// TestModelDigestRequired: an attempt served by other weights than
// --model-digest requires is an infrastructure failure, never scored;
// with the weights required, every turn records them.
func TestModelDigestRequired(t *testing.T) {
	srv := openaitest.New(toolScript, openaitest.WithRoot("qwen", "/ckpt/step-7"), openaitest.WithTokenIDs())
	defer srv.Close()
	dir := t.TempDir()
	for _, tt := range []struct {
		digest, status string
	}{
		{"root=/ckpt/step-6", "infra_error"},
		{"root=/ckpt/step-7", "finished"},
	} {
		db := filepath.Join(dir, strings.ReplaceAll(tt.digest, "/", "_")+".db")
		code, _, stderr := bench(t, "run", "--api", "openai", "--host", srv.URL, "--model", "qwen", "--task", recipeTask,
			"--attempts", "1", "--max-tries", "1", "--model-digest", tt.digest, "--no-progress", "--db", db)
		if code != 0 && tt.status == "finished" {
			t.Fatalf("run with %s: exit %d\n%s", tt.digest, code, stderr)
		}
		store, err := results.Open(context.Background(), db)
		if err != nil {
			t.Fatal(err)
		}
		var rows []struct {
			Status string `db:"status"`
			Error  string `db:"error"`
		}
		if err := store.DB().Select(&rows, `SELECT status, error FROM attempts`); err != nil || len(rows) != 1 {
			t.Fatalf("%s: attempts %v, %v", tt.digest, rows, err)
		}
		if rows[0].Status != tt.status {
			t.Errorf("%s: attempt %s (%s), want %s", tt.digest, rows[0].Status, rows[0].Error, tt.status)
		}
		if tt.status == "infra_error" && !strings.Contains(rows[0].Error, `serves qwen as "root=/ckpt/step-7", the request requires "root=/ckpt/step-6"`) {
			t.Errorf("%s: error %q", tt.digest, rows[0].Error)
		}
		var digests []string
		if err := store.DB().Select(&digests, `SELECT DISTINCT model_digest FROM turns`); err != nil {
			t.Fatal(err)
		}
		if tt.status == "finished" && (len(digests) != 1 || digests[0] != tt.digest) {
			t.Errorf("%s: turns.model_digest %v", tt.digest, digests)
		}
		store.Close()
	}
}

// TestOllamaTokensAreLeftOut: Ollama gives logprobs as text, without ids:
// stored, never exact, and every attempt is left out of the token export
// with that reason.
func TestOllamaTokensAreLeftOut(t *testing.T) {
	srv := ollamatest.New(lookScript)
	defer srv.Close()
	db := filepath.Join(t.TempDir(), "bench.db")
	code, _, stderr := bench(t, "run", "--host", srv.URL, "--model", "fake", "--task", recipeTask, "--attempts", "2", "--tokens", "--no-progress", "--db", db)
	if code != 0 || !strings.Contains(stderr, "token data: 0 of 4 turns exact") || !strings.Contains(stderr, "Ollama gives the sampled tokens as text") {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	code, out, stderr := bench(t, "export", "--db", db, "--tokens", "trl")
	if code != 0 || out != "" || !strings.Contains(stderr, "2: a turn's tokens are not exact: Ollama gives the sampled tokens as text") {
		t.Errorf("export: exit %d, %q\n%s", code, out, stderr)
	}
}
