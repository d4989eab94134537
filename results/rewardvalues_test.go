package results

import (
	"context"
	"strings"
	"testing"

	"github.com/benchhq/bench/evaluator"
)

// A run whose tasks' own verifiers wrote fractional rewards says, in its
// report, how bench read them; a run of bench's own tasks says nothing.
func TestReportSaysHowFractionalRewardsWereRead(t *testing.T) {
	for _, c := range []struct {
		name    string
		verdict evaluator.Verdict
		values  []float64
		want    int
	}{
		{"a verifier's fractions", evaluator.VerdictInProcess, []float64{0.5, 1, 0}, 1},
		{"a verifier's whole rewards", evaluator.VerdictInProcess, []float64{1, 0}, 0},
		{"bench's own tasks", evaluator.VerdictGolden, []float64{0.5}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			s, _ := openTemp(t)
			r := testRun()
			for i := range r.Tasks {
				r.Tasks[i].Verdict = c.verdict
			}
			if err := s.CreateRun(ctx, r); err != nil {
				t.Fatal(err)
			}
			for i, v := range c.values {
				reward := 0
				if v == 1 {
					reward = 1
				}
				a := finishedAttempt(r.ID, AttemptKey{Arm: "baseline", Task: "csv-sum", Index: i}, reward)
				a.Test = &evaluator.TestResult{Command: "bash /tests/test.sh", Passed: reward == 1, Value: &v, Verdict: c.verdict}
				if _, err := s.SaveAttempt(ctx, a); err != nil {
					t.Fatal(err)
				}
			}
			rep, err := s.Report(ctx, r.ID, ReportOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Run.RewardValues != c.want {
				t.Errorf("RewardValues %d, want %d", rep.Run.RewardValues, c.want)
			}
			if note := rep.Run.RewardValuesNote(); (c.want > 0) != strings.Contains(note, "1 only at 1.0") {
				t.Errorf("note %q", note)
			}
		})
	}
}
