package results

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/benchhq/bench/evaluator"
)

// ExportLine is one line of an export (JSONL): one finished attempt as a
// training sample, in the chat shape that TRL and verifiers read
// (`messages` and `tools`, OpenAI-style), with its reward, its
// group-relative advantage and where it came from. docs/export.md
// describes every field.
type ExportLine struct {
	// RunID, Arm, TaskID and Index name the attempt; AttemptID is its row
	// id in the store (attempts.id).
	RunID     string `json:"run_id"`
	Arm       string `json:"arm"`
	TaskID    string `json:"task_id"`
	Index     int    `json:"index"`
	AttemptID int64  `json:"attempt_id"`
	// GroupID names the attempt's group, "RUN/ARM/TASK": the attempts
	// whose rewards its advantage is relative to. GroupSize counts the
	// group's finished attempts (infrastructure failures are left out).
	GroupID   string `json:"group_id"`
	GroupSize int    `json:"group_size"`
	// Model and Options are what every request of the run was sent;
	// Seed is the attempt's own seed.
	Model   string         `json:"model"`
	Options map[string]any `json:"options"`
	Seed    int64          `json:"seed"`
	// Messages is the conversation exactly as sent to the model, in
	// order, with the final reply appended.
	Messages []ExportMessage `json:"messages"`
	// Tools is the tool definitions exactly as sent to the model:
	// [{"type":"function","function":{"name","description","parameters"}}].
	Tools json.RawMessage `json:"tools"`
	// Reward is 1 if the hidden tests passed, 0 if not.
	Reward float64 `json:"reward"`
	// TestsPassed is the fraction of the task's recorded tests that passed
	// (a denser signal than the 0/1 reward); null when the task's tests
	// give no per-test report.
	TestsPassed *float64 `json:"tests_passed"`
	// Isolation is how the run's commands and hidden tests were isolated
	// (runs.isolation): "none" marks a run with --sandbox off, whose
	// rewards are not to be trusted.
	Isolation string `json:"isolation"`
	// RewardBasis says what the reward rests on: "tests" (exit status and
	// every recorded test passing) or "exit_status" (the exit status alone).
	RewardBasis string `json:"reward_basis"`
	// Verdict is the kind of verdict the reward rests on: "golden",
	// "black_box" (out of the agent's reach), "in_process_canary",
	// "in_process", "exit_status" (decided in reach of the agent's code);
	// "" for an attempt stored before bench said.
	Verdict string `json:"verdict"`
	// CasesPassed is the fraction of the out-of-process cases (golden
	// cases, black-box checks) that passed; null without any.
	CasesPassed *float64 `json:"cases_passed"`
	// Flags are the suspicion flags of the carried change (docs/flags.md),
	// sorted; they never change the reward.
	Flags []string `json:"flags"`
	// Advantage is the group-relative advantage, computed by AdvantageMethod.
	Advantage       float64 `json:"advantage"`
	AdvantageMethod string  `json:"advantage_method"`
	// Turns, ToolCalls, PromptTokens and CompletionTokens are the
	// attempt's totals (tokens summed over its turns, each turn's whole
	// prompt counted).
	Turns            int `json:"turns"`
	ToolCalls        int `json:"tool_calls"`
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	// StopReason says why the agent loop ended; WallMS is its wall time
	// in milliseconds.
	StopReason string  `json:"stop_reason"`
	WallMS     float64 `json:"wall_ms"`
}

// ExportMessage is one chat message, OpenAI-style.
type ExportMessage struct {
	// Role is system, user, assistant or tool.
	Role    string `json:"role"`
	Content string `json:"content"`
	// ReasoningContent is the model's thinking, when it was asked to think.
	ReasoningContent string `json:"reasoning_content,omitempty"`
	// ToolCalls are an assistant message's tool calls.
	ToolCalls []ExportToolCall `json:"tool_calls,omitempty"`
	// Name is, for a tool message, the tool whose result it is.
	Name string `json:"name,omitempty"`
	// ToolCallID is, for a tool message, the id of the call it answers,
	// when the model gave the call an id.
	ToolCallID string `json:"tool_call_id,omitempty"`
}

