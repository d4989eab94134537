package results

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
)

// MergePiece is one store holding part of a run (a shard), and which of
// its attempts to take.
type MergePiece struct {
	Store *Store
	// Attempts are the row ids, in Store, of the attempts to copy.
	Attempts []int64
}

// RunPatch is what MergeRun changes in the run's row as it copies it.
type RunPatch struct {
	// Shard is the merged run's runs.shard ("" for a whole run).
	Shard string
	// Status, CreatedAt and FinishedAt replace the run's own.
	Status     string
	CreatedAt  time.Time
	FinishedAt *time.Time
}

// tableKind says how MergeRun copies a table.
type tableKind int

const (
	tableRun     tableKind = iota // runs: the run's row, patched
	tablePlan                     // has run_id: the run's rows, from the first piece
	tableAttempt                  // attempts: the chosen rows, under new ids
	tableChild                    // has attempt_id: the chosen attempts' rows
	tableShared                   // tool_lists: rows the attempts point at, shared, copied by content
)

type table struct {
	name string
	cols []string
	kind tableKind
}

// mergeTables lists the store's tables and how each is copied. Every
// table of the schema must be one of the kinds above: a table that holds
// neither a run_id nor an attempt_id column is an error, so that a new
// migration cannot be silently left out of a merge.
func (s *Store) mergeTables(ctx context.Context) ([]table, error) {
	var names []string
	if err := s.db.SelectContext(ctx, &names, `SELECT name FROM sqlite_schema
		WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY rowid`); err != nil {
		return nil, fmt.Errorf("list tables of %s: %w", s.path, err)
	}
	var out []table
	for _, n := range names {
		var cols []string
		if err := s.db.SelectContext(ctx, &cols, `SELECT name FROM pragma_table_info(?) ORDER BY cid`, n); err != nil {
			return nil, fmt.Errorf("columns of %s in %s: %w", n, s.path, err)
		}
		t := table{name: n, cols: cols}
		switch {
		case n == "runs":
			t.kind = tableRun
		case n == "attempts":
			t.kind = tableAttempt
		case n == "tool_lists" || n == "token_prompts":
			t.kind = tableShared
		case slices.Contains(cols, "attempt_id"):
			t.kind = tableChild
		case slices.Contains(cols, "run_id"):
			t.kind = tablePlan
		default:
			return nil, fmt.Errorf("table %s has neither run_id nor attempt_id: merging does not know how to copy it (results/merge.go)", n)
		}
		out = append(out, t)
	}
	return out, nil
}

