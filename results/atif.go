package results

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
)

// ATIFVersion is the version of the Agent Trajectory Interchange Format
// (Harbor's trajectory format, rfcs/0001-trajectory-format.md) that
// ExportATIF writes.
const ATIFVersion = "ATIF-v1.6"

// ATIFTrajectory is one attempt as an ATIF trajectory.
type ATIFTrajectory struct {
	SchemaVersion string      `json:"schema_version"`
	SessionID     string      `json:"session_id"`
	Agent         ATIFAgent   `json:"agent"`
	Steps         []ATIFStep  `json:"steps"`
	FinalMetrics  ATIFMetrics `json:"final_metrics"`
	// Extra holds what ATIF has no field for: the reward, the advantage,
	// the group, what the reward rests on (see ExportLine).
	Extra ATIFExtra `json:"extra"`
}

// ATIFAgent is the agent that made the trajectory: bench's loop and the
// model it drove.
type ATIFAgent struct {
	Name      string         `json:"name"`
	Version   string         `json:"version"`
	ModelName string         `json:"model_name"`
	Extra     map[string]any `json:"extra,omitempty"`
}

// ATIFStep is one message of the conversation: the system prompt, the
// instruction (user), or one model turn (agent) with its tool calls and
// their results as its observation.
type ATIFStep struct {
	StepID           int              `json:"step_id"`
	Source           string           `json:"source"`
	ModelName        string           `json:"model_name,omitempty"`
	Message          string           `json:"message"`
	ReasoningContent string           `json:"reasoning_content,omitempty"`
	ToolCalls        []ATIFToolCall   `json:"tool_calls,omitempty"`
	Observation      *ATIFObservation `json:"observation,omitempty"`
}

// ATIFToolCall is one tool call of an agent step.
type ATIFToolCall struct {
	ToolCallID   string          `json:"tool_call_id"`
	FunctionName string          `json:"function_name"`
	Arguments    json.RawMessage `json:"arguments"`
}

// ATIFObservation holds the results of an agent step's tool calls.
type ATIFObservation struct {
	Results []ATIFResult `json:"results"`
}

// ATIFResult is one tool call's result.
type ATIFResult struct {
	SourceCallID string `json:"source_call_id"`
	Content      string `json:"content"`
}

// ATIFMetrics are the trajectory's totals.
type ATIFMetrics struct {
	TotalPromptTokens     int `json:"total_prompt_tokens"`
	TotalCompletionTokens int `json:"total_completion_tokens"`
	TotalSteps            int `json:"total_steps"`
}

// ATIFExtra is the root's extra: bench's fields of the attempt, named as
// in ExportLine.
type ATIFExtra struct {
	RunID           string   `json:"run_id"`
	Arm             string   `json:"arm"`
	TaskID          string   `json:"task_id"`
	Index           int      `json:"index"`
	AttemptID       int64    `json:"attempt_id"`
	GroupID         string   `json:"group_id"`
	GroupSize       int      `json:"group_size"`
	Seed            int64    `json:"seed"`
	Reward          float64  `json:"reward"`
	TestsPassed     *float64 `json:"tests_passed"`
	RewardBasis     string   `json:"reward_basis"`
	Isolation       string   `json:"isolation"`
	Advantage       float64  `json:"advantage"`
	AdvantageMethod string   `json:"advantage_method"`
	ToolCalls       int      `json:"tool_calls"`
	StopReason      string   `json:"stop_reason"`
	WallMS          float64  `json:"wall_ms"`
}

// ExportATIF writes what Export writes, each attempt as one ATIF
// trajectory, one JSON object per line. It is a rendering of Export's
// lines (the same selection, advantages and order), not a second reading
// of the store.
func (s *Store) ExportATIF(ctx context.Context, w io.Writer, opts ExportOptions) (ExportStats, error) {
	pr, pw := io.Pipe()
	var stats ExportStats
	done := make(chan error, 1)
	go func() {
		var err error
		stats, err = s.Export(ctx, pw, opts)
		pw.CloseWithError(err)
		done <- err
	}()
	err := convertATIF(pr, w)
	pr.CloseWithError(errors.Join(err, io.ErrClosedPipe)) // stops the export when the writer failed
	if xerr := <-done; xerr != nil && !errors.Is(xerr, io.ErrClosedPipe) {
		return stats, xerr
	}
	return stats, err
}

