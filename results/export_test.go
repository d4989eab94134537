package results_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/benchhq/bench/evaluator"
	"github.com/benchhq/bench/results"
)

// export runs an export and decodes its lines, checking that each is one
// JSON object on one line.
func export(t *testing.T, s *results.Store, opts results.ExportOptions) ([]results.ExportLine, results.ExportStats) {
	t.Helper()
	var b bytes.Buffer
	stats, err := s.Export(context.Background(), &b, opts)
	if err != nil {
		t.Fatalf("Export(%+v): %v", opts, err)
	}
	var lines []results.ExportLine
	sc := bufio.NewScanner(&b)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var l results.ExportLine
		dec := json.NewDecoder(strings.NewReader(sc.Text()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&l); err != nil {
			t.Fatalf("line %d: %v\n%s", len(lines)+1, err, sc.Text())
		}
		lines = append(lines, l)
	}
	if stats.Lines != len(lines) {
		t.Errorf("stats say %d lines, %d written", stats.Lines, len(lines))
	}
	return lines, stats
}

func byKey(lines []results.ExportLine) map[string]results.ExportLine {
	m := map[string]results.ExportLine{}
	for _, l := range lines {
		m[fmt.Sprintf("%s/%s#%d", l.Arm, l.TaskID, l.Index)] = l
	}
	return m
}

func TestExportLine(t *testing.T) {
	s, run, _ := newFixture(t)
	lines, stats := export(t, s, results.ExportOptions{})
	if len(lines) != 21 || stats.Groups != 6 || stats.Unscored != 3 || len(stats.Runs) != 1 || stats.Runs[0] != run.ID ||
		len(stats.Computed) != 0 || fmt.Sprint(stats.Methods) != "[grpo]" {
		t.Fatalf("%d lines, stats %+v", len(lines), stats)
	}
	got := byKey(lines)
	for _, key := range []string{"baseline/gamma#1", "strict/gamma#0", "strict/gamma#1"} {
		if _, ok := got[key]; ok {
			t.Errorf("infrastructure failure %s was exported", key)
		}
	}

	l := got["baseline/alpha#2"]
	if l.RunID != "run-1" || l.Arm != "baseline" || l.TaskID != "alpha" || l.Index != 2 || l.AttemptID == 0 ||
		l.GroupID != "run-1/baseline/alpha" || l.GroupSize != 4 || l.Seed != 102 {
		t.Errorf("identity: %+v", l)
	}
	if l.Model != "qwen3:4b" || l.Options["temperature"] != 0.7 || l.Options["num_ctx"] != 8192.0 {
		t.Errorf("model %q options %v", l.Model, l.Options)
	}
	// Group [1 1 0 1]: mean 3/4, sample std 1/2, GRPO (0 - 0.75) / (0.5 + 1e-4).
	if l.Reward != 0 || math.Abs(l.Advantage-(-0.75/(0.5+evaluator.GRPOEpsilon))) > 1e-12 || l.AdvantageMethod != "grpo" {
		t.Errorf("reward %v advantage %v (%s)", l.Reward, l.Advantage, l.AdvantageMethod)
	}
	if l.Turns != 3 || l.ToolCalls != 1 || l.PromptTokens != 300 || l.CompletionTokens != 30 ||
		l.StopReason != "answered" || l.WallMS != 3000 {
		t.Errorf("counts: %+v", l)
	}
	if gs := got["baseline/gamma#3"]; gs.GroupSize != 3 || gs.Reward != 1 {
		t.Errorf("baseline/gamma#3: group of %d (the infrastructure failure is not a member), reward %v", gs.GroupSize, gs.Reward)
	}

	// The conversation, in order, OpenAI-style.
	want := []results.ExportMessage{
		{Role: "system", Content: "You are an agent."},
		{Role: "user", Content: "Solve alpha <carefully> & well."},
		{Role: "assistant", ReasoningContent: "read it first", ToolCalls: []results.ExportToolCall{{ID: "call_2", Type: "function",
			Function: results.ExportFunction{Name: "read_file", Arguments: json.RawMessage(`{"path":"alpha-2.txt","mode":"r"}`)}}}},
		{Role: "tool", Content: "contents of alpha", Name: "read_file", ToolCallID: "call_2"},
		{Role: "assistant", Content: "Done with baseline/alpha#2."},
	}
	if len(l.Messages) != len(want) {
		t.Fatalf("%d messages, want %d: %+v", len(l.Messages), len(want), l.Messages)
	}
	for i, m := range l.Messages {
		w := want[i]
		if m.Role != w.Role || m.Content != w.Content || m.ReasoningContent != w.ReasoningContent || m.Name != w.Name ||
			m.ToolCallID != w.ToolCallID || len(m.ToolCalls) != len(w.ToolCalls) {
			t.Errorf("message %d: %+v, want %+v", i, m, w)
			continue
		}
		for j, c := range m.ToolCalls {
			wc := w.ToolCalls[j]
			// Arguments are an object, in the model's key order.
			if c.ID != wc.ID || c.Type != wc.Type || c.Function.Name != wc.Function.Name || string(c.Function.Arguments) != string(wc.Function.Arguments) {
				t.Errorf("message %d, call %d: %+v (arguments %s), want %+v (arguments %s)", i, j, c, c.Function.Arguments, wc, wc.Function.Arguments)
			}
		}
	}
	var tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name        string         `json:"name"`
			Description string         `json:"description"`
			Parameters  map[string]any `json:"parameters"`
		} `json:"function"`
	}
	if err := json.Unmarshal(l.Tools, &tools); err != nil {
		t.Fatal(err)
	}
	if len(tools) != 1 || tools[0].Type != "function" || tools[0].Function.Name != "read_file" ||
		tools[0].Function.Description != "Read a file." || tools[0].Function.Parameters["type"] != "object" {
		t.Errorf("tools %s", l.Tools)
	}
}

