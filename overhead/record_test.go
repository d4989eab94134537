package overhead_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/benchhq/bench/results"
)

func TestRecord(t *testing.T) {
	r := sample()
	r.MeasuredAt = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	r.Sets[1].Truncated = true
	rec := r.Record()
	if rec.Arm != "with-issues" || rec.Tokens != 700 || rec.SumOfTools != 900 || rec.BaselineTokens != 18 || rec.PromptTokens != 718 {
		t.Errorf("record %+v", rec)
	}
	wantKinds := []string{results.OverheadSet, results.OverheadTool, results.OverheadTool, results.OverheadSet, results.OverheadTool}
	if len(rec.Items) != len(wantKinds) {
		t.Fatalf("items %+v", rec.Items)
	}
	for i, k := range wantKinds {
		if rec.Items[i].Kind != k {
			t.Errorf("item %d kind %s, want %s", i, rec.Items[i].Kind, k)
		}
	}
	if it := rec.Items[4]; it.Set != "issues" || it.Name != "issues__<list>&" || it.Tokens != 300 {
		t.Errorf("item 4: %+v", it)
	}
	// Every field of the report the store keeps (Requests is not kept).
	want := &results.Overhead{
		Arm: "with-issues", Model: "qwen3:0.6b", NumCtx: 8192, MeasuredAt: r.MeasuredAt,
		BaselineTokens: 18, PromptTokens: 718, Tokens: 700, SumOfTools: 900,
		Items: []results.OverheadItem{
			{Kind: results.OverheadSet, Name: "builtin", Set: "builtin", PromptTokens: 518, Tokens: 500},
			{Kind: results.OverheadTool, Name: "read_file", Set: "builtin", PromptTokens: 218, Tokens: 200},
			{Kind: results.OverheadTool, Name: "run_command", Set: "builtin", PromptTokens: 418, Tokens: 400},
			{Kind: results.OverheadSet, Name: "issues", Set: "issues", PromptTokens: 318, Tokens: 300, Truncated: true},
			{Kind: results.OverheadTool, Name: "issues__<list>&", Set: "issues", PromptTokens: 318, Tokens: 300},
		},
	}
	if !reflect.DeepEqual(rec, want) {
		t.Errorf("record:\n got %+v\nwant %+v", rec, want)
	}
}
