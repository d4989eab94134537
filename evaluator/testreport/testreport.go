// Package testreport reads the per-test reports of hidden tests: `go test
// -json`, JUnit XML, Python unittest's verbose output and TAP. A reward
// that rests on per-test verdicts cannot be forged by an exit status alone
// (code the tests import can always call exit(0)); the report must name
// every test the task recorded, each with a pass.
package testreport

import (
	"fmt"
	"sort"
	"time"

	"github.com/benchhq/bench/internal/procio"
	"github.com/benchhq/bench/tasks"
)

// Outcome is what became of one test.
type Outcome string

// The outcomes of a test.
const (
	Pass Outcome = "pass"
	Fail Outcome = "fail"
	Skip Outcome = "skip"
)

// Case is one test of a report.
type Case struct {
	// ID names the test: "package::TestName/subtest" (Go),
	// "module.Class.test_method" (unittest), "classname::name" (JUnit),
	// the description (TAP).
	ID string
	// Outcome is pass, fail or skip.
	Outcome Outcome
	// Duration is the test's own time, when the report gives it.
	Duration time.Duration
	// Message is the failure's text (its start), when the report gives it.
	Message string
}

// Output is what a test command left to read its report from.
type Output struct {
	// Stdout and Stderr are the command's standard output and error.
	Stdout, Stderr []byte
	// File is the report file's content (JUnit).
	File []byte
}

// maxMessage bounds a case's message.
const maxMessage = 2 << 10

// Parse reads the cases of a report in the form of a task's [tests] report
// (tasks.ReportGoTestJSON, ...). The cases are sorted by ID, one per ID (a
// test reported twice fails if either report fails). An error means the
// report cannot be trusted to say what ran: it scores 0.
func Parse(form string, out Output) ([]Case, error) {
	var cases []Case
	var err error
	switch form {
	case tasks.ReportGoTestJSON:
		cases, err = parseGoJSON(out.Stdout)
	case tasks.ReportUnittest:
		cases, err = parseUnittest(out.Stderr)
	case tasks.ReportJUnit:
		cases, err = parseJUnit(out.File)
	case tasks.ReportTAP:
		cases, err = parseTAP(out.Stdout)
	default:
		return nil, fmt.Errorf("unknown report form %q", form)
	}
	if err != nil {
		return nil, fmt.Errorf("read the %s report: %w", form, err)
	}
	return merge(cases), nil
}

// worse is the outcome that wins when a test is reported twice: a failure
// over a skip over a pass (over none).
func worse(a, b Outcome) Outcome {
	rank := map[Outcome]int{"": -1, Pass: 0, Skip: 1, Fail: 2}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

// merge makes one case per ID, a failure winning over a skip over a pass.
func merge(cases []Case) []Case {
	by := map[string]int{}
	var out []Case
	for _, c := range cases {
		if i, ok := by[c.ID]; ok {
			if worse(out[i].Outcome, c.Outcome) != out[i].Outcome {
				out[i].Outcome, out[i].Message = c.Outcome, c.Message
			}
			out[i].Duration += c.Duration
			continue
		}
		by[c.ID] = len(out)
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Check says whether every expected test passed: the tests of expected
// that are missing from the cases or did not pass, with their outcome. With
// no expected tests (a task not yet recorded), every case must pass, and
// there must be at least one.
func Check(cases []Case, expected []string) (ok bool, failed []string) {
	if len(expected) == 0 {
		for _, c := range cases {
			if c.Outcome != Pass {
				failed = append(failed, c.ID+" ("+string(c.Outcome)+")")
			}
		}
		if len(cases) == 0 {
			failed = append(failed, "(no test reported)")
		}
		return len(failed) == 0, failed
	}
	by := make(map[string]Outcome, len(cases))
	for _, c := range cases {
		by[c.ID] = c.Outcome
	}
	for _, id := range expected {
		switch o, ok := by[id]; {
		case !ok:
			failed = append(failed, id+" (not reported)")
		case o != Pass:
			failed = append(failed, id+" ("+string(o)+")")
		}
	}
	return len(failed) == 0, failed
}

// cut bounds a message: its head and its tail are kept, the end of a
// failure being where its cause is most often said.
func cut(s string) string {
	if len(s) <= maxMessage {
		return s
	}
	b := newMessage()
	b.WriteString(s)
	return b.String()
}

// newMessage gathers a message written in parts, keeping what cut keeps
// without holding the rest.
func newMessage() *procio.Buffer { return procio.New(maxMessage, maxMessage/2) }
