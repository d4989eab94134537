package results

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/benchhq/bench/evaluator"
)

// An export reads a run a slice of tasks at a time under each arm: the
// lines and the counts are the same whatever the slice's size.
func TestExportBySlicesOfTasks(t *testing.T) {
	ctx := context.Background()
	s, path := openTemp(t)
	run := summaryRun(t, s)
	db := rawDB(t, path)
	defer db.Close()
	// Advantages on some attempts only: an export computes them all.
	if _, err := db.Exec(`UPDATE attempts SET advantage = 0.5, advantage_method = 'grpo' WHERE idx < 2 AND status = 'finished'`); err != nil {
		t.Fatal(err)
	}
	zero := 0.0
	for _, opts := range []ExportOptions{
		{},
		{Arms: []string{"strict"}},
		{OnlySignal: true},
		{MaxReward: &zero},
		{Method: evaluator.GRPO},
	} {
		var want bytes.Buffer
		wantStats, err := s.export(ctx, &want, opts, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if want.Len() == 0 && opts.MaxReward == nil {
			t.Fatalf("%+v: nothing exported", opts)
		}
		for _, tasks := range []int{1, 2} {
			var got bytes.Buffer
			stats, err := s.export(ctx, &got, opts, tasks)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Errorf("%+v, %d task(s) at a time:\n%s\nwant\n%s", opts, tasks, got.String(), want.String())
			}
			if fmt.Sprint(stats) != fmt.Sprint(wantStats) {
				t.Errorf("%+v, %d task(s) at a time: stats %+v, want %+v", opts, tasks, stats, wantStats)
			}
		}
	}
	_ = run
}
