package results_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/benchhq/bench/results"
)

// The ATIF export: one trajectory per attempt Export writes, each message
// a step, tool results the observation of the agent step that called them.
func TestExportATIF(t *testing.T) {
	s, _, _ := newFixture(t)
	lines, _ := export(t, s, results.ExportOptions{})
	var b bytes.Buffer
	stats, err := s.ExportATIF(context.Background(), &b, results.ExportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var trajs []results.ATIFTrajectory
	sc := bufio.NewScanner(&b)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var tr results.ATIFTrajectory
		dec := json.NewDecoder(strings.NewReader(sc.Text()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&tr); err != nil {
			t.Fatalf("line %d: %v", len(trajs)+1, err)
		}
		trajs = append(trajs, tr)
	}
	if len(trajs) != len(lines) || stats.Lines != len(lines) {
		t.Fatalf("%d trajectories, %d export lines, stats %d", len(trajs), len(lines), stats.Lines)
	}
	var tr *results.ATIFTrajectory
	for i := range trajs {
		if trajs[i].SessionID == "run-1/baseline/alpha#2" {
			tr = &trajs[i]
		}
	}
	if tr == nil {
		t.Fatal("no trajectory of baseline/alpha#2")
	}
	if tr.SchemaVersion != results.ATIFVersion || tr.Agent.Name != "bench" || tr.Agent.ModelName != "qwen3:4b" || tr.Agent.Version == "" {
		t.Errorf("header: %+v", tr)
	}
	if len(tr.Steps) != 4 || tr.FinalMetrics.TotalSteps != 4 || tr.FinalMetrics.TotalPromptTokens != 300 || tr.FinalMetrics.TotalCompletionTokens != 30 {
		t.Fatalf("steps %+v metrics %+v", tr.Steps, tr.FinalMetrics)
	}
	sources := []string{}
	for i, st := range tr.Steps {
		sources = append(sources, st.Source)
		if st.StepID != i+1 {
			t.Errorf("step %d has id %d", i, st.StepID)
		}
	}
	if strings.Join(sources, ",") != "system,user,agent,agent" {
		t.Errorf("sources %v", sources)
	}
	call := tr.Steps[2]
	if call.ReasoningContent != "read it first" || len(call.ToolCalls) != 1 || call.ToolCalls[0].ToolCallID != "call_2" ||
		call.ToolCalls[0].FunctionName != "read_file" || string(call.ToolCalls[0].Arguments) != `{"path":"alpha-2.txt","mode":"r"}` {
		t.Errorf("agent step: %+v", call)
	}
	if call.Observation == nil || len(call.Observation.Results) != 1 || call.Observation.Results[0].SourceCallID != "call_2" ||
		call.Observation.Results[0].Content != "contents of alpha" {
		t.Errorf("observation: %+v", call.Observation)
	}
	if tr.Steps[3].Message != "Done with baseline/alpha#2." || tr.Steps[3].Observation != nil {
		t.Errorf("last step: %+v", tr.Steps[3])
	}
	if tr.Extra.Reward != 0 || tr.Extra.GroupID != "run-1/baseline/alpha" || tr.Extra.AdvantageMethod != "grpo" || tr.Extra.Seed != 102 {
		t.Errorf("extra: %+v", tr.Extra)
	}
}

// A call the model gave no id: ATIF needs one to tie the result to it.
func TestATIFOfCallsWithoutIDs(t *testing.T) {
	l := &results.ExportLine{RunID: "r", Arm: "a", TaskID: "t", Messages: []results.ExportMessage{
		{Role: "user", Content: "go"},
		{Role: "assistant", ToolCalls: []results.ExportToolCall{
			{Type: "function", Function: results.ExportFunction{Name: "list_dir", Arguments: json.RawMessage(`{}`)}},
			{Type: "function", Function: results.ExportFunction{Name: "read_file"}},
		}},
		{Role: "tool", Name: "list_dir", Content: "a b"},
		{Role: "tool", Name: "read_file", Content: "x"},
	}}
	tr := results.ATIFOf(l, "v")
	st := tr.Steps[1]
	if len(st.ToolCalls) != 2 || st.ToolCalls[0].ToolCallID == "" || st.ToolCalls[0].ToolCallID == st.ToolCalls[1].ToolCallID ||
		string(st.ToolCalls[1].Arguments) != "{}" {
		t.Fatalf("calls: %+v", st.ToolCalls)
	}
	if r := st.Observation.Results; len(r) != 2 || r[0].SourceCallID != st.ToolCalls[0].ToolCallID || r[1].SourceCallID != st.ToolCalls[1].ToolCallID {
		t.Errorf("results: %+v", r)
	}
}