// ExportToolCall is one tool call of an assistant message.
type ExportToolCall struct {
	// ID is the call's id, when the model gave one.
	ID string `json:"id,omitempty"`
	// Type is always "function".
	Type     string         `json:"type"`
	Function ExportFunction `json:"function"`
}

// ExportFunction is the function a tool call names and its arguments.
type ExportFunction struct {
	Name string `json:"name"`
	// Arguments is a JSON object, as the model sent it (not a string).
	Arguments json.RawMessage `json:"arguments"`
}

// ExportOptions selects what an export writes. The zero value exports
// every finished attempt of the latest run with its stored advantages.
type ExportOptions struct {
	// Runs are the runs to export; none means the latest run.
	Runs []string
	// Arms keeps only these arms; none means every arm. Each must be an
	// arm of one of the runs.
	Arms []string
	// OnlySignal keeps only groups whose rewards are not all equal: the
	// others have advantage 0 and teach a trainer nothing.
	OnlySignal bool
	// MinReward and MaxReward keep attempts whose reward is within bounds.
	MinReward, MaxReward *float64
	// SFT keeps only attempts with reward 1 (supervised fine-tuning data).
	SFT bool
	// Method recomputes every advantage with this method; "" uses the
	// stored advantages, or computes them (with the stored method, else
	// evaluator.GRPO) when the run has none or only some.
	Method evaluator.Method
}

// ExportStats says what an export wrote.
type ExportStats struct {
	// Runs are the runs exported.
	Runs []string
	// Lines counts the attempts written and Groups the groups they come from.
	Lines  int
	Groups int
	// Unscored counts the attempts left out because they did not finish
	// (infrastructure failures, interruptions): they are never exported.
	Unscored int
	// Methods are the advantage methods of the lines written, sorted.
	Methods []string
	// Computed names the runs whose advantages were computed by the export
	// rather than read from the store.
	Computed []string
}

// Export writes the finished attempts that opts selects to w, one JSON
// object per line (ExportLine), run by run in the run's arm, task and
// attempt order. Attempts that did not finish are never written.
//
// Options that do not fit the store fail before anything is written: a
// run that is not in it with a *NoRunError, an arm that none of the runs
// has with a *NoArmError, MinReward above MaxReward with a
// *RewardRangeError.
func (s *Store) Export(ctx context.Context, w io.Writer, opts ExportOptions) (ExportStats, error) {
	return s.export(ctx, w, opts, exportTasks)
}

// export is Export reading tasks tasks of a run at a time.
func (s *Store) export(ctx context.Context, w io.Writer, opts ExportOptions, tasks int) (ExportStats, error) {
	var stats ExportStats
	if err := opts.check(); err != nil {
		return stats, fmt.Errorf("export: %w", err)
	}
	runs, err := s.exportRuns(ctx, opts)
	if err != nil {
		return stats, fmt.Errorf("export: %w", err)
	}
	ex, err := s.newExporter(ctx, w)
	if err != nil {
		return stats, fmt.Errorf("export: %w", err)
	}
	defer ex.close()
	ex.tasks = tasks
	methods := map[string]bool{}
	for _, run := range runs {
		stats.Runs = append(stats.Runs, run.ID)
		if err := s.exportRun(ctx, ex, run, opts, &stats, methods); err != nil {
			return stats, fmt.Errorf("export run %q from %s: %w", run.ID, s.path, err)
		}
	}
	stats.Methods = sortedKeys(methods)
	return stats, nil
}

func (o *ExportOptions) check() error {
	if o.Method != "" {
		if _, err := evaluator.ParseMethod(string(o.Method)); err != nil {
			return err
		}
	}
	if o.MinReward != nil && o.MaxReward != nil && *o.MinReward > *o.MaxReward {
		return &RewardRangeError{Min: *o.MinReward, Max: *o.MaxReward}
	}
	return nil
}

// RewardRangeError is the error of an export whose MinReward is above its
// MaxReward: no attempt could match.
type RewardRangeError struct {
	Min, Max float64
}

