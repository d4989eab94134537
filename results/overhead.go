package results

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
)

// The kinds of an OverheadItem.
const (
	// OverheadSet is a tool set (the built-ins, one MCP server) measured alone.
	OverheadSet = "set"
	// OverheadTool is one tool measured alone.
	OverheadTool = "tool"
)

// Overhead is the prompt-token cost of one arm's tools, measured once at
// the start of a run: what every request of the arm's attempts carries for
// the tools. Tokens are Ollama's prompt_eval_count of a minimal request;
// an overhead is a difference with the same request offering no tools.
type Overhead struct {
	// Arm is the arm measured.
	Arm string
	// Model is the model measured and NumCtx the num_ctx sent.
	Model  string
	NumCtx int
	// MeasuredAt is when the measurement started.
	MeasuredAt time.Time
	// BaselineTokens is the prompt of the request with no tools.
	BaselineTokens int
	// PromptTokens is the prompt of the request with all the arm's tools.
	PromptTokens int
	// Tokens is the overhead of all the tools together: PromptTokens minus
	// BaselineTokens.
	Tokens int
	// SumOfTools is the sum of the tools' overheads, each measured alone;
	// Tokens - SumOfTools is the template's framing.
	SumOfTools int
	// Truncated is true when the prompt with all the tools reached num_ctx:
	// Tokens is then a lower bound.
	Truncated bool
	// Items are the sets and tools measured alone: each set followed by its
	// tools, in the order they are offered.
	Items []OverheadItem
}

// OverheadItem is one tool set or one tool measured alone.
type OverheadItem struct {
	// Kind is OverheadSet or OverheadTool.
	Kind string
	// Name is the set's or the tool's name.
	Name string
	// Set is the set a tool belongs to; for a set, its own name.
	Set string
	// PromptTokens is the prompt of the request offering it alone.
	PromptTokens int
	// Tokens is its overhead: PromptTokens minus Overhead.BaselineTokens.
	Tokens int
	// Truncated is true when PromptTokens reached num_ctx.
	Truncated bool
}

