package runner_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/internal/ollamatest"
	"github.com/benchhq/bench/internal/reporttest"
	"github.com/benchhq/bench/internal/sandboxtest"
	"github.com/benchhq/bench/results"
	"github.com/benchhq/bench/runner"
	"github.com/benchhq/bench/tasks"
)

// wordSuite writes n small tasks: "write the word task-NN into answer.txt",
// checked by a hidden unittest.
func wordSuite(t *testing.T, n int) *tasks.Suite {
	t.Helper()
	root := filepath.Join(t.TempDir(), "words")
	for i := range n {
		id := fmt.Sprintf("task-%02d", i)
		files := map[string]string{
			"task.toml":          fmt.Sprintf("format = 1\ninstruction = \"Write the word %s into answer.txt.\"\n[tests]\ncommand = \"python3 -m unittest -q test_answer\"\n", id),
			"workspace/notes.md": "Nothing here yet.\n",
			"tests/test_answer.py": fmt.Sprintf(`import unittest
class T(unittest.TestCase):
    def test_answer(self):
        with open("answer.txt") as f:
            self.assertEqual(f.read().strip(), %q)
`, id),
		}
		for name, body := range files {
			p := filepath.Join(root, id, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	suite, err := tasks.LoadSuite(root)
	if err != nil {
		t.Fatal(err)
	}
	return suite
}

// seedScript passes or fails by the attempt's seed, and more often when
// run_command is offered: rewards vary within groups and between arms,
// the same way in every process, so advantages and comparisons have
// something to show.
func seedScript(req *api.ChatRequest) ollamatest.Reply {
	if len(req.Messages) < 2 {
		return ollamatest.Reply{Content: "ok"} // the overhead probes
	}
	for _, m := range req.Messages {
		if m.Role == "assistant" {
			return ollamatest.Reply{Content: "Written."}
		}
	}
	var seed int64
	switch v := req.Options["seed"].(type) {
	case float64:
		seed = int64(v)
	case int64:
		seed = v
	}
	pass := seed%5 < 2
	for _, tl := range req.Tools {
		if tl.Function.Name == "run_command" {
			pass = seed%5 < 3
		}
	}
	fields := strings.Fields(req.Messages[1].Content)
	word := fields[3] // "Write the word WORD into answer.txt."
	if !pass {
		word = "wrong"
	}
	return ollamatest.Reply{Calls: []ollamatest.Call{call("write_file", map[string]any{"path": "answer.txt", "content": word + "\n"})}}
}

func wordPlan(suite *tasks.Suite, shard runner.Shard) *runner.Plan {
	return &runner.Plan{Name: "words", Model: "fake", Suite: suite, Attempts: 2, Concurrency: 4, Seed: 11, Shard: shard,
		Arms: []runner.Arm{{Name: "all"}, {Name: "no-exec", Tools: []string{"read_file", "write_file", "list_dir"}}}}
}

// runInto runs plan in a fresh store at path, against one fake server.
func runInto(t *testing.T, path string, plan *runner.Plan) *results.Store {
	t.Helper()
	srv := ollamatest.New(seedScript)
	t.Cleanup(srv.Close)
	store, err := results.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	model, _ := agent.NewOllama(srv.URL, nil)
	r := &runner.Runner{Model: model, Store: store, TempDir: t.TempDir(), Sandbox: sandboxtest.New(t)}
	if _, err := r.Run(context.Background(), plan, plan.Name); err != nil {
		t.Fatal(err)
	}
	return store
}

// reportJSON is a run's report as JSON, without what differs from one
// execution to the next: times and wall-time percentiles.
func reportJSON(t *testing.T, s *results.Store, runID string) map[string]any {
	t.Helper()
	rep, err := s.Report(context.Background(), runID, results.ReportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(rep)
	return reporttest.Timeless(t, b)
}

// advantages are the stored advantages of a run by attempt key.
func advantages(t *testing.T, s *results.Store, runID string) map[string]float64 {
	t.Helper()
	ms, err := s.AttemptMetrics(context.Background(), runID)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, m := range ms {
		if m.Advantage == nil {
			t.Fatalf("attempt %s has no advantage", m.Key)
		}
		out[m.Key.String()] = *m.Advantage
	}
	return out
}

// TestMergedShardsReportEqualsSingleRun: a 13-task run of two arms done
// in one piece, and the same run done as three shards in three files and
// merged, give the same report (times aside) and the same advantage for
// every attempt, though each shard held only parts of the groups.
func TestMergedShardsReportEqualsSingleRun(t *testing.T) {
	suite := wordSuite(t, 13)
	dir := t.TempDir()
	single := runInto(t, filepath.Join(dir, "single.db"), wordPlan(suite, runner.Shard{}))

	var ins []runner.MergeInput
	for i := range 3 {
		path := filepath.Join(dir, fmt.Sprintf("shard-%d.db", i))
		ins = append(ins, runner.MergeInput{Path: path, Store: runInto(t, path, wordPlan(suite, runner.Shard{Index: i, Count: 3}))})
	}
	out, err := results.Open(context.Background(), filepath.Join(dir, "merged.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	res, err := runner.Merge(context.Background(), out, "", ins, false)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete || res.Finished != 13*2*2 || len(res.Missing) != 0 {
		t.Fatalf("merge: complete %v, finished %d, missing %d; want complete with 52", res.Complete, res.Finished, len(res.Missing))
	}
	want, got := reportJSON(t, single, "words"), reportJSON(t, out, "words")
	if !reflect.DeepEqual(want, got) {
		wb, _ := json.MarshalIndent(want, "", " ")
		gb, _ := json.MarshalIndent(got, "", " ")
		t.Fatalf("merged report differs from the single run's:\nsingle: %s\nmerged: %s", wb, gb)
	}
	if got["total"].(map[string]any)["passes"].(float64) == 0 || got["total"].(map[string]any)["zero_variance_groups"].(float64) == 26 {
		t.Errorf("the script gave no variety: the comparison proves little")
	}
	if wa, ga := advantages(t, single, "words"), advantages(t, out, "words"); !reflect.DeepEqual(wa, ga) {
		t.Errorf("advantages differ:\nsingle %v\nmerged %v", wa, ga)
	}
}

// TestMergeRefusesWhatDoesNotFit: duplicates, other plans and a piece
// missing are told apart; a merge with attempts missing is left to be
// completed by a resume.
func TestMergeRefusesWhatDoesNotFit(t *testing.T) {
	ctx := context.Background()
	suite := wordSuite(t, 2)
	dir := t.TempDir()
	shard := func(name string, i int, plan *runner.Plan) runner.MergeInput {
		path := filepath.Join(dir, name)
		plan.Shard = runner.Shard{Index: i, Count: 2}
		return runner.MergeInput{Path: path, Store: runInto(t, path, plan)}
	}
	s0 := shard("s0.db", 0, wordPlan(suite, runner.Shard{}))
	s1 := shard("s1.db", 1, wordPlan(suite, runner.Shard{}))
	other := wordPlan(suite, runner.Shard{})
	other.Seed = 12
	s1other := shard("s1-other-seed.db", 1, other)
	merge := func(ins ...runner.MergeInput) (*runner.MergeOutcome, error) {
		out, err := results.Open(ctx, filepath.Join(t.TempDir(), "out.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { out.Close() })
		return runner.Merge(ctx, out, "", ins, false)
	}
	for _, tt := range []struct {
		name string
		ins  []runner.MergeInput
		want string
	}{
		{"same shard twice", []runner.MergeInput{s0, s1, s0}, "finished in two inputs"},
		{"other seed", []runner.MergeInput{s0, s1other}, "seed"},
	} {
		if _, err := merge(tt.ins...); !errors.Is(err, runner.ErrMergeConflict) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v; want a conflict saying %q", tt.name, err, tt.want)
		}
	}

	outPath := filepath.Join(t.TempDir(), "partial.db")
	out, err := results.Open(ctx, outPath)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	res, err := runner.Merge(ctx, out, "", []runner.MergeInput{s0}, false)
	if err != nil {
		t.Fatal(err)
	}
	if res.Complete || len(res.Missing) != 4 || res.Run.Status != results.RunInterrupted {
		t.Fatalf("merge of one shard of two: complete %v, missing %d, status %s; want 4 missing, interrupted", res.Complete, len(res.Missing), res.Run.Status)
	}
	if res.Missing[0].String() != "all/task-01#0" {
		t.Errorf("first missing %s, want all/task-01#0 (unit 1, shard 1's)", res.Missing[0])
	}
	// The merged file resumes like any interrupted run.
	plan, err := runner.PlanFromRun(res.Run)
	if err != nil {
		t.Fatal(err)
	}
	srv := ollamatest.New(seedScript)
	defer srv.Close()
	model, _ := agent.NewOllama(srv.URL, nil)
	r := &runner.Runner{Model: model, Store: out, TempDir: t.TempDir(), Sandbox: sandboxtest.New(t)}
	done, err := r.Run(ctx, plan, res.Run.ID)
	if err != nil || done.Ran != 4 || done.Skipped != 4 {
		t.Fatalf("resume of the merged run: %+v, %v; want 4 run, 4 kept", done, err)
	}
	whole := runInto(t, filepath.Join(dir, "whole.db"), wordPlan(suite, runner.Shard{}))
	if !reflect.DeepEqual(reportJSON(t, whole, "words"), reportJSON(t, out, "words")) {
		t.Error("a merged run completed by a resume reports otherwise than the run in one piece")
	}
}
