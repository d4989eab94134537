package results_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/benchhq/bench/evaluator"
	"github.com/benchhq/bench/results"
)

func TestAdvantages(t *testing.T) {
	s, run, _ := newFixture(t)
	ctx := context.Background()
	attempts, err := s.AttemptMetrics(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	// The fixture's groups, finished attempts only, in index order.
	var groups [][]float64
	var ids [][]int64
	for _, arm := range []string{"baseline", "strict"} {
		for _, task := range []string{"alpha", "beta", "gamma"} {
			var rs []float64
			var is []int64
			for _, a := range attempts {
				if a.Key.Arm == arm && a.Key.Task == task && a.Status == results.StatusFinished {
					rs = append(rs, float64(*a.Reward))
					is = append(is, a.ID)
				}
			}
			groups, ids = append(groups, rs), append(ids, is)
		}
	}
	for _, m := range evaluator.Methods() {
		t.Run(string(m), func(t *testing.T) {
			adv, zeroVar, err := results.Advantages(run, attempts, m)
			if err != nil {
				t.Fatal(err)
			}
			want, err := evaluator.Advantages(m, groups)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for g := range groups {
				for i, id := range ids[g] {
					n++
					if got, ok := adv[id]; !ok || math.Abs(got-want[g][i]) > 1e-12 {
						t.Errorf("attempt %d: advantage %v (%v), want %v", id, got, ok, want[g][i])
					}
				}
			}
			if len(adv) != n || n != 21 {
				t.Errorf("%d advantages, want one per finished attempt (%d, 21)", len(adv), n)
			}
			// baseline/beta (all fail) and strict/beta (all pass) of 6 groups.
			if !near(zeroVar, 2.0/6) || !near(zeroVar, evaluator.ZeroVarianceShare(groups)) {
				t.Errorf("zero-variance share %v, want 1/3", zeroVar)
			}
		})
	}
}

func TestAdvantagesEdges(t *testing.T) {
	run := &results.Run{ID: "r", Arms: []results.Arm{{Name: "a"}}, Tasks: []results.TaskInfo{{ID: "t"}, {ID: "u"}}}
	one, zero := 1, 0
	tests := []struct {
		name     string
		attempts []results.AttemptMetrics
		method   evaluator.Method
		adv      map[int64]float64
		zeroVar  float64
		err      string
	}{
		{"no attempt", nil, evaluator.GRPO, map[int64]float64{}, 0, ""},
		{"only infra errors", []results.AttemptMetrics{
			{ID: 1, Key: results.AttemptKey{Arm: "a", Task: "t"}, Status: results.StatusInfraError},
		}, evaluator.GRPO, map[int64]float64{}, 0, ""},
		{"infra error left out of its group", []results.AttemptMetrics{
			{ID: 1, Key: results.AttemptKey{Arm: "a", Task: "t", Index: 0}, Status: results.StatusFinished, Reward: &one},
			{ID: 2, Key: results.AttemptKey{Arm: "a", Task: "t", Index: 1}, Status: results.StatusInfraError},
			{ID: 3, Key: results.AttemptKey{Arm: "a", Task: "t", Index: 2}, Status: results.StatusFinished, Reward: &zero},
			{ID: 4, Key: results.AttemptKey{Arm: "a", Task: "u", Index: 0}, Status: results.StatusFinished, Reward: &zero},
		}, evaluator.DrGRPO, map[int64]float64{1: 0.5, 3: -0.5, 4: 0}, 0.5, ""},
		{"unknown arm", []results.AttemptMetrics{
			{ID: 7, Key: results.AttemptKey{Arm: "b", Task: "t"}, Status: results.StatusFinished, Reward: &one},
		}, evaluator.GRPO, nil, 0, "attempt 7 (b/t#0): its arm or task is not in run"},
		{"unknown method", nil, "ppo", nil, 0, "unknown advantage method"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			adv, zeroVar, err := results.Advantages(run, tt.attempts, tt.method)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("error %v, want one saying %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(adv) != len(tt.adv) || zeroVar != tt.zeroVar {
				t.Errorf("advantages %v, zero-variance share %v; want %v, %v", adv, zeroVar, tt.adv, tt.zeroVar)
			}
			for id, want := range tt.adv {
				if got, ok := adv[id]; !ok || got != want {
					t.Errorf("attempt %d: %v (%v), want %v", id, got, ok, want)
				}
			}
		})
	}
}

// A finished attempt without a reward (SaveAttempt refuses one; another
// writer might not) is a clear error for every reader, never an attempt
// that counts nowhere.
func TestFinishedWithoutReward(t *testing.T) {
	s, run, _ := newFixture(t)
	ctx := context.Background()
	if _, err := s.DB().Exec(`UPDATE attempts SET reward = NULL WHERE arm = 'strict' AND task_id = 'beta' AND idx = 2`); err != nil {
		t.Fatal(err)
	}
	const want = "(strict/beta#2): column attempts.reward: NULL on a finished attempt"
	if _, err := s.AttemptMetrics(ctx, run.ID); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("AttemptMetrics: %v, want an error saying %q", err, want)
	}
	if _, err := s.Report(ctx, run.ID, results.ReportOptions{}); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Report: %v, want an error saying %q", err, want)
	}
	var b strings.Builder
	if _, err := s.Export(ctx, &b, results.ExportOptions{}); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Export: %v, want an error saying %q", err, want)
	}
	if b.Len() != 0 {
		t.Errorf("Export wrote %d bytes before failing", b.Len())
	}
}