// TestExportRawShape checks the JSON as a trainer reads it: keys, and
// arguments as an object rather than a string.
func TestExportRawShape(t *testing.T) {
	s, _, _ := newFixture(t)
	var b bytes.Buffer
	if _, err := s.Export(context.Background(), &b, results.ExportOptions{Arms: []string{"baseline"}}); err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(b.String(), "\n")
	if !strings.Contains(first, `"content":"Solve alpha <carefully> & well."`) {
		t.Errorf("HTML characters escaped: %s", first)
	}
	var raw map[string]any
	if err := json.Unmarshal([]byte(first), &raw); err != nil {
		t.Fatal(err)
	}
	msgs := raw["messages"].([]any)
	call := msgs[2].(map[string]any)["tool_calls"].([]any)[0].(map[string]any)
	if call["type"] != "function" || call["id"] != "call_0" {
		t.Errorf("tool call %v", call)
	}
	fn := call["function"].(map[string]any)
	if args, ok := fn["arguments"].(map[string]any); !ok || args["path"] != "alpha-0.txt" {
		t.Errorf("arguments %#v, want an object", fn["arguments"])
	}
	if _, ok := fn["index"]; ok {
		t.Errorf("Ollama's index leaked into the OpenAI shape: %v", fn)
	}
	tool := msgs[3].(map[string]any)
	if tool["role"] != "tool" || tool["name"] != "read_file" || tool["tool_call_id"] != "call_0" {
		t.Errorf("tool message %v", tool)
	}
	for _, m := range msgs {
		if _, ok := m.(map[string]any)["content"]; !ok {
			t.Errorf("message without content: %v", m)
		}
	}
	if _, ok := raw["tools"].([]any); !ok {
		t.Errorf("tools %T, want an array", raw["tools"])
	}
}

