package results_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/evaluator"
	"github.com/benchhq/bench/results"
	"github.com/ollama/ollama/api"
)

// exampleStore makes a store with one run: one arm, one task, two
// attempts (one passed), GRPO advantages stored.
func exampleStore(ctx context.Context, dir string) (*results.Store, error) {
	store, err := results.Open(ctx, filepath.Join(dir, "bench.db"))
	if err != nil {
		return nil, err
	}
	start := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	run := &results.Run{ID: "r1", CreatedAt: start, Model: "qwen3:4b", Options: map[string]any{"num_ctx": 8192},
		Seed: 1, AttemptsPerTask: 2, Status: results.RunFinished,
		Arms: []results.Arm{{Name: "baseline"}}, Tasks: []results.TaskInfo{{ID: "recipe"}}}
	if err := store.CreateRun(ctx, run); err != nil {
		return nil, err
	}
	rewards := []int{1, 0}
	for i, reward := range rewards {
		args := api.NewToolCallFunctionArguments()
		args.Set("path", "recipe.py")
		_, err := store.SaveAttempt(ctx, &results.Attempt{
			RunID: run.ID, Key: results.AttemptKey{Arm: "baseline", Task: "recipe", Index: i},
			Status: results.StatusFinished, Reward: &reward, StartedAt: start, FinishedAt: start.Add(time.Second),
			Trajectory: &agent.Trajectory{
				Messages: []api.Message{
					{Role: "user", Content: "Fix the recipe."},
					{Role: "assistant", ToolCalls: []api.ToolCall{{ID: "c1", Function: api.ToolCallFunction{Name: "read_file", Arguments: args}}}},
					{Role: "tool", Content: "print('hi')", ToolName: "read_file", ToolCallID: "c1"},
					{Role: "assistant", Content: "Fixed."},
				},
				Turns: []agent.Turn{{Index: 0, PromptTokens: 300, CompletionTokens: 20}, {Index: 1, PromptTokens: 340, CompletionTokens: 5}},
				Stop:  agent.StopAnswered, Wall: 2 * time.Second,
			},
		})
		if err != nil {
			return nil, err
		}
	}
	attempts, err := store.AttemptMetrics(ctx, run.ID)
	if err != nil {
		return nil, err
	}
	adv, _, err := results.Advantages(run, attempts, evaluator.GRPO)
	if err != nil {
		return nil, err
	}
	return store, store.SetAdvantages(ctx, string(evaluator.GRPO), adv)
}

// Export writes one JSON line per finished attempt: the conversation and
// tools as sent to the model, with the reward and the advantage.
func ExampleStore_Export() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "bench-example")
	defer os.RemoveAll(dir)
	store, err := exampleStore(ctx, dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()

	var out strings.Builder
	stats, err := store.Export(ctx, &out, results.ExportOptions{SFT: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("lines:", stats.Lines)
	var line results.ExportLine
	if err := json.Unmarshal([]byte(out.String()), &line); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s reward %.0f advantage %.3f (%s)\n", line.GroupID, line.Reward, line.Advantage, line.AdvantageMethod)
	calls, _ := json.Marshal(line.Messages[1].ToolCalls)
	fmt.Println(string(calls))
	// Output:
	// lines: 1
	// r1/baseline/recipe reward 1 advantage 0.707 (grpo)
	// [{"id":"c1","type":"function","function":{"name":"read_file","arguments":{"path":"recipe.py"}}}]
}

// Report gathers a run's metrics; Write renders them as a table, JSON,
// Markdown or CSV.
func ExampleStore_Report() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "bench-example")
	defer os.RemoveAll(dir)
	store, err := exampleStore(ctx, dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()

	rep, err := store.Report(ctx, "r1", results.ReportOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	arm := rep.Arms[0]
	fmt.Printf("%s: %d/%d passed, 95%% CI [%.2f, %.2f]\n", arm.Arm, arm.Passes, arm.Finished, arm.PassRateCI95[0], arm.PassRateCI95[1])
	for _, at := range arm.AtK {
		fmt.Printf("pass@%d %.2f  pass^%d %.2f\n", at.K, *at.PassAtK, at.K, *at.PassHatK)
	}
	fmt.Printf("turns p50 %.0f, prompt tokens mean %.0f\n", arm.Turns.P50, arm.PromptTokens.Mean)
	// Output:
	// baseline: 1/2 passed, 95% CI [0.09, 0.91]
	// pass@1 0.50  pass^1 0.50
	// pass@2 1.00  pass^2 0.00
	// turns p50 2, prompt tokens mean 640
}