// Error says which bound is above which.
func (e *RewardRangeError) Error() string {
	return fmt.Sprintf("min reward %v is above max reward %v", e.Min, e.Max)
}

// exportRuns loads the runs to export and checks that every arm asked
// for is in one of them.
func (s *Store) exportRuns(ctx context.Context, opts ExportOptions) ([]*Run, error) {
	var runs []*Run
	if len(opts.Runs) == 0 {
		run, err := s.LatestRun(ctx)
		if err != nil {
			return nil, err
		}
		runs = append(runs, run)
	}
	for _, id := range opts.Runs {
		run, err := s.GetRun(ctx, id)
		if err != nil {
			return nil, err
		}
		runs = append(runs, run)
	}
	for _, run := range runs {
		if run.Shard != "" {
			// Its groups are partial: advantages over them would be wrong.
			return nil, fmt.Errorf("run %s in %s is shard %s of its plan: its groups are partial, so their advantages would be wrong; put the shards together with bench merge and export the merged file", run.ID, s.path, run.Shard)
		}
	}
	for _, arm := range opts.Arms {
		found := false
		var names []string
		for _, run := range runs {
			for _, a := range run.Arms {
				found = found || a.Name == arm
				if !slices.Contains(names, a.Name) {
					names = append(names, a.Name)
				}
			}
		}
		if !found {
			return nil, &NoArmError{Arm: arm, Arms: names}
		}
	}
	return runs, nil
}

// recomputeFrom says whether a run's advantages must be computed at
// export, and with which method: always when one is asked for; otherwise
// when a finished attempt has none (missing) or the methods of those
// stored differ, with the stored method if there is exactly one, else
// GRPO.
func recomputeFrom(asked evaluator.Method, missing bool, stored map[string]bool) (evaluator.Method, bool) {
	if asked != "" {
		return asked, true
	}
	if !missing && len(stored) <= 1 {
		return "", false
	}
	if len(stored) == 1 {
		for m := range stored {
			if method, err := evaluator.ParseMethod(m); err == nil {
				return method, true
			}
		}
	}
	return evaluator.GRPO, true
}

// recomputeWith is recomputeFrom for a run's attempts in hand (the
// exact-token export reads them all).
func recomputeWith(asked evaluator.Method, attempts []AttemptMetrics) (evaluator.Method, bool) {
	stored := map[string]bool{}
	missing := false
	for _, a := range attempts {
		switch {
		case !a.Finished():
		case a.Advantage == nil:
			missing = true
		default:
			stored[a.AdvantageMethod] = true
		}
	}
	return recomputeFrom(asked, missing, stored)
}

// keep applies the reward filters.
func (o *ExportOptions) keep(reward float64) bool {
	switch {
	case o.SFT && reward != 1:
		return false
	case o.MinReward != nil && reward < *o.MinReward:
		return false
	case o.MaxReward != nil && reward > *o.MaxReward:
		return false
	}
	return true
}

// exportToolCalls turns tool calls as Ollama sends them
// ([{"id":..,"function":{"index":..,"name":..,"arguments":{..}}}]) into the
// OpenAI shape, arguments kept as a JSON object in the model's key order.
func exportToolCalls(stored string) ([]ExportToolCall, error) {
	if calls, ok := fastToolCalls(stored, nil); ok {
		return calls, nil
	}
	return decodeToolCalls(stored)
}

// decodeToolCalls is exportToolCalls by encoding/json, for any shape.
func decodeToolCalls(stored string) ([]ExportToolCall, error) {
	var calls []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"function"`
	}
	if err := json.Unmarshal([]byte(stored), &calls); err != nil {
		return nil, err
	}
	out := make([]ExportToolCall, len(calls))
	for i, c := range calls {
		args := c.Function.Arguments
		if len(args) == 0 || string(args) == "null" {
			args = json.RawMessage("{}")
		}
		out[i] = ExportToolCall{ID: c.ID, Type: "function", Function: ExportFunction{Name: c.Function.Name, Arguments: args}}
	}
	return out, nil
}
