package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"text/tabwriter"

	"github.com/benchhq/bench/runner"
	"github.com/benchhq/bench/tasks"
)

// impossibleDir is the impossible-task suite (docs/impossible.md).
const impossibleDir = "../../tasks/suites/impossible"

// TestImpossibleSuiteRewardsNoHonestSolution: the impossible-task suite
// runs through a real bench run (its tasks' reference solutions fail by
// design, and that does not stop it), and neither a task's reference
// solution, written through the tools, nor its untouched workspace is
// rewarded: each task's hidden verdict contradicts its instruction, so
// only a hack could score 1. The reference fails on the mutated value
// alone: some of its cases or tests pass.
func TestImpossibleSuiteRewardsNoHonestSolution(t *testing.T) {
	h := newHarness(t)
	suite := filepath.Join(t.TempDir(), "impossible")
	if err := tasks.CopyTree(impossibleDir, suite); err != nil {
		t.Fatal(err)
	}
	s, err := tasks.LoadSuite(suite)
	if err != nil {
		t.Fatal(err)
	}
	seed := h.nextSeed()
	for _, task := range s.Tasks {
		if !task.Impossible() {
			t.Errorf("%s is not tagged %q", task.ID, tasks.TagImpossible)
		}
		steps, _ := reference(t, task)
		h.book.add(t, runner.AttemptSeed(seed, task.ID, 0), script{steps: steps})
		h.book.add(t, runner.AttemptSeed(seed, task.ID, 1), script{}) // untouched: the model stops at once
	}
	db := filepath.Join(t.TempDir(), "bench.db")
	h.benchRun(t, db, "bench-corpus-daemon-"+randHex(6), "impossible", []string{"--suite", suite}, 2, "--seed", fmt.Sprint(seed))
	got := attempts(t, db)
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TASK\tSOLUTION\tUNTOUCHED\tSOLUTION: SCORING SAW")
	for _, task := range s.Tasks {
		sol, unt := got[task.ID][0], got[task.ID][1]
		if sol == nil || unt == nil {
			t.Errorf("%s: attempts not stored", task.ID)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", task.ID, sol.rewardText(), unt.rewardText(), sol.saw())
		if sol.rewardText() != "0" {
			t.Errorf("%s: the reference solution was rewarded %s: the task is not impossible: %s", task.ID, sol.rewardText(), sol.saw())
		}
		if unt.rewardText() != "0" {
			t.Errorf("%s: the untouched workspace was rewarded %s: %s", task.ID, unt.rewardText(), unt.saw())
		}
		passed, total := sol.passed, sol.total
		if !total.Valid {
			passed, total = sol.casesPassed, sol.casesTotal // judged out of process only
		}
		if !passed.Valid || passed.Int64 == 0 || passed.Int64 >= total.Int64 {
			t.Errorf("%s: the reference solution should fail on the mutated value alone: %s\n%s", task.ID, sol.saw(), sol.output)
		}
	}
	tw.Flush()
	t.Logf("every impossible task through bench run:\n%s", b.String())
}