func TestExportFilters(t *testing.T) {
	s, _, _ := newFixture(t)
	one, zero, half := 1.0, 0.0, 0.5
	tests := []struct {
		name string
		opts results.ExportOptions
		// want counts the lines per arm/task.
		want map[string]int
	}{
		{"all", results.ExportOptions{},
			map[string]int{"baseline/alpha": 4, "baseline/beta": 4, "baseline/gamma": 3, "strict/alpha": 4, "strict/beta": 4, "strict/gamma": 2}},
		{"only signal", results.ExportOptions{OnlySignal: true},
			map[string]int{"baseline/alpha": 4, "baseline/gamma": 3, "strict/alpha": 4, "strict/gamma": 2}},
		{"sft", results.ExportOptions{SFT: true},
			map[string]int{"baseline/alpha": 3, "baseline/gamma": 2, "strict/alpha": 1, "strict/beta": 4, "strict/gamma": 1}},
		{"sft with signal", results.ExportOptions{SFT: true, OnlySignal: true},
			map[string]int{"baseline/alpha": 3, "baseline/gamma": 2, "strict/alpha": 1, "strict/gamma": 1}},
		{"arm", results.ExportOptions{Arms: []string{"strict"}},
			map[string]int{"strict/alpha": 4, "strict/beta": 4, "strict/gamma": 2}},
		{"min reward", results.ExportOptions{MinReward: &half},
			map[string]int{"baseline/alpha": 3, "baseline/gamma": 2, "strict/alpha": 1, "strict/beta": 4, "strict/gamma": 1}},
		{"max reward", results.ExportOptions{MaxReward: &zero, Arms: []string{"baseline"}},
			map[string]int{"baseline/alpha": 1, "baseline/beta": 4, "baseline/gamma": 1}},
		{"min and max", results.ExportOptions{MinReward: &one, MaxReward: &one, Runs: []string{"run-1"}},
			map[string]int{"baseline/alpha": 3, "baseline/gamma": 2, "strict/alpha": 1, "strict/beta": 4, "strict/gamma": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines, stats := export(t, s, tt.opts)
			got := map[string]int{}
			for _, l := range lines {
				got[l.Arm+"/"+l.TaskID]++
				if tt.opts.SFT && l.Reward != 1 {
					t.Errorf("SFT line with reward %v", l.Reward)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("lines per group %v, want %v", got, tt.want)
			}
			if stats.Groups != len(tt.want) {
				t.Errorf("stats: %d groups, want %d", stats.Groups, len(tt.want))
			}
		})
	}
}

func TestExportRecomputesAdvantages(t *testing.T) {
	s, _, _ := newFixture(t)
	lines, stats := export(t, s, results.ExportOptions{Method: evaluator.RLOO})
	if fmt.Sprint(stats.Computed) != "[run-1]" || fmt.Sprint(stats.Methods) != "[rloo]" {
		t.Errorf("stats %+v", stats)
	}
	got := byKey(lines)
	// RLOO: r_i minus the mean of the group's other finished rewards.
	for key, want := range map[string]float64{
		"baseline/alpha#0": 1 - 2.0/3, "baseline/alpha#2": -1,
		"baseline/gamma#0": 1 - 0.5, "baseline/gamma#2": -1, // the infrastructure failure is not among the others
		"strict/beta#0": 0, "strict/gamma#2": 1,
	} {
		l := got[key]
		if math.Abs(l.Advantage-want) > 1e-12 || l.AdvantageMethod != "rloo" {
			t.Errorf("%s: advantage %v (%s), want %v", key, l.Advantage, l.AdvantageMethod, want)
		}
	}
	// The store keeps its own.
	again, _ := export(t, s, results.ExportOptions{})
	if a := byKey(again)["baseline/alpha#2"]; a.AdvantageMethod != "grpo" {
		t.Errorf("stored method now %q", a.AdvantageMethod)
	}
}

func TestExportComputesMissingAdvantages(t *testing.T) {
	s, run, _ := newFixture(t)
	if _, err := s.DB().Exec(`UPDATE attempts SET advantage = NULL, advantage_method = NULL WHERE task_id = 'beta'`); err != nil {
		t.Fatal(err)
	}
	lines, stats := export(t, s, results.ExportOptions{})
	if fmt.Sprint(stats.Computed) != "["+run.ID+"]" {
		t.Errorf("computed %v", stats.Computed)
	}
	for _, l := range lines {
		if l.AdvantageMethod != "grpo" {
			t.Errorf("%s/%s#%d: method %q", l.Arm, l.TaskID, l.Index, l.AdvantageMethod)
		}
	}
	if l := byKey(lines)["baseline/alpha#2"]; math.Abs(l.Advantage-(-0.75/(0.5+evaluator.GRPOEpsilon))) > 1e-12 {
		t.Errorf("advantage %v", l.Advantage)
	}
}

func TestExportRejects(t *testing.T) {
	s, _, _ := newFixture(t)
	one, zero := 1.0, 0.0
	tests := []struct {
		name string
		opts results.ExportOptions
		want string
	}{
		{"no run", results.ExportOptions{Runs: []string{"nope"}}, "no such run"},
		{"no arm", results.ExportOptions{Arms: []string{"lenient"}}, `arm "lenient" is not an arm of the run (arms: baseline, strict)`},
		{"bad method", results.ExportOptions{Method: "ppo"}, "unknown advantage method"},
		{"min above max", results.ExportOptions{MinReward: &one, MaxReward: &zero}, "min reward 1 is above max reward 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			_, err := s.Export(context.Background(), &b, tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Export = %v, want an error with %q", err, tt.want)
			}
			if b.Len() != 0 {
				t.Errorf("wrote %d bytes before failing", b.Len())
			}
		})
	}
	if _, err := s.Export(context.Background(), &bytes.Buffer{}, results.ExportOptions{Runs: []string{"nope"}}); !errors.Is(err, results.ErrNoRun) {
		t.Errorf("unknown run: %v, want ErrNoRun", err)
	}
}

// TestExportRejectsTyped: the errors a caller turns into its own words
// (bench export names its flags) carry what they are about.
func TestExportRejectsTyped(t *testing.T) {
	s, run, _ := newFixture(t)
	one, zero := 1.0, 0.0
	tests := []struct {
		name  string
		opts  results.ExportOptions
		check func(err error) bool
	}{
		{"no run", results.ExportOptions{Runs: []string{run.ID, "nope"}}, func(err error) bool {
			var e *results.NoRunError
			return errors.As(err, &e) && e.ID == "nope" && errors.Is(err, results.ErrNoRun)
		}},
		{"no arm", results.ExportOptions{Arms: []string{"strict", "lenient"}}, func(err error) bool {
			var e *results.NoArmError
			return errors.As(err, &e) && e.Arm == "lenient" && fmt.Sprint(e.Arms) == "[baseline strict]" && errors.Is(err, results.ErrNoArm)
		}},
		{"min above max", results.ExportOptions{MinReward: &one, MaxReward: &zero}, func(err error) bool {
			var e *results.RewardRangeError
			return errors.As(err, &e) && e.Min == 1 && e.Max == 0
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Export(context.Background(), &bytes.Buffer{}, tt.opts)
			if !tt.check(err) {
				t.Errorf("Export = %v (%T), not the typed error expected", err, errors.Unwrap(err))
			}
		})
	}
}
