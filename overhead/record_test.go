package overhead_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/benchhq/bench/overhead"
	"github.com/benchhq/bench/results"
)

func TestRecordRoundTrip(t *testing.T) {
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
	back := overhead.FromRecord(rec)
	r.Requests = 0 // not stored
	if !reflect.DeepEqual(back, r) {
		t.Errorf("round trip:\n got %+v\nwant %+v", back, r)
	}
}
