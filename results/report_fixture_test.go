package results_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/evaluator"
	"github.com/benchhq/bench/evaluator/testreport"
	"github.com/benchhq/bench/results"
	"github.com/benchhq/bench/tasks"
	"github.com/ollama/ollama/api"
)

// The fixture: 2 arms, 3 tasks, G = 4. infra marks an attempt ended by an
// infrastructure failure; the others are rewards.
const infra = -1

var fixtureStart = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

var fixtureRewards = map[string]map[string][]int{
	"baseline": {
		"alpha": {1, 1, 0, 1},
		"beta":  {0, 0, 0, 0},
		"gamma": {1, infra, 0, 1},
	},
	"strict": {
		"alpha": {1, 0, 0, 0},
		"beta":  {1, 1, 1, 1},
		"gamma": {infra, infra, 1, 0},
	},
}

const fixtureTools = `[{"type":"function","function":{"name":"read_file","description":"Read a file.",` +
	`"parameters":{"type":"object","required":["path"],"properties":{"path":{"type":"string","description":"file path"},` +
	`"mode":{"type":"string"}}}}}]`

// fixtureTrajectory is attempt idx's conversation: system, user, an
// assistant tool call, its result, and the final answer. The attempt has
// idx+1 turns of 100 prompt and 10 completion tokens, one second each.
func fixtureTrajectory(arm, task string, idx int) *agent.Trajectory {
	var tools []api.Tool
	if err := json.Unmarshal([]byte(fixtureTools), &tools); err != nil {
		panic(err)
	}
	args := api.NewToolCallFunctionArguments()
	args.Set("path", fmt.Sprintf("%s-%d.txt", task, idx))
	args.Set("mode", "r")
	callID := fmt.Sprintf("call_%d", idx)
	tr := &agent.Trajectory{
		Tools: tools,
		Messages: []api.Message{
			{Role: "system", Content: "You are an agent."},
			{Role: "user", Content: "Solve " + task + " <carefully> & well."},
			{Role: "assistant", Thinking: "read it first", ToolCalls: []api.ToolCall{{ID: callID,
				Function: api.ToolCallFunction{Name: "read_file", Arguments: args}}}},
			{Role: "tool", Content: "contents of " + task, ToolName: "read_file", ToolCallID: callID},
			{Role: "assistant", Content: fmt.Sprintf("Done with %s/%s#%d.", arm, task, idx)},
		},
		Stop: agent.StopAnswered,
		Wall: time.Duration(idx+1) * time.Second,
	}
	for i := range idx + 1 {
		tr.Turns = append(tr.Turns, agent.Turn{Index: i, PromptTokens: 100, CompletionTokens: 10,
			Wall: time.Second, DoneReason: "stop"})
	}
	decision := agent.Allow
	if arm == "strict" && task == "alpha" && idx == 1 {
		decision = agent.Deny
	}
	if arm == "baseline" && task == "gamma" && idx == 0 {
		tr.Turns[0].Truncated = true
	}
	tr.Calls = []agent.CallRecord{{Turn: 0, Index: 0, Tool: "read_file", Origin: "builtin", Class: agent.ClassRead,
		Decision: decision, Arguments: fmt.Sprintf(`{"path":"%s-%d.txt","mode":"r"}`, task, idx), Result: "contents of " + task}}
	return tr
}