// SaveOverhead stores the overhead of one arm of a run, replacing an
// earlier measurement of the same arm, in one transaction. The run and the
// arm must exist: a missing run is an error matching ErrNoRun.
func (s *Store) SaveOverhead(ctx context.Context, runID string, o *Overhead) error {
	if err := validateOverhead(o); err != nil {
		return fmt.Errorf("save overhead of arm %q of run %q: %w", o.Arm, runID, err)
	}
	measured := o.MeasuredAt
	if measured.IsZero() {
		measured = time.Now()
	}
	err := s.write(ctx, func(tx *sqlx.Tx) error {
		var run, arm bool
		if err := tx.GetContext(ctx, &run, `SELECT EXISTS (SELECT 1 FROM runs WHERE id = ?)`, runID); err != nil {
			return err
		}
		if !run {
			return ErrNoRun
		}
		if err := tx.GetContext(ctx, &arm, `SELECT EXISTS (SELECT 1 FROM arms WHERE run_id = ? AND name = ?)`, runID, o.Arm); err != nil {
			return err
		}
		if !arm {
			return fmt.Errorf("the run has no arm %q (create the run first)", o.Arm)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM overhead_items WHERE run_id = ? AND arm = ?`, runID, o.Arm); err != nil {
			return fmt.Errorf("delete earlier items: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM overhead WHERE run_id = ? AND arm = ?`, runID, o.Arm); err != nil {
			return fmt.Errorf("delete earlier overhead: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO overhead (run_id, arm, model, num_ctx, measured_at,
			baseline_tokens, prompt_tokens, tokens, sum_of_tools, truncated)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			runID, o.Arm, o.Model, o.NumCtx, formatTime(measured),
			o.BaselineTokens, o.PromptTokens, o.Tokens, o.SumOfTools, o.Truncated); err != nil {
			return fmt.Errorf("insert overhead: %w", err)
		}
		return insertEach(ctx, tx, "overhead item", `INSERT INTO overhead_items (run_id, arm, idx, kind, name,
			tool_set, prompt_tokens, tokens, truncated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, len(o.Items), func(i int) []any {
			it := o.Items[i]
			return []any{runID, o.Arm, i, it.Kind, it.Name, it.Set, it.PromptTokens, it.Tokens, it.Truncated}
		})
	})
	if err != nil {
		return fmt.Errorf("save overhead of arm %q of run %q in %s: %w", o.Arm, runID, s.path, err)
	}
	return nil
}

func validateOverhead(o *Overhead) error {
	switch {
	case o.Arm == "":
		return errors.New("arm: empty")
	case o.Model == "":
		return errors.New("model: empty")
	case o.NumCtx <= 0:
		return fmt.Errorf("num_ctx: %d, expected a positive number", o.NumCtx)
	}
	for i, it := range o.Items {
		switch {
		case it.Kind != OverheadSet && it.Kind != OverheadTool:
			return fmt.Errorf("item %d: kind %q, expected %q or %q", i, it.Kind, OverheadSet, OverheadTool)
		case it.Name == "":
			return fmt.Errorf("item %d: empty name", i)
		case it.Set == "":
			return fmt.Errorf("item %d (%s): empty set", i, it.Name)
		}
	}
	return nil
}

// Overhead returns the stored overhead of a run's arms, in the run's arm
// order; an arm not measured has no entry. It returns an empty slice for a
// run without measurements, and an error matching ErrNoRun for a run that
// does not exist.
func (s *Store) Overhead(ctx context.Context, runID string) ([]Overhead, error) {
	out, err := s.overhead(ctx, runID)
	if err != nil {
		return nil, fmt.Errorf("overhead of run %q in %s: %w", runID, s.path, err)
	}
	return out, nil
}

func (s *Store) overhead(ctx context.Context, runID string) ([]Overhead, error) {
	if err := s.checkRun(ctx, runID); err != nil {
		return nil, err
	}
	var heads []struct {
		Arm        string `db:"arm"`
		Model      string `db:"model"`
		NumCtx     int    `db:"num_ctx"`
		MeasuredAt string `db:"measured_at"`
		Baseline   int    `db:"baseline_tokens"`
		Prompt     int    `db:"prompt_tokens"`
		Tokens     int    `db:"tokens"`
		Sum        int    `db:"sum_of_tools"`
		Truncated  bool   `db:"truncated"`
	}
	if err := s.db.SelectContext(ctx, &heads, `SELECT o.arm, o.model, o.num_ctx, o.measured_at,
			o.baseline_tokens, o.prompt_tokens, o.tokens, o.sum_of_tools, o.truncated
		FROM overhead o JOIN arms a ON a.run_id = o.run_id AND a.name = o.arm
		WHERE o.run_id = ? ORDER BY a.idx, a.name`, runID); err != nil {
		return nil, err
	}
	var items []struct {
		Arm       string `db:"arm"`
		Kind      string `db:"kind"`
		Name      string `db:"name"`
		Set       string `db:"tool_set"`
		Prompt    int    `db:"prompt_tokens"`
		Tokens    int    `db:"tokens"`
		Truncated bool   `db:"truncated"`
	}
	if err := s.db.SelectContext(ctx, &items, `SELECT arm, kind, name, tool_set, prompt_tokens, tokens, truncated
		FROM overhead_items WHERE run_id = ? ORDER BY arm, idx`, runID); err != nil {
		return nil, fmt.Errorf("items: %w", err)
	}
	byArm := map[string][]OverheadItem{}
	for _, it := range items {
		byArm[it.Arm] = append(byArm[it.Arm], OverheadItem{Kind: it.Kind, Name: it.Name, Set: it.Set,
			PromptTokens: it.Prompt, Tokens: it.Tokens, Truncated: it.Truncated})
	}
	out := make([]Overhead, 0, len(heads))
	for _, h := range heads {
		t, err := parseTime("overhead.measured_at", h.MeasuredAt)
		if err != nil {
			return nil, fmt.Errorf("arm %q: %w", h.Arm, err)
		}
		out = append(out, Overhead{Arm: h.Arm, Model: h.Model, NumCtx: h.NumCtx, MeasuredAt: t,
			BaselineTokens: h.Baseline, PromptTokens: h.Prompt, Tokens: h.Tokens, SumOfTools: h.Sum,
			Truncated: h.Truncated, Items: byArm[h.Arm]})
	}
	return out, nil
}

// TruncatedTurns counts, per arm of a run, the stored turns whose prompt
// was probably truncated at num_ctx (turns.truncated), over every stored
// attempt whatever its status. Every arm of the run has an entry, 0 when
// none was cut. A run that does not exist is an error matching ErrNoRun.
func (s *Store) TruncatedTurns(ctx context.Context, runID string) (map[string]int, error) {
	if err := s.checkRun(ctx, runID); err != nil {
		return nil, fmt.Errorf("truncated turns of run %q in %s: %w", runID, s.path, err)
	}
	var rows []struct {
		Arm string `db:"arm"`
		N   int    `db:"n"`
	}
	if err := s.db.SelectContext(ctx, &rows, `SELECT ar.name AS arm, count(t.attempt_id) AS n
		FROM arms ar
		LEFT JOIN attempts a ON a.run_id = ar.run_id AND a.arm = ar.name
		LEFT JOIN turns t ON t.attempt_id = a.id AND t.truncated = 1
		WHERE ar.run_id = ?
		GROUP BY ar.name`, runID); err != nil {
		return nil, fmt.Errorf("truncated turns of run %q in %s: %w", runID, s.path, err)
	}
	out := make(map[string]int, len(rows))
	for _, r := range rows {
		out[r.Arm] = r.N
	}
	return out, nil
}

// checkRun returns ErrNoRun if the store holds no run of this id.
func (s *Store) checkRun(ctx context.Context, runID string) error {
	var exists bool
	if err := s.db.GetContext(ctx, &exists, `SELECT EXISTS (SELECT 1 FROM runs WHERE id = ?)`, runID); err != nil {
		return err
	}
	if !exists {
		return ErrNoRun
	}
	return nil
}
