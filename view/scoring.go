package view

import (
	"fmt"

	"github.com/benchhq/bench/evaluator"
	"github.com/benchhq/bench/evaluator/testreport"
	"github.com/benchhq/bench/results"
)

// This file lays out what an attempt's score rests on: the reward's
// basis, each test's verdict, and the agent's change that was scored.

// diffOpenLines is the longest diff an attempt page shows unfolded.
const diffOpenLines = 80

// scoringView is what the hidden tests' part of an attempt page shows.
type scoringView struct {
	// Basis says in words what the reward rests on; ExitStatusOnly marks
	// a reward on the exit status alone.
	Basis          string
	ExitStatusOnly bool
	// Verdict says in words which kind of verdict the reward rests on;
	// OutOfReach marks one decided out of the agent's reach.
	Verdict    string
	OutOfReach bool
	// Flags are the suspicion flags of the carried change, with what
	// each means.
	Flags []flagView
	// ReportError says why the per-test report could not be read.
	ReportError string
	// Cases are the per-test verdicts; Counts sums their outcomes.
	Cases  []caseView
	Counts string
	// Change is what was carried into scoring; nil when not stored.
	Change *changeView
}

// flagView is one suspicion flag of the carried change.
type flagView struct {
	evaluator.Suspicion
	Meaning string
}

// verdictText says what a verdict kind means to a person reading a reward.
func verdictText(v evaluator.Verdict) string {
	switch v {
	case evaluator.VerdictGolden:
		return "Verdict: golden, out of the agent's reach. The agent's code ran on hidden cases and bench compared each observation, in its own process, with the reference solution's."
	case evaluator.VerdictBlackBox:
		return "Verdict: black-box, out of the agent's reach. A checker of the task's, which runs none of the agent's code, judged the result it left."
	case evaluator.VerdictCanary:
		return "Verdict: in-process, checked by bench's canary run. The tests ran in the process that runs the agent's code: code written against bench can still forge them."
	case evaluator.VerdictInProcess:
		return "Verdict: in-process, without a canary run. The tests ran in the process that runs the agent's code: code written against bench can forge them."
	case evaluator.VerdictExitStatus:
		return "Verdict: exit status only. Any code the tests import can forge it."
	}
	return ""
}

// caseView is one test's verdict.
type caseView struct {
	results.TestCase
	Message folded
}

// Class colours the verdict.
func (c caseView) Class() string { return verdictClass(string(c.Outcome)) }

// List names the record's list the test is on, as people read it.
func (c caseView) List() string {
	switch c.Recorded {
	case "fail_to_pass":
		return "fail → pass"
	case "pass_to_pass":
		return "pass → pass"
	}
	return ""
}

// changeView is the agent's change as scoring saw it.
type changeView struct {
	*evaluator.Change
	// Diff is the stored diff as the page holds it, and Lines its lines;
	// Open shows it unfolded (short enough).
	Diff  folded
	Lines []diffLine
	Open  bool
	// Summary counts the carried files and the diff's added and removed
	// lines.
	Summary string
	// CutNote says how much of the diff bench did not store ("" when whole).
	CutNote string
	// MoreNote says how many left-out paths were not listed, and
	// CarriedNote how many carried files.
	MoreNote    string
	CarriedNote string
}

func newScoringView(a *results.StoredAttempt) *scoringView {
	v := &scoringView{}
	v.Verdict, v.OutOfReach = verdictText(a.Verdict), a.Verdict.OutOfProcess()
	for _, f := range a.Suspicions {
		v.Flags = append(v.Flags, flagView{Suspicion: f, Meaning: evaluator.FlagMeaning(f.Flag)})
	}
	if t := a.Test; t != nil {
		v.ReportError = t.ReportError
		v.Basis, v.ExitStatusOnly = basisText(t.Basis, t.ReportError, a.TestsTotal, a.TestsPassed, a.Cases)
		if t.CasesTotal > 0 && a.TestsTotal == nil {
			// Judged out of process only: its cases are the golden
			// cases and the black-box checks.
			v.Basis, v.ExitStatusOnly = fmt.Sprintf("The reward rests on %s judged out of the agent's reach (golden cases, black-box checks), %d passed: it is 1 only when every one passes.",
				plural(t.CasesTotal, "case"), t.CasesPassed), false
		}
	}
	counts := map[testreport.Outcome]int{}
	for _, c := range a.Cases {
		v.Cases = append(v.Cases, caseView{TestCase: c, Message: fold(c.Message)})
		counts[c.Outcome]++
	}
	if len(a.Cases) > 0 {
		v.Counts = fmt.Sprintf("%s: %d pass, %d fail, %d skipped, %d missing from the report", plural(len(a.Cases), "test"),
			counts[testreport.Pass], counts[testreport.Fail], counts[testreport.Skip], counts[results.CaseMissing])
	}
	if c := a.Change; c != nil {
		cv := &changeView{Change: c, Diff: fold(c.Diff)}
		if c.Diff != "" {
			cv.Lines = diffLines(cv.Diff.Text)
		}
		added, removed := 0, 0
		for _, l := range cv.Lines {
			switch l.Kind {
			case "add":
				added++
			case "del":
				removed++
			}
		}
		cv.Summary = fmt.Sprintf("%s, %d lines added, %d removed", plural(len(c.Carried)+c.CarriedMore, "file"), added, removed)
		if c.CarriedMore > 0 {
			cv.CarriedNote = fmt.Sprintf("and %s more, not listed (bench lists the first %d)", plural(c.CarriedMore, "file"), evaluator.MaxStoredCarried)
		}
		cv.Open = len(cv.Lines) <= diffOpenLines
		if c.DiffCut > 0 {
			cv.CutNote = fmt.Sprintf("The stored diff is cut: bench keeps its first %s, and %s more were not stored.",
				byteSize(evaluator.MaxDiff), byteSize(c.DiffCut))
		}
		if c.LeftOutMore > 0 {
			cv.MoreNote = fmt.Sprintf("and %s more, not listed (bench lists the first %d)", plural(c.LeftOutMore, "path"), evaluator.MaxLeftOut)
		}
		v.Change = cv
	}
	return v
}

// basisText says what a reward rests on: the recorded tests (or the
// reported ones, for a task without a record), a report that could not be
// read, or the exit status alone.
func basisText(basis, reportError string, total, passed *int, cases []results.TestCase) (string, bool) {
	switch {
	case basis != evaluator.BasisTests:
		return "The reward rests on the exit status alone: the task's tests give no per-test report, " +
			"and any code the tests import can forge an exit status.", true
	case reportError != "":
		// The verdict stops at the report: the store holds no case of it
		// and counts no recorded test.
		return "The reward rests on the task's per-test report, and it could not be read: no test counts as passed.", false
	}
	lists := map[string]int{}
	for _, c := range cases {
		lists[c.Recorded]++
	}
	n, p := 0, 0
	if total != nil {
		n = *total
	}
	if passed != nil {
		p = *passed
	}
	if lists["fail_to_pass"]+lists["pass_to_pass"] == 0 {
		return fmt.Sprintf("The reward rests on %s (the task has no record of its tests), %d passed: "+
			"it is 1 only when the command exits 0 and every reported test passes.", plural(n, "reported test"), p), false
	}
	return fmt.Sprintf("The reward rests on %s (%d fail → pass, %d pass → pass), %d passed: "+
		"it is 1 only when the command exits 0 and every recorded test passes.",
		plural(n, "recorded test"), lists["fail_to_pass"], lists["pass_to_pass"], p), false
}

// plural is "1 test", "2 tests".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
