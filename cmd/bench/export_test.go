package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/results"
	"github.com/ollama/ollama/api"
)

// resultsDB writes a store with one run: arms base and tight, tasks t1
// and t2, G = 2, and returns its path. Rewards: base t1 [1 0], base t2
// [1 1], tight t1 [0 infra], tight t2 [0 1]. Advantages are stored (drgrpo).
func resultsDB(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "bench.db")
	s, err := results.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	start := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	run := &results.Run{ID: "r1", CreatedAt: start, Model: "qwen3:0.6b", Options: map[string]any{"num_ctx": 4096},
		Seed: 7, AttemptsPerTask: 2, Suite: "examples", Status: results.RunFinished,
		Arms:  []results.Arm{{Name: "base", Index: 0}, {Name: "tight", Index: 1}},
		Tasks: []results.TaskInfo{{ID: "t1"}, {ID: "t2"}}}
	if err := s.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	rewards := map[string][]int{"base/t1": {1, 0}, "base/t2": {1, 1}, "tight/t1": {0, -1}, "tight/t2": {0, 1}}
	for _, arm := range []string{"base", "tight"} {
		for _, task := range []string{"t1", "t2"} {
			for i, r := range rewards[arm+"/"+task] {
				args := api.NewToolCallFunctionArguments()
				args.Set("path", "x.txt")
				a := &results.Attempt{RunID: run.ID, Key: results.AttemptKey{Arm: arm, Task: task, Index: i},
					Status: results.StatusFinished, StartedAt: start, FinishedAt: start.Add(time.Second),
					Trajectory: &agent.Trajectory{
						Messages: []api.Message{{Role: "user", Content: "do " + task},
							{Role: "assistant", ToolCalls: []api.ToolCall{{Function: api.ToolCallFunction{Name: "read_file", Arguments: args}}}},
							{Role: "tool", Content: "x", ToolName: "read_file"},
							{Role: "assistant", Content: "done"}},
						Turns: []agent.Turn{{Index: 0, PromptTokens: 50, CompletionTokens: 5}, {Index: 1, PromptTokens: 60, CompletionTokens: 6}},
						Stop:  agent.StopAnswered, Wall: time.Second,
					}}
				if r < 0 {
					a.Status = results.StatusInfraError
				} else {
					a.Reward = &r
				}
				if _, err := s.SaveAttempt(ctx, a); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	rows, err := s.AttemptMetrics(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	adv := map[int64]float64{}
	for _, r := range rows {
		if r.Reward != nil {
			adv[r.ID] = 0 // every value is overwritten below for groups with signal
		}
	}
	// Dr. GRPO by hand: r - group mean. Only base/t1 and tight/t2 have signal.
	for _, r := range rows {
		switch k := r.Key.Arm + "/" + r.Key.Task; {
		case r.Reward == nil:
		case k == "base/t1" || k == "tight/t2":
			adv[r.ID] = float64(*r.Reward) - 0.5
		}
	}
	if err := s.SetAdvantages(ctx, "drgrpo", adv); err != nil {
		t.Fatal(err)
	}
	return path
}

// jsonLines decodes JSONL into generic objects, as a trainer would.
func jsonLines(t *testing.T, text string) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %d: %v: %s", len(out)+1, err, sc.Text())
		}
		out = append(out, m)
	}
	return out
}

