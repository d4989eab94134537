package evaluator

import (
	"time"

	"github.com/benchhq/bench/tasks"
)

// Verdict is the kind of evidence a reward rests on: who produced the
// judgment, and whether the agent's code could reach it. Every reward
// records one (attempts.verdict in the store), so that a pass rate can be
// read with the trust it deserves.
type Verdict string

// The verdict kinds, from the strongest to the weakest.
const (
	// VerdictGolden: the agent's code produced observations on hidden
	// cases, and bench compared them, in its own process, with expected
	// observations recorded from the reference solution and kept outside
	// every sandbox (or a task checker judged them in a sandbox holding
	// none of the agent's code). Forging it needs the answers.
	VerdictGolden Verdict = "golden"
	// VerdictBlackBox: a task checker judged the state the agent left
	// (files, a configuration) from a fresh sandbox that sees the result
	// read-only and loads none of it as code.
	VerdictBlackBox Verdict = "black_box"
	// VerdictCanary: per-test verdicts produced in the process that runs
	// the agent's code, checked by bench's canary run. Code written
	// against bench can still forge it.
	VerdictCanary Verdict = "in_process_canary"
	// VerdictInProcess: per-test verdicts (or a reward file) produced in
	// the process that runs the agent's code, with no canary run (the task
	// turned it off, or no recorded test could be instrumented).
	VerdictInProcess Verdict = "in_process"
	// VerdictExitStatus: the exit status of a command that runs the
	// agent's code, alone. Any code the tests import can forge it.
	VerdictExitStatus Verdict = "exit_status"
)

// Verdicts lists every kind, strongest first.
func Verdicts() []Verdict {
	return []Verdict{VerdictGolden, VerdictBlackBox, VerdictCanary, VerdictInProcess, VerdictExitStatus}
}

// OutOfProcess reports whether a verdict of kind v was decided out of the
// agent's reach: bench's own comparison, or a checker that loads none of
// the agent's code.
func (v Verdict) OutOfProcess() bool { return v == VerdictGolden || v == VerdictBlackBox }

// Valid reports whether v is one of the kinds.
func (v Verdict) Valid() bool {
	for _, k := range Verdicts() {
		if v == k {
			return true
		}
	}
	return false
}

// TaskVerdict is the kind of verdict a task's scoring gives, by its
// settings: the strongest of its ways of judging (an attempt's own may be
// weaker: a canary run that found no test to instrument leaves an
// in-process verdict).
func TaskVerdict(t *tasks.Task) Verdict {
	switch {
	case t.Golden != nil:
		return VerdictGolden
	case t.Check != nil:
		return VerdictBlackBox
	case t.Tests.Report == "":
		return VerdictExitStatus
	case t.Tests.CanaryOr() && canaryForm(t.Tests.Report):
		return VerdictCanary
	}
	return VerdictInProcess
}

// ScoringTimeout is the sum of the timeouts of a task's ways of judging
// (the hidden tests, the golden observation run and its checker, the
// black-box check): the bound a scoring run's time, summed over them as
// TestResult.Duration is, is compared with.
func ScoringTimeout(t *tasks.Task) time.Duration {
	var d time.Duration
	if t.Tests.Command != "" {
		d += t.Tests.TimeoutOr()
	}
	if t.Golden != nil {
		d += t.Golden.TimeoutOr()
		if t.Golden.CompareOr() == tasks.CompareChecker {
			d += t.Golden.TimeoutOr()
		}
	}
	if t.Check != nil {
		d += t.Check.TimeoutOr()
	}
	return d
}