// MergeRun writes run runID into s, which must not hold it yet, from the
// pieces, in one transaction: the run's row (patched) and its plan rows
// (arms, tasks, tool overhead: every table with a run_id) from the first
// piece, and from each piece the attempts it lists, each under a new id,
// with its rows of every table that has an attempt_id (turns, messages,
// tool calls, test results, servers). The pieces must be at this
// package's schema version, as s is.
func (s *Store) MergeRun(ctx context.Context, runID string, patch RunPatch, pieces []MergePiece) error {
	if len(pieces) == 0 {
		return errors.New("merge: no piece")
	}
	if err := validRunStatus(patch.Status); err != nil {
		return fmt.Errorf("merge run %q: %w", runID, err)
	}
	tables, err := s.mergeTables(ctx)
	if err != nil {
		return err
	}
	err = s.write(ctx, func(tx *sqlx.Tx) error {
		// Rows of one table may point at rows of another copied later.
		if _, err := tx.ExecContext(ctx, `PRAGMA defer_foreign_keys = ON`); err != nil {
			return err
		}
		if err := checkPlanned(ctx, tx, runID, "", ""); !errors.Is(err, ErrNoRun) {
			if err == nil {
				return fmt.Errorf("%s already holds run %s: merge into a new file", s.path, runID)
			}
			return err
		}
		var next int64
		if err := tx.GetContext(ctx, &next, `SELECT coalesce(max(seq), 0) FROM sqlite_sequence WHERE name = 'attempts'`); err != nil {
			return err
		}
		for _, t := range tables {
			if t.kind != tableRun && t.kind != tablePlan {
				continue
			}
			if err := copyRows(ctx, tx, pieces[0].Store, t, runID, nil, func(row []any) {
				if t.kind == tableRun {
					patch.apply(t.cols, row)
				}
			}); err != nil {
				return err
			}
		}
		for _, p := range pieces {
			ids := make(map[int64]int64, len(p.Attempts))
			for _, id := range p.Attempts {
				next++
				ids[id] = next
			}
			lists, err := copyToolLists(ctx, tx, p.Store, runID)
			if err != nil {
				return err
			}
			prompts, err := copyTokenPrompts(ctx, tx, p.Store, runID)
			if err != nil {
				return err
			}
			for _, t := range tables {
				if t.kind != tableAttempt && t.kind != tableChild {
					continue
				}
				var edit func([]any)
				if col := slices.Index(t.cols, "tool_list_id"); t.kind == tableAttempt && col >= 0 {
					edit = func(row []any) {
						if old, ok := row[col].(int64); ok {
							row[col] = lists[old]
						}
					}
				}
				if col := slices.Index(t.cols, "prompt_ref"); t.name == "turn_tokens" && col >= 0 {
					edit = func(row []any) {
						if old, ok := row[col].(int64); ok {
							row[col] = prompts[old]
						}
					}
				}
				if err := copyRows(ctx, tx, p.Store, t, runID, ids, edit); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("merge run %s into %s: %w", runID, s.path, err)
	}
	return nil
}

// copyToolLists copies the tool lists the attempts of run runID in src
// point at into tx, each once (a list the destination holds already is
// reused), and maps their ids in src to their ids in tx.
func copyToolLists(ctx context.Context, tx *sqlx.Tx, src *Store, runID string) (map[int64]int64, error) {
	var rows []struct {
		ID    int64  `db:"id"`
		Tools string `db:"tools_json"`
	}
	if err := src.db.SelectContext(ctx, &rows, `SELECT l.id, l.tools_json FROM tool_lists l
		WHERE l.id IN (SELECT tool_list_id FROM attempts WHERE run_id = ?)`, runID); err != nil {
		return nil, fmt.Errorf("read tool lists from %s: %w", src.path, err)
	}
	out := make(map[int64]int64, len(rows))
	for _, r := range rows {
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO tool_lists (tools_json) VALUES (?)`, r.Tools); err != nil {
			return nil, fmt.Errorf("write a tool list from %s: %w", src.path, err)
		}
		var id int64
		if err := tx.GetContext(ctx, &id, `SELECT id FROM tool_lists WHERE tools_json = ?`, r.Tools); err != nil {
			return nil, fmt.Errorf("write a tool list from %s: %w", src.path, err)
		}
		out[r.ID] = id
	}
	return out, nil
}

// copyTokenPrompts copies the first prompts (token_prompts) the turns of
// run runID in src point at into tx, each once (one the destination holds
// already is reused), and maps their ids in src to their ids in tx.
func copyTokenPrompts(ctx context.Context, tx *sqlx.Tx, src *Store, runID string) (map[int64]int64, error) {
	var rows []struct {
		ID   int64  `db:"id"`
		Hash []byte `db:"hash"`
		IDs  []byte `db:"ids"`
	}
	if err := src.db.SelectContext(ctx, &rows, `SELECT p.id, p.hash, p.ids FROM token_prompts p
		WHERE p.id IN (SELECT k.prompt_ref FROM turn_tokens k JOIN attempts a ON a.id = k.attempt_id WHERE a.run_id = ?)`, runID); err != nil {
		return nil, fmt.Errorf("read first prompts from %s: %w", src.path, err)
	}
	out := make(map[int64]int64, len(rows))
	for _, r := range rows {
		if _, err := tx.ExecContext(ctx, `INSERT INTO token_prompts (hash, ids) VALUES (?, ?) ON CONFLICT (hash) DO NOTHING`, r.Hash, r.IDs); err != nil {
			return nil, fmt.Errorf("write a first prompt from %s: %w", src.path, err)
		}
		var id int64
		var ids []byte
		if err := tx.QueryRowContext(ctx, `SELECT id, ids FROM token_prompts WHERE hash = ?`, r.Hash).Scan(&id, &ids); err != nil {
			return nil, fmt.Errorf("write a first prompt from %s: %w", src.path, err)
		}
		if !bytes.Equal(ids, r.IDs) {
			return nil, fmt.Errorf("first prompt %d of %s: other ids with the same hash are in the destination", r.ID, src.path)
		}
		out[r.ID] = id
	}
	return out, nil
}

// apply sets the patched columns of a runs row.
func (p RunPatch) apply(cols []string, row []any) {
	for i, c := range cols {
		switch c {
		case "shard":
			row[i] = p.Shard
		case "status":
			row[i] = p.Status
		case "created_at":
			row[i] = formatTime(p.CreatedAt)
		case "finished_at":
			row[i] = formatTimePtr(p.FinishedAt)
		}
	}
}

// copyRows copies the rows of table t that belong to run runID from src
// into tx. For attempts and their children, ids maps the attempts to take
// to their new ids: other rows are skipped, and the id (or attempt_id)
// column is rewritten. edit, when set, may change a row before it is written.
func copyRows(ctx context.Context, tx *sqlx.Tx, src *Store, t table, runID string, ids map[int64]int64, edit func([]any)) error {
	quoted := make([]string, len(t.cols))
	for i, c := range t.cols {
		quoted[i] = `"` + strings.ReplaceAll(c, `"`, `""`) + `"`
	}
	list := strings.Join(quoted, ", ")
	key := "attempt_id"
	var query string
	switch t.kind {
	case tableRun:
		query = `SELECT ` + list + ` FROM runs WHERE id = ?`
	case tablePlan:
		query = `SELECT ` + list + ` FROM "` + t.name + `" WHERE run_id = ?`
	case tableAttempt:
		key = "id"
		query = `SELECT ` + list + ` FROM attempts WHERE run_id = ?`
	case tableChild:
		cols := make([]string, len(quoted))
		for i, q := range quoted {
			cols[i] = "c." + q
		}
		query = `SELECT ` + strings.Join(cols, ", ") + ` FROM "` + t.name + `" c JOIN attempts a ON a.id = c.attempt_id WHERE a.run_id = ?`
	}
	keyCol := slices.Index(t.cols, key)
	rows, err := src.db.QueryContext(ctx, query, runID)
	if err != nil {
		return fmt.Errorf("read %s from %s: %w", t.name, src.path, err)
	}
	defer rows.Close()
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO "`+t.name+`" (`+list+`) VALUES (`+strings.TrimSuffix(strings.Repeat("?, ", len(t.cols)), ", ")+`)`)
	if err != nil {
		return fmt.Errorf("prepare %s insert: %w", t.name, err)
	}
	defer stmt.Close()
	vals := make([]any, len(t.cols))
	ptrs := make([]any, len(t.cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	n := 0
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return fmt.Errorf("read %s from %s: %w", t.name, src.path, err)
		}
		if ids != nil {
			old, ok := vals[keyCol].(int64)
			if !ok {
				return fmt.Errorf("read %s from %s: %s is %T, expected an integer", t.name, src.path, key, vals[keyCol])
			}
			id, take := ids[old]
			if !take {
				continue
			}
			vals[keyCol] = id
		}
		if edit != nil {
			edit(vals)
		}
		if _, err := stmt.ExecContext(ctx, vals...); err != nil {
			return fmt.Errorf("write %s row from %s: %w", t.name, src.path, err)
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read %s from %s: %w", t.name, src.path, err)
	}
	if t.kind == tableRun && n != 1 {
		return fmt.Errorf("%s holds no run %s: %w", src.path, runID, sql.ErrNoRows)
	}
	return nil
}
