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
	// ModelContext is the model's own context length, 0 when unknown.
	// Ollama lowers a larger num_ctx to it silently: Context is the
	// context the measurement (and the run) had.
	ModelContext int
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
	// Truncated is true when the prompt with all the tools reached the
	// context: Tokens is then a lower bound.
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
	// Truncated is true when PromptTokens reached the context.
	Truncated bool
}

// Context is the context the server used: NumCtx, or ModelContext when it
// is known and smaller.
func (o *Overhead) Context() int {
	if o.ModelContext > 0 && o.ModelContext < o.NumCtx {
		return o.ModelContext
	}
	return o.NumCtx
}

// SaveOverhead stores the overhead of one arm of a run, replacing an
// earlier measurement of the same arm, in one transaction. The run and the
// arm must exist: a missing run is an error matching ErrNoRun, a missing
// arm one matching ErrNoArm.
func (s *Store) SaveOverhead(ctx context.Context, runID string, o *Overhead) error {
	if err := validateOverhead(o); err != nil {
		return fmt.Errorf("save overhead of arm %q of run %q: %w", o.Arm, runID, err)
	}
	measured := o.MeasuredAt
	if measured.IsZero() {
		measured = time.Now()
	}
	err := s.write(ctx, func(tx *sqlx.Tx) error {
		if err := checkPlanned(ctx, tx, runID, o.Arm, ""); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM overhead_items WHERE run_id = ? AND arm = ?`, runID, o.Arm); err != nil {
			return fmt.Errorf("delete earlier items: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM overhead WHERE run_id = ? AND arm = ?`, runID, o.Arm); err != nil {
			return fmt.Errorf("delete earlier overhead: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO overhead (run_id, arm, model, num_ctx, model_context, measured_at,
			baseline_tokens, prompt_tokens, tokens, sum_of_tools, truncated)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			runID, o.Arm, o.Model, o.NumCtx, o.ModelContext, formatTime(measured),
			o.BaselineTokens, o.PromptTokens, o.Tokens, o.SumOfTools, o.Truncated); err != nil {
			return fmt.Errorf("insert overhead: %w", err)
		}
		return insertEach(ctx, newTxWriter(s, tx), "overhead item", `INSERT INTO overhead_items (run_id, arm, idx, kind, name,
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
	case o.ModelContext < 0:
		return fmt.Errorf("model context: %d, expected 0 (unknown) or a positive number", o.ModelContext)
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
	if err := checkPlanned(ctx, s.db, runID, "", ""); err != nil {
		return nil, fmt.Errorf("overhead of run %q in %s: %w", runID, s.path, err)
	}
	out, err := s.overhead(ctx, runID)
	if err != nil {
		return nil, fmt.Errorf("overhead of run %q in %s: %w", runID, s.path, err)
	}
	return out, nil
}

// overhead reads the stored overhead of a run's arms, without checking
// that the run exists: none for a run that does not.
func (s *Store) overhead(ctx context.Context, runID string) ([]Overhead, error) {
	var heads []struct {
		Arm        string `db:"arm"`
		Model      string `db:"model"`
		NumCtx     int    `db:"num_ctx"`
		ModelCtx   int    `db:"model_context"`
		MeasuredAt string `db:"measured_at"`
		Baseline   int    `db:"baseline_tokens"`
		Prompt     int    `db:"prompt_tokens"`
		Tokens     int    `db:"tokens"`
		Sum        int    `db:"sum_of_tools"`
		Truncated  bool   `db:"truncated"`
	}
	if err := s.db.SelectContext(ctx, &heads, `SELECT o.arm, o.model, o.num_ctx, o.model_context, o.measured_at,
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
		out = append(out, Overhead{Arm: h.Arm, Model: h.Model, NumCtx: h.NumCtx, ModelContext: h.ModelCtx, MeasuredAt: t,
			BaselineTokens: h.Baseline, PromptTokens: h.Prompt, Tokens: h.Tokens, SumOfTools: h.Sum,
			Truncated: h.Truncated, Items: byArm[h.Arm]})
	}
	return out, nil
}
