package results_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/benchhq/bench/evaluator"
	"github.com/benchhq/bench/results"
)

const tol = 1e-9

func near(a, b float64) bool { return math.Abs(a-b) < tol }

// val dereferences a nullable metric, NaN for nil.
func val(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

func fixtureReport(t *testing.T) *results.Report {
	t.Helper()
	s, run, _ := newFixture(t)
	rep, err := s.Report(context.Background(), run.ID, results.ReportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestReportPassAtK(t *testing.T) {
	rep := fixtureReport(t)
	if want := []int{1, 2, 4}; !equalInts(rep.Ks, want) {
		t.Fatalf("ks %v, want %v", rep.Ks, want)
	}
	nan := math.NaN()
	// Hand-computed: pass@k = 1 - C(n-c, k)/C(n, k), pass^k = C(c, k)/C(n, k),
	// undefined (NaN here) when fewer than k attempts finished.
	tests := []struct {
		arm, task         string
		finished, passes  int
		infra             int
		at, hat           [3]float64 // k = 1, 2, 4
		zeroVariance      bool
		denials, truncate int
	}{
		{"baseline", "alpha", 4, 3, 0, [3]float64{0.75, 1, 1}, [3]float64{0.75, 0.5, 0}, false, 0, 0},
		{"baseline", "beta", 4, 0, 0, [3]float64{0, 0, 0}, [3]float64{0, 0, 0}, true, 0, 0},
		{"baseline", "gamma", 3, 2, 1, [3]float64{2.0 / 3, 1, nan}, [3]float64{2.0 / 3, 1.0 / 3, nan}, false, 0, 1},
		{"strict", "alpha", 4, 1, 0, [3]float64{0.25, 0.5, 1}, [3]float64{0.25, 0, 0}, false, 1, 0},
		{"strict", "beta", 4, 4, 0, [3]float64{1, 1, 1}, [3]float64{1, 1, 1}, true, 0, 0},
		{"strict", "gamma", 2, 1, 2, [3]float64{0.5, 1, nan}, [3]float64{0.5, 0, nan}, false, 0, 0},
	}
	if len(rep.Tasks) != len(tests) {
		t.Fatalf("%d task rows, want %d", len(rep.Tasks), len(tests))
	}
	for i, tt := range tests {
		m := rep.Tasks[i]
		name := tt.arm + "/" + tt.task
		if m.Arm != tt.arm || m.Task != tt.task {
			t.Fatalf("row %d is %s/%s, want %s", i, m.Arm, m.Task, name)
		}
		if m.Finished != tt.finished || m.Passes != tt.passes || m.InfraErrors != tt.infra || m.Attempts != 4 {
			t.Errorf("%s: %d/%d passed, %d infra, %d attempts", name, m.Passes, m.Finished, m.InfraErrors, m.Attempts)
		}
		if !near(val(m.PassRate), float64(tt.passes)/float64(tt.finished)) {
			t.Errorf("%s: pass rate %v", name, val(m.PassRate))
		}
		for j, at := range m.AtK {
			if !sameFloat(val(at.PassAtK), tt.at[j]) || !sameFloat(val(at.PassHatK), tt.hat[j]) {
				t.Errorf("%s: k=%d: pass@k %v pass^k %v, want %v and %v", name, at.K, val(at.PassAtK), val(at.PassHatK), tt.at[j], tt.hat[j])
			}
		}
		if wantZero := 0; tt.zeroVariance {
			wantZero = 1
			if m.ZeroVarianceGroups != wantZero || m.Groups != 1 {
				t.Errorf("%s: zero-variance groups %d of %d", name, m.ZeroVarianceGroups, m.Groups)
			}
		} else if m.ZeroVarianceGroups != wantZero {
			t.Errorf("%s: zero-variance groups %d", name, m.ZeroVarianceGroups)
		}
		if m.Denials != tt.denials || m.TruncatedTurns != tt.truncate {
			t.Errorf("%s: %d denials, %d truncated turns", name, m.Denials, m.TruncatedTurns)
		}
	}

	// Distributions over finished attempts only: baseline/gamma has
	// attempts 0, 2 and 3 (idx+1 turns, 100 prompt tokens a turn).
	g := rep.Tasks[2]
	if g.Turns.N != 3 || !near(g.Turns.Mean, 8.0/3) || !near(g.Turns.P50, 3) || !near(g.Turns.P90, 3.8) ||
		g.Turns.Min != 1 || g.Turns.Max != 4 {
		t.Errorf("baseline/gamma turns %+v", g.Turns)
	}
	if !near(g.PromptTokens.Mean, 800.0/3) || !near(g.CompletionTokens.P50, 30) || !near(g.WallMS.P90, 3800) {
		t.Errorf("baseline/gamma tokens %+v %+v wall %+v", g.PromptTokens, g.CompletionTokens, g.WallMS)
	}

	// Per arm: pooled pass rate with Wilson; pass@k averaged over tasks
	// with at least k finished attempts.
	b := rep.Arms[0]
	lo, hi := evaluator.Wilson(5, 11, evaluator.Z95)
	if b.Arm != "baseline" || b.Passes != 5 || b.Finished != 11 || b.InfraErrors != 1 ||
		!near(b.PassRateCI95[0], lo) || !near(b.PassRateCI95[1], hi) {
		t.Errorf("baseline arm: %d/%d, %d infra, CI %v (want [%v %v])", b.Passes, b.Finished, b.InfraErrors, b.PassRateCI95, lo, hi)
	}
	if at := b.AtK[0]; !near(val(at.PassAtK), (0.75+0+2.0/3)/3) || at.Groups != 3 || at.Partial {
		t.Errorf("baseline pass@1 %+v", at)
	}
	if at := b.AtK[2]; !near(val(at.PassAtK), 0.5) || !near(val(at.PassHatK), 0) || at.Groups != 2 || !at.Partial {
		t.Errorf("baseline pass@4 %v pass^4 %v over %d groups, partial %v", val(at.PassAtK), val(at.PassHatK), at.Groups, at.Partial)
	}
	s := rep.Arms[1]
	if s.Denials != 1 || !near(val(s.DenialsPerAttempt), 0.1) || s.InfraErrors != 2 {
		t.Errorf("strict: %d denials (%v per attempt), %d infra", s.Denials, val(s.DenialsPerAttempt), s.InfraErrors)
	}
	if tot := rep.Total; tot.Finished != 21 || tot.Passes != 11 || tot.Groups != 6 || tot.ZeroVarianceGroups != 2 ||
		!near(val(tot.ZeroVarianceShare), 1.0/3) || tot.TruncatedTurns != 1 {
		t.Errorf("total: %d/%d, zero variance %d/%d (%v), truncated %d", tot.Passes, tot.Finished,
			tot.ZeroVarianceGroups, tot.Groups, val(tot.ZeroVarianceShare), tot.TruncatedTurns)
	}
	if a := rep.Advantage; len(a.Methods) != 1 || a.Methods[0] != "grpo" || a.Stored != 21 || a.Missing != 0 {
		t.Errorf("advantage info %+v", a)
	}
}

func TestReportComparison(t *testing.T) {
	rep := fixtureReport(t)
	if len(rep.Comparisons) != 1 {
		t.Fatalf("%d comparisons, want 1", len(rep.Comparisons))
	}
	c := rep.Comparisons[0]
	if c.Baseline != "baseline" || c.Arm != "strict" || c.Tasks != 3 || len(c.SkippedTasks) != 0 {
		t.Errorf("comparison %+v", c)
	}
	// Per task: alpha 0.25 - 0.75, beta 1 - 0, gamma 0.5 - 2/3.
	wantDiffs := []float64{-0.5, 1, 0.5 - 2.0/3}
	for i, d := range c.Diffs {
		if !near(d.Diff, wantDiffs[i]) {
			t.Errorf("diff %s = %v, want %v", d.Task, d.Diff, wantDiffs[i])
		}
	}
	if !near(val(c.MeanDiff), (wantDiffs[0]+wantDiffs[1]+wantDiffs[2])/3) || c.Improved != 1 || c.Worsened != 2 || c.Ties != 0 {
		t.Errorf("mean diff %v, %d improved, %d worsened", val(c.MeanDiff), c.Improved, c.Worsened)
	}
	// Every one of the 8 sign flips reaches |sum| >= 1/3: p = 1, exactly.
	if !c.Exact || !near(val(c.P), 1) {
		t.Errorf("sign-flip p %v exact %v", val(c.P), c.Exact)
	}
	if len(c.MeanDiffCI) != 2 || c.MeanDiffCI[0] > val(c.MeanDiff) || c.MeanDiffCI[1] < val(c.MeanDiff) {
		t.Errorf("CI %v does not hold the mean %v", c.MeanDiffCI, val(c.MeanDiff))
	}
	// McNemar on (task, index) pairs both finished: alpha 4 pairs (2 only
	// baseline), beta 4 (4 only strict), gamma indexes 2 and 3 (one each).
	// p = 2 * P(Bin(8, 1/2) <= 3) = 2 * 93/256.
	want := results.McNemar{Pairs: 10, OnlyBaseline: 3, OnlyArm: 5, P: 2 * 93.0 / 256}
	if m := c.McNemar; m.Pairs != want.Pairs || m.OnlyBaseline != want.OnlyBaseline || m.OnlyArm != want.OnlyArm || !near(m.P, want.P) {
		t.Errorf("McNemar %+v, want %+v", m, want)
	}
}

func TestReportTable(t *testing.T) {
	rep := fixtureReport(t)
	var b bytes.Buffer
	if err := rep.Write(&b, results.FormatTable); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	checkWidth(t, out)
	for _, want := range []string{
		"run run-1 (fixture)",
		"model qwen3:4b  seed 42  G=4  suite examples  status finished",
		"options num_ctx=8192 temperature=0.7",
		"arms (2) baseline, strict  tasks 3",
		"TASK     PASS  TURNS  PROMPT  COMPL  WALL50  TEST50  INFRA",
		"arm baseline\n  alpha   3/4    2.5     250     25    2.5s    1.4s      0",
		"  gamma   2/3    2.7    ≥267     27    3.0s    1.4s      1",
		"arm strict\n  alpha   1/4    2.5     250     25    2.5s    1.4s      0",
		"time: model 4% (1m0s), tools 0% (0s), hidden tests 2% (28.6s), harness 94%",
		"ARM        PASS  RATE  95% CI    P@4   P^4  0-VAR",
		"baseline   5/11   45%  21–72%   50%*   0%*    33%",
		"strict     6/10   60%  31–83%  100%*  50%*    33%",
		"all arms  11/21   52%  32–72%   75%*  25%*    33%",
		"*: over the tasks",
		"ARM       TURNS  PROMPT  COMPL  TOOLS  DENY  CUT  INFRA",
		"baseline    2.5    ≥255     25      -  0.00    1      1",
		"all arms    2.6    ≥262     26      -  0.05    1      3",
		"≥: a lower bound",
		"ARM     TASKS     DIFF       95% CI      P  +/-/=  PAIRS  ONLY B/A  MCNEMAR",
		"strict      3  +11.1pp  [-50, +100]  1.000  1/2/0     10       3/5    0.727",
		"advantages: grpo, for all 21 finished attempts",
		"zero-variance groups: 2 of 6 groups (33%)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestReportChosenKs(t *testing.T) {
	s, run, _ := newFixture(t)
	rep, err := s.Report(context.Background(), run.ID, results.ReportOptions{Ks: []int{2, 2, 1}})
	if err != nil {
		t.Fatal(err)
	}
	if !equalInts(rep.Ks, []int{1, 2}) || len(rep.Tasks[0].AtK) != 2 {
		t.Fatalf("ks %v, at_k %+v", rep.Ks, rep.Tasks[0].AtK)
	}
	var b bytes.Buffer
	if err := rep.Write(&b, results.FormatTable); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"TASK     PASS   P@2   P^2  TURNS",
		"arm baseline\n  alpha   3/4  100%   50%",
		"ARM        PASS  RATE  95% CI  P@2  P^2  0-VAR",
		"baseline   5/11   45%  21–72%  67%  28%",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}

// TestReportDefaultKs: no k, nil or empty, means DefaultKs(G), and every
// format writes.
func TestReportDefaultKs(t *testing.T) {
	s, run, _ := newFixture(t)
	for _, tt := range []struct {
		name string
		ks   []int
	}{{"nil", nil}, {"empty", []int{}}} {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := s.Report(context.Background(), run.ID, results.ReportOptions{Ks: tt.ks})
			if err != nil {
				t.Fatal(err)
			}
			if want := []int{1, 2, 4}; !equalInts(rep.Ks, want) || len(rep.Total.AtK) != len(want) {
				t.Errorf("ks %v, at_k %+v, want ks %v", rep.Ks, rep.Total.AtK, want)
			}
			for _, f := range results.Formats() {
				var b bytes.Buffer
				if err := rep.Write(&b, f); err != nil {
					t.Errorf("%s: %v", f, err)
				}
			}
		})
	}
}

func TestReportJSON(t *testing.T) {
	rep := fixtureReport(t)
	var b bytes.Buffer
	if err := rep.Write(&b, results.FormatJSON); err != nil {
		t.Fatal(err)
	}
	// Decoded generically, as a Python or jq user would.
	var doc map[string]any
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("report JSON: %v\n%s", err, b.String())
	}
	for _, key := range []string{"version", "run", "ks", "advantage", "tasks", "arms", "total", "comparisons"} {
		if _, ok := doc[key]; !ok {
			t.Errorf("report JSON lacks %q", key)
		}
	}
	run := doc["run"].(map[string]any)
	if run["id"] != "run-1" || run["attempts_per_task"] != 4.0 || run["created_at"] != "2025-03-01T12:00:00Z" ||
		run["options"].(map[string]any)["num_ctx"] != 8192.0 {
		t.Errorf("run header %v", run)
	}
	task := doc["tasks"].([]any)[2].(map[string]any)
	atk := task["at_k"].([]any)
	if task["arm"] != "baseline" || task["task"] != "gamma" || task["infra_errors"] != 1.0 ||
		atk[2].(map[string]any)["pass_at_k"] != nil || atk[1].(map[string]any)["pass_hat_k"].(float64)-1.0/3 > tol {
		t.Errorf("baseline/gamma %v", task)
	}
	if w := task["wall_ms"].(map[string]any); w["p50"] != 3000.0 || w["n"] != 3.0 {
		t.Errorf("wall_ms %v", w)
	}
	cmp := doc["comparisons"].([]any)[0].(map[string]any)
	if cmp["arm"] != "strict" || cmp["exact"] != true || cmp["mcnemar"].(map[string]any)["only_arm"] != 5.0 {
		t.Errorf("comparison %v", cmp)
	}
	// And into the Go type, unchanged.
	var back results.Report
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.Version != results.ReportVersion || back.Total.Passes != 11 || len(back.Tasks) != 6 {
		t.Errorf("decoded report %+v", back)
	}
}

func TestReportMarkdownAndCSV(t *testing.T) {
	rep := fixtureReport(t)
	var md bytes.Buffer
	if err := rep.Write(&md, results.FormatMarkdown); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"# run run-1 (fixture)",
		"| ARM | TASK | PASS | TURNS |",
		"| --- | --- | ---: |",
		"| baseline | gamma | 2/3 | 2.7 | ≥267 |",
		"## Against baseline",
		"- advantages: grpo",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}

	var b bytes.Buffer
	if err := rep.Write(&b, results.FormatCSV); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1+6+2+1 {
		t.Fatalf("%d CSV records, want 10", len(recs))
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	get := func(row int, name string) string {
		i, ok := col[name]
		if !ok {
			t.Fatalf("CSV has no column %q: %v", name, recs[0])
		}
		return recs[row][i]
	}
	if get(3, "level") != "task" || get(3, "task") != "gamma" || get(3, "pass_at_4") != "" || get(3, "pass_hat_2") != "0.3333333333333333" {
		t.Errorf("gamma row %v", recs[3])
	}
	if get(8, "level") != "arm" || get(8, "arm") != "strict" || get(8, "baseline") != "baseline" ||
		get(8, "mcnemar_only_arm") != "5" || get(8, "p_exact") != "true" {
		t.Errorf("strict arm row %v", recs[8])
	}
	if get(9, "level") != "run" || get(9, "passes") != "11" || get(9, "baseline") != "" {
		t.Errorf("run row %v", recs[9])
	}
}

func TestReportFitsTheTerminal(t *testing.T) {
	ctx := context.Background()
	s, err := results.Open(ctx, t.TempDir()+"/bench.db")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	long := strings.Repeat("very-long-arm-name-", 4)
	run := &results.Run{ID: "r", Model: "m", AttemptsPerTask: 128, Status: results.RunRunning, CreatedAt: fixtureStart,
		Options: map[string]any{"temperature": 0.2, "num_ctx": 32768, "num_predict": 4096, "top_p": 0.95, "top_k": 40,
			"repeat_penalty": 1.1, "min_p": 0.05, "presence_penalty": 0.5, "frequency_penalty": 0.5},
		Arms:  []results.Arm{{Name: long + "a", Index: 0}, {Name: long + "b", Index: 1}},
		Tasks: []results.TaskInfo{{ID: strings.Repeat("task-with-a-very-long-name-", 5)}, {ID: "t"}}}
	if err := s.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	for i := range 128 {
		for _, arm := range run.Arms {
			r := i % 2
			a := &results.Attempt{RunID: run.ID, Key: results.AttemptKey{Arm: arm.Name, Task: "t", Index: i},
				Status: results.StatusFinished, Reward: &r, Trajectory: fixtureTrajectory(arm.Name, "t", 3),
				StartedAt: fixtureStart, FinishedAt: fixtureStart.Add(time.Hour)}
			a.Trajectory.Wall = 2*time.Hour + 3*time.Minute
			for j := range a.Trajectory.Turns {
				a.Trajectory.Turns[j].PromptTokens = 400_000
			}
			if _, err := s.SaveAttempt(ctx, a); err != nil {
				t.Fatal(err)
			}
		}
	}
	rep, err := s.Report(ctx, run.ID, results.ReportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := rep.Write(&b, results.FormatTable); err != nil {
		t.Fatal(err)
	}
	checkWidth(t, b.String())
	// Long names are cut in the middle: arms a and b stay apart.
	for _, want := range []string{"…-long-arm-name-a", "…-long-arm-name-b", "2h03m", "1.60M"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
}

func TestReportEmptyRun(t *testing.T) {
	ctx := context.Background()
	s, err := results.Open(ctx, t.TempDir()+"/bench.db")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	run := &results.Run{ID: "empty", Model: "m", AttemptsPerTask: 1, CreatedAt: fixtureStart,
		Arms: []results.Arm{{Name: "a"}, {Name: "b", Index: 1}}, Tasks: []results.TaskInfo{{ID: "t"}}}
	if err := s.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	rep, err := s.Report(ctx, run.ID, results.ReportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c := rep.Comparisons[0]; c.Tasks != 0 || c.MeanDiff != nil || len(c.SkippedTasks) != 1 {
		t.Errorf("comparison of empty arms %+v", c)
	}
	for _, f := range results.Formats() {
		var b bytes.Buffer
		if err := rep.Write(&b, f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	if _, err := s.Report(ctx, run.ID, results.ReportOptions{Ks: []int{2}}); err == nil || !strings.Contains(err.Error(), "k = 2") {
		t.Errorf("k above G: %v", err)
	}
	if _, err := results.ParseFormat("yaml"); err == nil || !strings.Contains(err.Error(), "table, json, markdown, csv") {
		t.Errorf("ParseFormat(yaml) = %v", err)
	}
}

func TestDefaultKs(t *testing.T) {
	for _, tt := range []struct {
		g    int
		want []int
	}{{1, []int{1}}, {2, []int{1, 2}}, {4, []int{1, 2, 4}}, {5, []int{1, 2, 4, 5}}, {16, []int{1, 2, 4, 8, 16}}} {
		if got := results.DefaultKs(tt.g); !equalInts(got, tt.want) {
			t.Errorf("DefaultKs(%d) = %v, want %v", tt.g, got, tt.want)
		}
	}
}

func checkWidth(t *testing.T, out string) {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if n := len([]rune(line)); n > 80 { // a terminal's width

			t.Errorf("line of %d columns: %q", n, line)
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// sameFloat is near, with NaN equal to NaN.
func sameFloat(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return near(a, b)
}
