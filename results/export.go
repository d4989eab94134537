package results

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

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

// exportAttempt is an attempt's row, without its conversation.
type exportAttempt struct {
	attemptRow
	Seed     int64         `db:"seed"`
	ToolList sql.NullInt64 `db:"tool_list_id"`
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
	var stats ExportStats
	if err := opts.check(); err != nil {
		return stats, fmt.Errorf("export: %w", err)
	}
	runs, err := s.exportRuns(ctx, opts)
	if err != nil {
		return stats, fmt.Errorf("export: %w", err)
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	methods := map[string]bool{}
	for _, run := range runs {
		stats.Runs = append(stats.Runs, run.ID)
		if err := s.exportRun(ctx, enc, run, opts, &stats, methods); err != nil {
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

func (s *Store) exportRun(ctx context.Context, enc *json.Encoder, run *Run, opts ExportOptions, stats *ExportStats, methods map[string]bool) error {
	var rows []exportAttempt
	if err := s.db.SelectContext(ctx, &rows, `SELECT a.id, a.arm, a.task_id, a.idx, a.seed, a.status,
			a.stop_reason, a.reward, a.advantage, a.advantage_method, a.turns, a.tool_calls,
			a.prompt_tokens, a.completion_tokens, a.wall_ms, a.tool_list_id
		FROM attempts a
		JOIN arms ar ON ar.run_id = a.run_id AND ar.name = a.arm
		JOIN tasks t ON t.run_id = a.run_id AND t.id = a.task_id
		WHERE a.run_id = ?
		ORDER BY ar.idx, t.idx, a.idx`, run.ID); err != nil {
		return fmt.Errorf("read attempts: %w", err)
	}
	attempts := make([]AttemptMetrics, len(rows))
	byID := make(map[int64]*exportAttempt, len(rows))
	for i := range rows {
		m, err := rows[i].metrics()
		if err != nil {
			return err
		}
		attempts[i] = m
		byID[m.ID] = &rows[i]
		if m.Status != StatusFinished && (len(opts.Arms) == 0 || slices.Contains(opts.Arms, m.Key.Arm)) {
			stats.Unscored++
		}
	}
	groups, err := groupAttempts(run, attempts)
	if err != nil {
		return err
	}
	if method, ok := recomputeWith(opts.Method, attempts); ok {
		adv, err := groupAdvantages(groups, method)
		if err != nil {
			return err
		}
		for _, g := range groups {
			for i := range g.attempts {
				if v, ok := adv[g.attempts[i].ID]; ok {
					g.attempts[i].Advantage, g.attempts[i].AdvantageMethod = &v, string(method)
				}
			}
		}
		stats.Computed = append(stats.Computed, run.ID)
	}
	options := run.Options
	if options == nil {
		options = map[string]any{}
	}
	lists := &toolLists{s: s, byID: map[int64]json.RawMessage{}}
	for _, g := range groups {
		if len(opts.Arms) > 0 && !slices.Contains(opts.Arms, g.arm) {
			continue
		}
		if opts.OnlySignal && g.zeroVariance() {
			continue
		}
		finished := g.finished()
		wrote := false
		for _, a := range finished {
			if !opts.keep(float64(*a.Reward)) {
				continue
			}
			row := byID[a.ID]
			line := ExportLine{
				RunID: run.ID, Arm: a.Key.Arm, TaskID: a.Key.Task, Index: a.Key.Index, AttemptID: a.ID,
				GroupID: run.ID + "/" + g.arm + "/" + g.task, GroupSize: len(finished),
				Model: run.Model, Options: options, Seed: row.Seed,
				Reward: float64(*a.Reward), AdvantageMethod: a.AdvantageMethod,
				Turns: row.Turns, ToolCalls: row.ToolCalls, PromptTokens: row.Prompt, CompletionTokens: row.Completion,
				StopReason: row.StopReason, WallMS: row.WallMS,
			}
			if a.Advantage != nil {
				line.Advantage = *a.Advantage
			}
			var err error
			if line.Tools, err = lists.get(ctx, row.ToolList); err != nil {
				return fmt.Errorf("attempt %d (%s): %w", a.ID, a.Key, err)
			}
			if line.Messages, err = s.conversation(ctx, a.ID); err != nil {
				return fmt.Errorf("attempt %d (%s): %w", a.ID, a.Key, err)
			}
			if err := enc.Encode(&line); err != nil {
				return fmt.Errorf("write attempt %d: %w", a.ID, err)
			}
			stats.Lines++
			methods[line.AdvantageMethod] = true
			wrote = true
		}
		if wrote {
			stats.Groups++
		}
	}
	return nil
}

// recomputeWith says whether a run's advantages must be computed at
// export, and with which method: always when one is asked for; otherwise
// when a finished attempt has none or the methods differ, with the stored
// method if there is exactly one, else GRPO.
func recomputeWith(asked evaluator.Method, attempts []AttemptMetrics) (evaluator.Method, bool) {
	if asked != "" {
		return asked, true
	}
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

// toolLists reads tool lists by id, each once, checking it once.
type toolLists struct {
	s    *Store
	byID map[int64]json.RawMessage
}

func (l *toolLists) get(ctx context.Context, id sql.NullInt64) (json.RawMessage, error) {
	if !id.Valid {
		return json.RawMessage("[]"), nil // not written by bench; no tools known
	}
	if tools, ok := l.byID[id.Int64]; ok {
		return tools, nil
	}
	var tools string
	if err := l.s.db.GetContext(ctx, &tools, `SELECT tools_json FROM tool_lists WHERE id = ?`, id.Int64); err != nil {
		return nil, fmt.Errorf("read tool list %d: %w", id.Int64, err)
	}
	if !json.Valid([]byte(tools)) || !strings.HasPrefix(strings.TrimSpace(tools), "[") {
		return nil, fmt.Errorf("tool list %d: column tool_lists.tools_json: not a JSON array", id.Int64)
	}
	l.byID[id.Int64] = json.RawMessage(tools)
	return l.byID[id.Int64], nil
}

// conversation reads an attempt's messages, in order, each tool message
// with its call's result when that is where its text is kept.
func (s *Store) conversation(ctx context.Context, attemptID int64) ([]ExportMessage, error) {
	var rows []struct {
		Index      int            `db:"idx"`
		Role       string         `db:"role"`
		Content    string         `db:"content"`
		Thinking   string         `db:"thinking"`
		ToolCalls  sql.NullString `db:"tool_calls_json"`
		ToolName   string         `db:"tool_name"`
		ToolCallID string         `db:"tool_call_id"`
	}
	if err := s.db.SelectContext(ctx, &rows, `SELECT m.idx, m.role,
		CASE WHEN m.tool_call_idx IS NULL THEN m.content ELSE coalesce(c.result, m.content) END AS content,
		m.thinking, m.tool_calls_json, m.tool_name, m.tool_call_id
		FROM messages m
		LEFT JOIN tool_calls c ON c.attempt_id = m.attempt_id AND c.idx = m.tool_call_idx
		WHERE m.attempt_id = ? ORDER BY m.idx`, attemptID); err != nil {
		return nil, fmt.Errorf("read messages: %w", err)
	}
	msgs := make([]ExportMessage, len(rows))
	for i, r := range rows {
		m := ExportMessage{Role: r.Role, Content: r.Content, ReasoningContent: r.Thinking,
			Name: r.ToolName, ToolCallID: r.ToolCallID}
		if r.ToolCalls.Valid {
			calls, err := exportToolCalls(r.ToolCalls.String)
			if err != nil {
				return nil, fmt.Errorf("message %d: column messages.tool_calls_json: %w", r.Index, err)
			}
			m.ToolCalls = calls
		}
		msgs[i] = m
	}
	return msgs, nil
}

// exportToolCalls turns tool calls as Ollama sends them
// ([{"id":..,"function":{"index":..,"name":..,"arguments":{..}}}]) into the
// OpenAI shape, arguments kept as a JSON object in the model's key order.
func exportToolCalls(stored string) ([]ExportToolCall, error) {
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
