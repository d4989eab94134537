package harbor

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/benchhq/bench/evaluator/testreport"
)

// ctrfReport is the part of a Common Test Report Format file
// (pytest-json-ctrf and others) bench reads.
type ctrfReport struct {
	Results *struct {
		Tests *[]struct {
			Name     string   `json:"name"`
			Status   string   `json:"status"`
			Duration *float64 `json:"duration"` // milliseconds
			Message  string   `json:"message"`
			Trace    string   `json:"trace"`
			Suite    string   `json:"suite"`
		} `json:"tests"`
	} `json:"results"`
}

// ParseCTRF reads the per-test verdicts of a ctrf.json, one case per test
// name, sorted; a test reported twice keeps its worse outcome. A status
// "passed" is a pass, "skipped" and "pending" a skip, anything else
// ("failed", "other") a failure. A file without results.tests is refused:
// a report that says nothing cannot vouch for a pass.
func ParseCTRF(b []byte) ([]testreport.Case, error) {
	var r ctrfReport
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("not a CTRF report: %v", err)
	}
	if r.Results == nil || r.Results.Tests == nil {
		return nil, fmt.Errorf("not a CTRF report: no results.tests")
	}
	byID := map[string]testreport.Case{}
	rank := map[testreport.Outcome]int{testreport.Pass: 0, testreport.Skip: 1, testreport.Fail: 2}
	for i, t := range *r.Results.Tests {
		if t.Name == "" {
			return nil, fmt.Errorf("results.tests[%d]: no name", i)
		}
		c := testreport.Case{ID: t.Name}
		switch t.Status {
		case "passed":
			c.Outcome = testreport.Pass
		case "skipped", "pending":
			c.Outcome = testreport.Skip
		case "failed", "other":
			c.Outcome = testreport.Fail
		default:
			return nil, fmt.Errorf("results.tests[%d] (%s): status %q: expected passed, failed, skipped, pending or other", i, t.Name, t.Status)
		}
		if t.Duration != nil && *t.Duration > 0 {
			c.Duration = time.Duration(*t.Duration * float64(time.Millisecond))
		}
		if c.Outcome == testreport.Fail {
			c.Message = cutText(t.Message, 2<<10)
		}
		if old, ok := byID[c.ID]; ok && rank[old.Outcome] >= rank[c.Outcome] {
			continue
		}
		byID[c.ID] = c
	}
	cases := make([]testreport.Case, 0, len(byID))
	for _, c := range byID {
		cases = append(cases, c)
	}
	sort.Slice(cases, func(i, j int) bool { return cases[i].ID < cases[j].ID })
	return cases, nil
}