// convertATIF reads Export's lines from r and writes them to w as ATIF.
func convertATIF(r io.Reader, w io.Writer) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<30)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	version := benchVersion()
	for sc.Scan() {
		var l ExportLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return fmt.Errorf("export atif: read a line: %w", err)
		}
		if err := enc.Encode(ATIFOf(&l, version)); err != nil {
			return fmt.Errorf("export atif: %w", err)
		}
	}
	return sc.Err()
}

// ATIFOf is the ATIF trajectory of an export line; version is bench's.
func ATIFOf(l *ExportLine, version string) *ATIFTrajectory {
	t := &ATIFTrajectory{
		SchemaVersion: ATIFVersion,
		SessionID:     fmt.Sprintf("%s/%s/%s#%d", l.RunID, l.Arm, l.TaskID, l.Index),
		Agent: ATIFAgent{Name: "bench", Version: version, ModelName: l.Model,
			Extra: map[string]any{"options": l.Options, "tools": l.Tools}},
		FinalMetrics: ATIFMetrics{TotalPromptTokens: l.PromptTokens, TotalCompletionTokens: l.CompletionTokens},
		Extra: ATIFExtra{
			RunID: l.RunID, Arm: l.Arm, TaskID: l.TaskID, Index: l.Index, AttemptID: l.AttemptID,
			GroupID: l.GroupID, GroupSize: l.GroupSize, Seed: l.Seed, Reward: l.Reward, TestsPassed: l.TestsPassed,
			RewardBasis: l.RewardBasis, Isolation: l.Isolation, Advantage: l.Advantage, AdvantageMethod: l.AdvantageMethod,
			ToolCalls: l.ToolCalls, StopReason: l.StopReason, WallMS: l.WallMS,
		},
	}
	last := -1   // the index of the agent step the next tool results answer
	pending := 0 // its calls answered so far, in order
	for i, m := range l.Messages {
		switch m.Role {
		case "tool":
			if last < 0 {
				// A result with no call before it: kept as a system step
				// rather than dropped.
				t.Steps = append(t.Steps, ATIFStep{Source: "system", Message: m.Content})
				continue
			}
			st := &t.Steps[last]
			id := m.ToolCallID
			if id == "" && pending < len(st.ToolCalls) {
				id = st.ToolCalls[pending].ToolCallID
			}
			pending++
			if st.Observation == nil {
				st.Observation = &ATIFObservation{}
			}
			st.Observation.Results = append(st.Observation.Results, ATIFResult{SourceCallID: id, Content: m.Content})
			continue
		case "assistant":
			st := ATIFStep{Source: "agent", ModelName: l.Model, Message: m.Content, ReasoningContent: m.ReasoningContent}
			for j, c := range m.ToolCalls {
				id := c.ID
				if id == "" {
					id = fmt.Sprintf("call_%d_%d", i, j) // the model gave none
				}
				args := c.Function.Arguments
				if len(args) == 0 {
					args = json.RawMessage("{}")
				}
				st.ToolCalls = append(st.ToolCalls, ATIFToolCall{ToolCallID: id, FunctionName: c.Function.Name, Arguments: args})
			}
			t.Steps = append(t.Steps, st)
			last, pending = len(t.Steps)-1, 0
			continue
		case "user":
			t.Steps = append(t.Steps, ATIFStep{Source: "user", Message: m.Content})
		default:
			t.Steps = append(t.Steps, ATIFStep{Source: "system", Message: m.Content})
		}
		last = -1
	}
	for i := range t.Steps {
		t.Steps[i].StepID = i + 1
	}
	t.FinalMetrics.TotalSteps = len(t.Steps)
	return t
}

// benchVersion is bench's module version, "devel" for a build from a
// source tree.
func benchVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}