func TestExportCommand(t *testing.T) {
	db := resultsDB(t)
	tests := []struct {
		name  string
		args  []string
		lines int
		check func(t *testing.T, lines []map[string]any)
	}{
		{"all", nil, 7, func(t *testing.T, lines []map[string]any) {
			l := lines[0]
			if l["group_id"] != "r1/base/t1" || l["reward"] != 1.0 || l["advantage"] != 0.5 || l["advantage_method"] != "drgrpo" ||
				l["model"] != "qwen3:0.6b" || l["prompt_tokens"] != 110.0 || l["completion_tokens"] != 11.0 {
				t.Errorf("first line %v", l)
			}
			msgs := l["messages"].([]any)
			call := msgs[1].(map[string]any)["tool_calls"].([]any)[0].(map[string]any)
			if call["type"] != "function" || call["function"].(map[string]any)["arguments"].(map[string]any)["path"] != "x.txt" {
				t.Errorf("tool call %v", call)
			}
			for _, l := range lines {
				if l["arm"] == "tight" && l["task_id"] == "t1" && l["index"] == 1.0 {
					t.Errorf("infrastructure failure exported: %v", l)
				}
			}
		}},
		{"only signal", []string{"--only-signal"}, 4, nil},
		{"sft", []string{"--sft"}, 4, func(t *testing.T, lines []map[string]any) {
			for _, l := range lines {
				if l["reward"] != 1.0 {
					t.Errorf("sft line with reward %v", l["reward"])
				}
			}
		}},
		{"arm and max reward", []string{"--arm", "tight", "--max-reward", "0"}, 2, nil},
		{"method", []string{"--method", "rloo", "--run", "r1", "--arm", "base,tight"}, 7, func(t *testing.T, lines []map[string]any) {
			if l := lines[0]; l["advantage"] != 1.0 || l["advantage_method"] != "rloo" {
				t.Errorf("rloo advantage %v (%v)", l["advantage"], l["advantage_method"])
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := bench(t, append([]string{"export", "--db", db}, tt.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			lines := jsonLines(t, stdout)
			if len(lines) != tt.lines {
				t.Errorf("%d lines, want %d\n%s", len(lines), tt.lines, stdout)
			}
			if !strings.Contains(stderr, "exported") {
				t.Errorf("stderr %q", stderr)
			}
			if tt.check != nil {
				tt.check(t, lines)
			}
		})
	}
}

func TestExportToFile(t *testing.T) {
	db := resultsDB(t)
	out := filepath.Join(t.TempDir(), "train.jsonl")
	code, stdout, stderr := bench(t, "export", "--db", db, "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if stdout != "" {
		t.Errorf("stdout %q, want nothing", stdout)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(jsonLines(t, string(b))); n != 7 {
		t.Errorf("%d lines in %s", n, out)
	}
	want := "exported 7 attempts from 4 groups of run r1 to " + out + " (advantages: drgrpo)"
	if !strings.Contains(stderr, want) || !strings.Contains(stderr, "1 attempts that did not finish") {
		t.Errorf("stderr %q, want %q", stderr, want)
	}
	// A failed export leaves the file as it was.
	if code, _, _ := bench(t, "export", "--db", db, "--out", out, "--run", "nope"); code != 2 {
		t.Errorf("exit %d", code)
	}
	if b2, _ := os.ReadFile(out); string(b2) != string(b) {
		t.Errorf("failed export changed %s", out)
	}
	entries, _ := os.ReadDir(filepath.Dir(out))
	if len(entries) != 1 {
		t.Errorf("left files behind: %v", entries)
	}
}

// TestExportToAPipe: --out naming a device or a pipe (/dev/null, a FIFO)
// writes into it; it never replaces it with a file (as root, a rename over
// /dev/null breaks the whole machine).
func TestExportToAPipe(t *testing.T) {
	db := resultsDB(t)
	fifo := filepath.Join(t.TempDir(), "train.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	got := make(chan []byte)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			got <- nil
			return
		}
		b, _ := io.ReadAll(f)
		f.Close()
		got <- b
	}()
	if code, _, stderr := bench(t, "export", "--db", db, "--out", fifo); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if n := len(jsonLines(t, string(<-got))); n != 7 {
		t.Errorf("%d lines through the pipe, want 7", n)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the pipe was replaced: %v, %v", fi, err)
	}
}

func TestReportCommandFormats(t *testing.T) {
	db := resultsDB(t)
	code, stdout, stderr := bench(t, "report", "--db", db, "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep results.Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("report JSON: %v\n%s", err, stdout)
	}
	if rep.Version != results.ReportVersion || rep.Run.ID != "r1" || len(rep.Tasks) != 4 || len(rep.Arms) != 2 ||
		rep.Total.Finished != 7 || rep.Total.InfraErrors != 1 || len(rep.Comparisons) != 1 ||
		rep.Comparisons[0].McNemar.Pairs != 3 || rep.Total.ZeroVarianceGroups != 2 {
		t.Errorf("report %+v", rep)
	}
	code, stdout, _ = bench(t, "report", "--db", db, "--k", "1", "r1")
	if code != 0 || !strings.Contains(stdout, "Against base, paired") || !strings.Contains(stdout, "zero-variance groups: 2 of 4 groups (50%)") ||
		!strings.Contains(stdout, "advantages: drgrpo, for all 7 finished attempts") {
		t.Errorf("exit %d, table:\n%s", code, stdout)
	}
	code, stdout, _ = bench(t, "report", "--db", db, "--format", "csv")
	if code != 0 || !strings.HasPrefix(stdout, "level,arm,task,") || strings.Count(stdout, "\n") != 1+4+2+1 {
		t.Errorf("exit %d, csv:\n%s", code, stdout)
	}
	code, stdout, _ = bench(t, "report", "--db", db, "--format", "markdown")
	if code != 0 || !strings.Contains(stdout, "| ARM | TASK |") {
		t.Errorf("exit %d, markdown:\n%s", code, stdout)
	}
}

func TestReportAndExportBadFlags(t *testing.T) {
	db := resultsDB(t)
	missing := filepath.Join(t.TempDir(), "none.db")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"report format", []string{"report", "--db", db, "--format", "yaml"}, "--format"},
		{"report k", []string{"report", "--db", db, "--k", "0"}, "--k"},
		{"report k above G", []string{"report", "--db", db, "--k", "3"}, "G = 2"},
		{"report no db", []string{"report", "--db", missing}, "no such file"},
		{"export method", []string{"export", "--db", db, "--method", "ppo"}, "--method"},
		{"export min reward", []string{"export", "--db", db, "--min-reward", "high"}, "min-reward"},
		{"export min above max", []string{"export", "--db", db, "--min-reward", "1", "--max-reward", "0"}, "above --max-reward"},
		{"export run", []string{"export", "--db", db, "--run", "nope"}, "--run nope: no such run"},
		{"export arm", []string{"export", "--db", db, "--arm", "loose"}, "--arm loose: no such arm in the run (arms: base, tight)"},
		{"export argument", []string{"export", "--db", db, "r1"}, "--run"},
		{"export no db", []string{"export", "--db", missing}, "no such file"},
		{"export unknown flag", []string{"export", "--format", "csv"}, "format"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := bench(t, tt.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2 (stderr %q)", code, stderr)
			}
			if !strings.Contains(stderr, tt.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
				t.Errorf("stderr %q, want one line saying %q", stderr, tt.want)
			}
			if stdout != "" {
				t.Errorf("stdout %q", stdout)
			}
		})
	}
}
