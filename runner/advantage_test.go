package runner_test

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/benchhq/bench/evaluator"
	"github.com/benchhq/bench/results"
	"github.com/benchhq/bench/runner"
)

func TestStoreAdvantages(t *testing.T) {
	ctx := context.Background()
	store, err := results.Open(ctx, filepath.Join(t.TempDir(), "bench.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	start := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	run := &results.Run{ID: "r", CreatedAt: start, Model: "m", AttemptsPerTask: 3,
		Arms:  []results.Arm{{Name: "base"}, {Name: "tight", Index: 1}},
		Tasks: []results.TaskInfo{{ID: "t1"}, {ID: "t2"}}}
	if err := store.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	// -1 is an infrastructure failure: left out of its group.
	rewards := map[[2]string][]int{
		{"base", "t1"}: {1, -1, 0}, {"base", "t2"}: {1, 1, 1},
		{"tight", "t1"}: {0, 0, 1}, {"tight", "t2"}: {-1, -1, -1},
	}
	for k, rs := range rewards {
		for i, r := range rs {
			a := &results.Attempt{RunID: run.ID, Key: results.AttemptKey{Arm: k[0], Task: k[1], Index: i},
				Status: results.StatusFinished, StartedAt: start, FinishedAt: start.Add(time.Second)}
			if r < 0 {
				a.Status = results.StatusInfraError
			} else {
				a.Reward = &r
			}
			if _, err := store.SaveAttempt(ctx, a); err != nil {
				t.Fatal(err)
			}
		}
	}
	zeroVar, err := runner.StoreAdvantages(ctx, store, run.ID, evaluator.DrGRPO)
	if err != nil {
		t.Fatal(err)
	}
	// Three groups with a finished attempt; base/t2 (all pass) has no signal.
	if !(math.Abs(zeroVar-1.0/3) < 1e-12) {
		t.Errorf("zero-variance share %v, want 1/3", zeroVar)
	}
	attempts, err := store.AttemptMetrics(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := map[results.AttemptKey]float64{ // Dr. GRPO: r - group mean
		{Arm: "base", Task: "t1", Index: 0}: 0.5, {Arm: "base", Task: "t1", Index: 2}: -0.5,
		{Arm: "base", Task: "t2", Index: 0}: 0, {Arm: "base", Task: "t2", Index: 1}: 0, {Arm: "base", Task: "t2", Index: 2}: 0,
		{Arm: "tight", Task: "t1", Index: 0}: -1.0 / 3, {Arm: "tight", Task: "t1", Index: 1}: -1.0 / 3,
		{Arm: "tight", Task: "t1", Index: 2}: 2.0 / 3,
	}
	for _, a := range attempts {
		w, scored := want[a.Key]
		switch {
		case !scored && a.Advantage != nil:
			t.Errorf("%s (%s): advantage %v stored, want none", a.Key, a.Status, *a.Advantage)
		case scored && (a.Advantage == nil || math.Abs(*a.Advantage-w) > 1e-12 || a.AdvantageMethod != "drgrpo"):
			t.Errorf("%s: advantage %v (%s), want %v (drgrpo)", a.Key, a.Advantage, a.AdvantageMethod, w)
		}
	}

	if _, err := runner.StoreAdvantages(ctx, store, "nope", evaluator.GRPO); !errors.Is(err, results.ErrNoRun) {
		t.Errorf("missing run: %v, want ErrNoRun", err)
	}
}
