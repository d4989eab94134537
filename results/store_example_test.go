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
// ends, resume from the finished keys, and report.
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

	rows, err := store.Summary(ctx, run.ID)
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := results.WriteSummary(os.Stdout, run, rows); err != nil {
		fmt.Println(err)
	}
	// Output:
	// finished: 2
	// run 20250301-120000-a1b2c3  model qwen3:4b  suite examples  G=2  running
	// created 2025-03-01 12:00 UTC  options num_ctx=8192 temperature=0.7
	//
	// ARM       TASK                 PASSED  RATE  TURNS  PROMPT  COMPL  WALL  INFRA
	// baseline  recipe-trailing-dot     1/2   50%    1.0     812     40  2.0s      0
	//           all tasks               1/2   50%    1.0     812     40  2.0s      0
	// PASSED: passed/finished attempts. TURNS, PROMPT and COMPL (tokens over all turns)
	// and WALL (agent loop) are means per finished attempt. INFRA: infrastructure errors.
}
