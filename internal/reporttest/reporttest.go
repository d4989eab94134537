// Package reporttest compares reports of runs done in different
// executions (one piece against merged shards) in tests.
package reporttest

import (
	"encoding/json"
	"testing"
)

// Timeless decodes a report's JSON (results.Report) without what differs
// from one execution of the same run to the next: created_at,
// finished_at, the wall-time and test-time distributions (wall_ms,
// test_ms) and where the time went (time), wherever they are.
func Timeless(t testing.TB, report []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(report, &m); err != nil {
		t.Fatalf("report JSON: %v", err)
	}
	var strip func(any)
	strip = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			delete(x, "created_at")
			delete(x, "finished_at")
			delete(x, "wall_ms")
			delete(x, "test_ms")
			delete(x, "time")
			for _, e := range x {
				strip(e)
			}
		case []any:
			for _, e := range x {
				strip(e)
			}
		}
	}
	strip(m)
	return m
}
