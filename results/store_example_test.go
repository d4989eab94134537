package results_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/evaluator"
	"github.com/benchhq/bench/results"
	"github.com/ollama/ollama/api"
)

// The runner's use of the store: create a run, save each attempt as it
// ends, resume from the finished keys, store the advantages at the end,
// and report.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "bench-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)

	store, err := results.Open(ctx, filepath.Join(dir, "bench.db"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()

	start := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	run := &results.Run{
		ID: "20250301-120000-a1b2c3", CreatedAt: start, Model: "qwen3:4b",
		Options:         map[string]any{"temperature": 0.7, "num_ctx": 8192},
		Seed:            1,
		AttemptsPerTask: 2,
		Suite:           "examples",
		Arms:            []results.Arm{{Name: "baseline"}},
		Tasks:           []results.TaskInfo{{ID: "recipe-trailing-dot"}},
	}
	if err := store.CreateRun(ctx, run); err != nil {
		fmt.Println(err)
		return
	}

	for i, passed := range []bool{true, false} {
		reward := 0
		if passed {
			reward = 1
		}
		attempt := &results.Attempt{
			RunID:  run.ID,
			Key:    results.AttemptKey{Arm: "baseline", Task: "recipe-trailing-dot", Index: i},
			Status: results.StatusFinished,
			Reward: &reward,
			Trajectory: &agent.Trajectory{
				Messages: []api.Message{{Role: "user", Content: "Fix the recipe."}, {Role: "assistant", Content: "Done."}},
				Turns:    []agent.Turn{{PromptTokens: 812, CompletionTokens: 40, DoneReason: "stop"}},
				Stop:     agent.StopAnswered,
				Wall:     2 * time.Second,
			},
			Test:      &evaluator.TestResult{Command: "sh tests/run.sh", Passed: passed},
			StartedAt: start, FinishedAt: start.Add(3 * time.Second), Tries: 1,
		}
		if _, err := store.SaveAttempt(ctx, attempt); err != nil {
			fmt.Println(err)
			return
		}
	}

	done, err := store.FinishedKeys(ctx, run.ID)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("finished:", len(done))

	// At the end of the run: the group-relative advantages.
	attempts, err := store.AttemptMetrics(ctx, run.ID)
	if err != nil {
		fmt.Println(err)
		return
	}
	adv, zeroVar, err := results.Advantages(run, attempts, evaluator.GRPO)
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := store.SetAdvantages(ctx, string(evaluator.GRPO), adv); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("zero-variance groups: %.0f%%\n", 100*zeroVar)

	rep, err := store.Report(ctx, run.ID, results.ReportOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := rep.Write(os.Stdout, results.FormatTable); err != nil {
		fmt.Println(err)
	}
	// Output:
	// finished: 2
	// zero-variance groups: 0%
	// run 20250301-120000-a1b2c3
	// model qwen3:4b  seed 1  G=2  suite examples  status running
	// options num_ctx=8192 temperature=0.7
	// arms (1) baseline  tasks 1
	// created 2025-03-01 12:00 UTC
	// isolation not recorded (a run stored before bench 0.2): its rewards were scored
	//   in the agent's own workspace
	// rewards rest on the exit status alone for 1 task: recipe-trailing-dot (no
	//   per-test report)
	//
	// Per task
	// TASK                   PASS  TURNS  PROMPT  COMPL  WALL50  TEST50  INFRA
	// arm baseline
	//   recipe-trailing-dot   1/2    1.0     812     40    2.0s    0.0s      0
	// PASS: passed/finished attempts (a task's pass@1; pass@G and pass^G follow from
	//   it). TURNS, PROMPT, COMPL (tokens over all turns): means per finished attempt.
	//   WALL50: median wall time of the agent (its turns and tools); TEST50: median
	//   time of the hidden tests. INFRA: infrastructure errors, never scored.
	//
	// Per arm
	// ARM       PASS  RATE  95% CI   P@2  P^2  0-VAR
	// baseline   1/2   50%   9–91%  100%   0%     0%
	// RATE: passed/finished, with its 95% Wilson interval. P@k, P^k: means over tasks.
	//   0-VAR: groups whose rewards are all equal (advantage 0, no training signal).
	//
	// Per arm, cost
	// ARM       TURNS  PROMPT  COMPL  TOOLS  DENY  CUT  INFRA
	// baseline    1.0     812     40      -  0.00    0      0
	// TURNS, PROMPT, COMPL: means per finished attempt. TOOLS: prompt tokens that the
	//   arm's tools add to every request, measured at the start of the run (an MCP
	//   server that changes its tools during an attempt sends its later turns another
	//   list: turns.tool_list_id). DENY: tool calls denied by policy per attempt. CUT:
	//   turns cut at the context (num_ctx, or the model's context length when
	//   smaller). INFRA: infrastructure errors, never scored.
	//
	// What the rewards rest on
	// ARM       SCORED      UNKNOWN  FLAGGED
	// baseline       2  2 100% (1✓)   0 (0✓)
	// Scored attempts by the kind of verdict their reward rests on, with their share
	//   of the arm's and the rewards of 1 in brackets. GOLDEN: observations on hidden
	//   cases compared by bench with the reference's; BLACK-BOX: a checker that runs
	//   none of the agent's code; out of the agent's reach. IN-PROCESS(+CANARY), EXIT
	//   STATUS: decided in the process that runs the agent's code; code written
	//   against bench can forge them. FLAGGED: changes with suspicion flags
	//   (docs/flags.md); flags never change a reward: read those trajectories.
	//
	// advantages: grpo, for all 2 finished attempts
	// zero-variance groups: 0 of 1 group (0%): they carry no training signal
	// time: model 0% (0s), tools 0% (0s), hidden tests 0% (0s), harness 100% (6s): the
	//   harness dominated (100%)
}