// newFixture stores the fixture's run and attempts in a new store and
// stores GRPO advantages the way the runner does.
func newFixture(t testing.TB) (*results.Store, *results.Run, string) {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "bench.db")
	s, err := results.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	run := &results.Run{
		ID: "run-1", Name: "fixture", CreatedAt: fixtureStart, Model: "qwen3:4b",
		Options: map[string]any{"temperature": 0.7, "num_ctx": 8192.0}, Seed: 42, AttemptsPerTask: 4,
		Suite: "examples", Status: results.RunFinished,
		Arms:  []results.Arm{{Name: "baseline", Index: 0}, {Name: "strict", Index: 1}},
		Tasks: []results.TaskInfo{{ID: "alpha"}, {ID: "beta"}, {ID: "gamma"}},
	}
	if err := s.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	for _, arm := range []string{"baseline", "strict"} {
		for _, task := range []string{"alpha", "beta", "gamma"} {
			for idx, r := range fixtureRewards[arm][task] {
				a := &results.Attempt{
					RunID: run.ID, Key: results.AttemptKey{Arm: arm, Task: task, Index: idx}, Seed: int64(100 + idx),
					Status: results.StatusFinished, Trajectory: fixtureTrajectory(arm, task, idx),
					StartedAt: fixtureStart, FinishedAt: fixtureStart.Add(time.Minute), Tries: 1,
				}
				if r == infra {
					a.Status = results.StatusInfraError
					a.Trajectory.Stop, a.Trajectory.Err = agent.StopInfraError, "model server: connection refused"
				} else {
					a.Reward = &r
					// Hidden tests of 1.2 s, plus 0.1 s per attempt index, with
					// a per-test report of two recorded tests, and the change
					// that was scored.
					a.Test = fixtureTest(r, idx)
				}
				if _, err := s.SaveAttempt(ctx, a); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	storeAdvantages(t, s, run.ID, evaluator.GRPO)
	return s, run, path
}

// storeAdvantages does what runner.StoreAdvantages does (the runner
// imports this package, so tests here cannot import it).
func storeAdvantages(t testing.TB, s *results.Store, runID string, m evaluator.Method) {
	t.Helper()
	ctx := context.Background()
	run, err := s.GetRun(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	attempts, err := s.AttemptMetrics(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	adv, _, err := results.Advantages(run, attempts, m)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetAdvantages(ctx, string(m), adv); err != nil {
		t.Fatal(err)
	}
}

// fixtureTest is the hidden tests' result of a fixture attempt of reward r.
func fixtureTest(r, idx int) *evaluator.TestResult {
	second := testreport.Pass
	failed := []string(nil)
	if r == 0 {
		second, failed = testreport.Fail, []string{"m.T.test_b"}
	}
	return &evaluator.TestResult{Command: "python3 -m unittest -v m", Passed: r == 1, ExitCode: 1 - r,
		Basis: evaluator.BasisTests, Duration: 1200*time.Millisecond + time.Duration(idx)*100*time.Millisecond,
		Cases:  []testreport.Case{{ID: "m.T.test_a", Outcome: testreport.Pass}, {ID: "m.T.test_b", Outcome: second, Message: "AssertionError"}},
		Failed: failed,
		Record: &tasks.Record{Report: tasks.ReportUnittest, FailToPass: []string{"m.T.test_b"}, PassToPass: []string{"m.T.test_a"}},
		Change: &evaluator.Change{
			Carried: []evaluator.FileChange{{Path: "m.py", Kind: "modified", Size: 42}},
			LeftOut: []evaluator.LeftOut{{Path: ".cache/", Reason: tasks.LeftOutDotFile}},
			Diff:    "--- a/m.py\n+++ b/m.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n",
		},
	}
}

// TestTimesCountAnUnansweredRequestAsTheModels: a request the model never
// answered (the attempt then ends) is model time, not the harness's.
func TestTimesCountAnUnansweredRequestAsTheModels(t *testing.T) {
	a := &results.Attempt{StartedAt: fixtureStart, FinishedAt: fixtureStart.Add(10 * time.Second),
		Trajectory: &agent.Trajectory{Turns: []agent.Turn{{Wall: time.Second}}, Unanswered: 8 * time.Second}}
	if got := a.Times(); got.Model != 9*time.Second || got.Harness != time.Second {
		t.Errorf("times %+v: want 9s of model time (a turn and the unanswered request) and 1s of the harness's", got)
	}
}
