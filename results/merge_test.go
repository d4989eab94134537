package results

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// tableCounts counts the rows of every table, for run runID's rows only
// where a table says which run a row is of.
func tableCounts(t *testing.T, s *Store) map[string]int {
	t.Helper()
	tables, err := s.mergeTables(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, tb := range tables {
		var n int
		if err := s.DB().Get(&n, `SELECT count(*) FROM "`+tb.name+`"`); err != nil {
			t.Fatal(err)
		}
		out[tb.name] = n
	}
	return out
}

// TestMergeRunCopiesEveryTable: two pieces of a run become one, with every
// row of every table of the schema, under new attempt ids.
func TestMergeRunCopiesEveryTable(t *testing.T) {
	ctx := context.Background()
	a, _ := openTemp(t)
	b, _ := openTemp(t)
	run := createRun(t, a)
	createRun(t, b)
	if err := a.SaveOverhead(ctx, run.ID, testOverhead("baseline")); err != nil {
		t.Fatal(err)
	}
	var idsA, idsB []int64
	save := func(s *Store, ids *[]int64, att *Attempt) {
		withTokens(att.Trajectory, 5) // every first prompt the same: one token_prompts row a file
		id, err := s.SaveAttempt(ctx, att)
		if err != nil {
			t.Fatal(err)
		}
		*ids = append(*ids, id)
	}
	save(a, &idsA, finishedAttempt(run.ID, AttemptKey{Arm: "baseline", Task: "csv-sum", Index: 0}, 1))
	save(a, &idsA, finishedAttempt(run.ID, AttemptKey{Arm: "strict", Task: "csv-sum", Index: 0}, 0))
	save(b, &idsB, finishedAttempt(run.ID, AttemptKey{Arm: "baseline", Task: "csv-sum", Index: 1}, 0))
	save(b, &idsB, infraAttempt(run.ID, AttemptKey{Arm: "strict", Task: "csv-sum", Index: 1}))
	// Left out: a piece's attempt the merge does not take.
	if _, err := b.SaveAttempt(ctx, finishedAttempt(run.ID, AttemptKey{Arm: "strict", Task: "recipe-trailing-dot", Index: 3}, 1)); err != nil { // without token data
		t.Fatal(err)
	}

	out, err := Open(ctx, filepath.Join(t.TempDir(), "out.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	// An unrelated run already in the file keeps its ids.
	other := testRun()
	other.ID = "other"
	if err := out.CreateRun(ctx, other); err != nil {
		t.Fatal(err)
	}
	if _, err := out.SaveAttempt(ctx, finishedAttempt("other", AttemptKey{Arm: "baseline", Task: "csv-sum", Index: 0}, 1)); err != nil {
		t.Fatal(err)
	}
	before := tableCounts(t, out)
	patch := RunPatch{Status: RunFinished, CreatedAt: t0, FinishedAt: &t0}
	if err := out.MergeRun(ctx, run.ID, patch, []MergePiece{{Store: a, Attempts: idsA}, {Store: b, Attempts: idsB}}); err != nil {
		t.Fatal(err)
	}
	ca, cb, co := tableCounts(t, a), tableCounts(t, b), tableCounts(t, out)
	for name, n := range co {
		want := before[name]
		switch name {
		case "runs", "arms", "tasks", "overhead", "overhead_items":
			want += ca[name] // the plan, once, from the first piece
		case "tool_lists", "token_prompts":
			continue // shared by content: checked below
		default:
			// b's left-out attempt has 3 turns, 2 calls, 7 messages, 1 test, 1 server.
			left := map[string]int{"attempts": 1, "turns": 3, "tool_calls": 2, "messages": 7, "test_results": 1, "attempt_servers": 1}[name]
			want += ca[name] + cb[name] - left
		}
		if n != want {
			t.Errorf("table %s: %d rows after merging, want %d", name, n, want)
		}
	}
	var prompts int
	if err := out.DB().Get(&prompts, `SELECT count(*) FROM token_prompts`); err != nil || prompts != 1 {
		t.Errorf("%d first prompts after merging (%v), want the pieces' one, once", prompts, err)
	}
	// The baseline attempt of each piece (index 0 from a, 1 from b) reads
	// back its token data whole, first prompt included.
	for idx, piece := range []struct {
		s  *Store
		id int64
	}{{a, idsA[0]}, {b, idsB[0]}} {
		want, err := piece.s.TurnTokens(ctx, piece.id)
		if err != nil || len(want) != 3 {
			t.Fatalf("token data of piece attempt %d: %d turns, %v", piece.id, len(want), err)
		}
		var merged int64
		if err := out.DB().Get(&merged, `SELECT id FROM attempts WHERE run_id = ? AND arm = 'baseline' AND idx = ?`, run.ID, idx); err != nil {
			t.Fatal(err)
		}
		got, err := out.TurnTokens(ctx, merged)
		if err != nil || len(got) != 3 {
			t.Fatalf("token data of merged attempt %d: %d turns, %v", merged, len(got), err)
		}
		for i := range got {
			if !slices.Equal(got[i].PromptIDs, want[i].PromptIDs) || !slices.Equal(got[i].CompletionIDs, want[i].CompletionIDs) || !slices.Equal(got[i].Logprobs, want[i].Logprobs) {
				t.Errorf("merged attempt %d turn %d: %+v, the piece had %+v", merged, i, got[i], want[i])
			}
		}
	}
	got, err := out.GetRun(ctx, run.ID)
	if err != nil || got.Status != RunFinished || got.Shard != "" || len(got.Arms) != 2 || len(got.Tasks) != 2 {
		t.Errorf("merged run %+v, %v", got, err)
	}
	ms, err := out.AttemptMetrics(ctx, run.ID)
	if err != nil || len(ms) != 4 {
		t.Fatalf("merged attempts %d, %v; want 4", len(ms), err)
	}
	var lists, dangling int
	if err := out.DB().Get(&lists, `SELECT count(*) FROM tool_lists`); err != nil || lists != 1 {
		t.Errorf("%d tool lists after merging (%v), want the one list every attempt shares", lists, err)
	}
	if err := out.DB().Get(&dangling, `SELECT count(*) FROM attempts WHERE tool_list_id IS NULL
		OR tool_list_id NOT IN (SELECT id FROM tool_lists)`); err != nil || dangling != 0 {
		t.Errorf("%d attempts point at no tool list after merging (%v)", dangling, err)
	}
	var orphans int
	if err := out.DB().Get(&orphans, `SELECT count(*) FROM turns WHERE attempt_id NOT IN (SELECT id FROM attempts)`); err != nil || orphans != 0 {
		t.Errorf("turns pointing at no attempt: %d (%v)", orphans, err)
	}

	if err := out.MergeRun(ctx, run.ID, patch, []MergePiece{{Store: a, Attempts: idsA}}); err == nil || !strings.Contains(err.Error(), "already holds run") {
		t.Errorf("merging a run the file holds: %v", err)
	}
	if _, err := out.DB().Exec(`CREATE TABLE notes (text TEXT)`); err != nil {
		t.Fatal(err)
	}
	err = out.MergeRun(ctx, "x", patch, []MergePiece{{Store: a}})
	if err == nil || !strings.Contains(err.Error(), "table notes") {
		t.Errorf("a table merging does not know: %v; want it named", err)
	}
}
