package results

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/benchhq/bench/agent"
)

// Token data is stored compactly (table turn_tokens, docs/schema.md): a
// turn's prompt as the count of its leading ids equal to the previous
// turn's prompt and completion, and the ids after them; ids as unsigned
// LEB128 varints (one to three bytes for the vocabularies in use), logprobs
// as little-endian float32. A conversation's prompts, which each repeat
// the whole conversation so far, are stored once.

const (
	qTurnTokens = `INSERT INTO turn_tokens (attempt_id, turn_idx, source, exact, problem,
	prompt_len, prompt_ref, prompt_shared, prompt_ids, completion_ids, logprobs, token_texts, sampling)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	qAddTokenPrompt = `INSERT INTO token_prompts (hash, ids) VALUES (?, ?) ON CONFLICT (hash) DO NOTHING`
	qTokenPrompt    = `SELECT id, ids FROM token_prompts WHERE hash = ?`
)

// tokenPrompt returns the id of a first prompt's ids in token_prompts,
// adding them the first time: the attempts of a group share one row.
// ok is false in the unlikely case that other ids have the same hash (the
// prompt is then stored with its turn).
func tokenPrompt(ctx context.Context, w *txWriter, ids []byte) (id int64, ok bool, err error) {
	sum := sha256.Sum256(ids)
	add, err := w.stmt(ctx, qAddTokenPrompt)
	if err != nil {
		return 0, false, err
	}
	if _, err := add.ExecContext(ctx, sum[:16], ids); err != nil {
		return 0, false, fmt.Errorf("add a first prompt: %w", err)
	}
	get, err := w.stmt(ctx, qTokenPrompt)
	if err != nil {
		return 0, false, err
	}
	var stored []byte
	if err := get.QueryRowContext(ctx, sum[:16]).Scan(&id, &stored); err != nil {
		return 0, false, fmt.Errorf("look up a first prompt: %w", err)
	}
	return id, bytes.Equal(stored, ids), nil
}

// saveTurnTokens stores the token data of an attempt's turns, for those
// that have some.
func saveTurnTokens(ctx context.Context, w *txWriter, attemptID int64, turns []agent.Turn) error {
	var prev []int32 // the previous turn's prompt and completion, when whole
	var stmt *sql.Stmt
	for _, u := range turns {
		t := u.Tokens
		if t == nil {
			prev = nil
			continue
		}
		if stmt == nil {
			var err error
			if stmt, err = w.stmt(ctx, qTurnTokens); err != nil {
				return fmt.Errorf("prepare turn tokens insert: %w", err)
			}
		}
		var promptLen sql.NullInt64
		shared := 0
		if t.PromptIDs != nil {
			promptLen = sql.NullInt64{Int64: int64(len(t.PromptIDs)), Valid: true}
			shared = commonPrefix(prev, t.PromptIDs)
		}
		var texts sql.NullString
		if t.Texts != nil {
			b, err := json.Marshal(t.Texts)
			if err != nil {
				return fmt.Errorf("turn %d: token texts: %w", u.Index, err)
			}
			texts = sql.NullString{String: string(b), Valid: true}
		}
		sampling := string(u.Sampling)
		if sampling == "" {
			sampling = "{}"
		}
		var promptIDs []byte
		var ref sql.NullInt64
		if t.PromptIDs != nil {
			promptIDs = encodeIDs(t.PromptIDs[shared:])
			if u.Index == 0 && len(t.PromptIDs) > 0 {
				// The first prompt: the same for every attempt of a group.
				id, ok, err := tokenPrompt(ctx, w, promptIDs)
				if err != nil {
					return fmt.Errorf("turn %d: %w", u.Index, err)
				}
				if ok {
					ref, promptIDs = sql.NullInt64{Int64: id, Valid: true}, nil
				}
			}
		}
		if _, err := stmt.ExecContext(ctx, attemptID, u.Index, t.Source, t.Exact, t.Problem,
			promptLen, ref, shared, promptIDs, encodeIDs(t.CompletionIDs), encodeLogprobs(t.Logprobs), texts, sampling); err != nil {
			return fmt.Errorf("insert turn tokens %d: %w", u.Index, err)
		}
		prev = nil
		if t.PromptIDs != nil && t.CompletionIDs != nil {
			prev = append(append(make([]int32, 0, len(t.PromptIDs)+len(t.CompletionIDs)), t.PromptIDs...), t.CompletionIDs...)
		}
	}
	return nil
}

// commonPrefix is the length of the longest common prefix of a and b.
func commonPrefix(a, b []int32) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// encodeIDs is ids as uvarints; nil for nil (none given), empty for none.
func encodeIDs(ids []int32) []byte {
	if ids == nil {
		return nil
	}
	b := make([]byte, 0, len(ids)*3)
	for _, id := range ids {
		b = binary.AppendUvarint(b, uint64(uint32(id)))
	}
	return b
}

// decodeIDs appends the ids of b to dst.
func decodeIDs(dst []int32, b []byte) ([]int32, error) {
	for len(b) > 0 {
		v, n := binary.Uvarint(b)
		if n <= 0 || v > math.MaxInt32 {
			return dst, errors.New("not a list of uvarint token ids")
		}
		dst = append(dst, int32(v))
		b = b[n:]
	}
	return dst, nil
}

// encodeLogprobs is lps as little-endian float32; nil for nil.
func encodeLogprobs(lps []float32) []byte {
	if lps == nil {
		return nil
	}
	b := make([]byte, 0, 4*len(lps))
	for _, v := range lps {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	return b
}

// decodeLogprobs appends the logprobs of b to dst.
func decodeLogprobs(dst []float32, b []byte) ([]float32, error) {
	if len(b)%4 != 0 {
		return dst, fmt.Errorf("%d bytes, not a list of float32 logprobs", len(b))
	}
	for i := 0; i < len(b); i += 4 {
		dst = append(dst, math.Float32frombits(binary.LittleEndian.Uint32(b[i:])))
	}
	return dst, nil
}

// TurnTokens reads the token data stored for an attempt's turns, in turn
// order, each turn's prompt whole again (its shared ids taken from the
// turn before). Turns stored without token data are absent.
func (s *Store) TurnTokens(ctx context.Context, attemptID int64) ([]StoredTurnTokens, error) {
	rows, err := s.db.QueryContext(ctx, qReadTurnTokens+` WHERE k.attempt_id = ? ORDER BY k.turn_idx`, attemptID)
	if err != nil {
		return nil, fmt.Errorf("read turn tokens of attempt %d: %w", attemptID, err)
	}
	defer rows.Close()
	var out []StoredTurnTokens
	var r tokenReader
	for rows.Next() {
		t, err := r.scan(rows)
		if err != nil {
			return nil, fmt.Errorf("attempt %d: %w", attemptID, err)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// StoredTurnTokens is one turn's token data as stored (turn_tokens).
type StoredTurnTokens struct {
	// AttemptID and Turn name the turn.
	AttemptID int64
	Turn      int
	agent.TurnTokens
	// Sampling is the sampling settings as JSON.
	Sampling json.RawMessage
}

const qReadTurnTokens = `SELECT k.attempt_id, k.turn_idx, k.source, k.exact, k.problem, k.prompt_len,
	p.ids, k.prompt_shared, k.prompt_ids, k.completion_ids, k.logprobs, k.token_texts, k.sampling
	FROM turn_tokens k LEFT JOIN token_prompts p ON p.id = k.prompt_ref`

// tokenReader decodes rows of qReadTurnTokens in turn order, keeping the
// turn before to make each prompt whole.
type tokenReader struct {
	attempt int64
	turn    int
	prev    []int32 // the previous turn's prompt and completion
}

func (r *tokenReader) scan(rows *sql.Rows, more ...any) (StoredTurnTokens, error) {
	var t StoredTurnTokens
	var exact bool
	var promptLen sql.NullInt64
	var shared int
	var first, prompt, completion, logprobs []byte
	var texts sql.NullString
	var sampling string
	dest := append([]any{&t.AttemptID, &t.Turn, &t.Source, &exact, &t.Problem, &promptLen, &first, &shared,
		&prompt, &completion, &logprobs, &texts, &sampling}, more...)
	if err := rows.Scan(dest...); err != nil {
		return t, err
	}
	if t.AttemptID != r.attempt || t.Turn != r.turn+1 {
		r.prev = nil // another attempt, or a turn without token data between
	}
	r.attempt, r.turn = t.AttemptID, t.Turn
	t.Exact, t.Sampling = exact, json.RawMessage(sampling)
	var err error
	if promptLen.Valid {
		if shared > len(r.prev) || shared < 0 {
			return t, fmt.Errorf("turn %d: column turn_tokens.prompt_shared: %d ids shared with a previous turn of %d", t.Turn, shared, len(r.prev))
		}
		t.PromptIDs = make([]int32, 0, promptLen.Int64)
		t.PromptIDs = append(t.PromptIDs, r.prev[:shared]...)
		if t.PromptIDs, err = decodeIDs(t.PromptIDs, first); err != nil {
			return t, fmt.Errorf("turn %d: column token_prompts.ids: %w", t.Turn, err)
		}
		if t.PromptIDs, err = decodeIDs(t.PromptIDs, prompt); err != nil {
			return t, fmt.Errorf("turn %d: column turn_tokens.prompt_ids: %w", t.Turn, err)
		}
		if int64(len(t.PromptIDs)) != promptLen.Int64 {
			return t, fmt.Errorf("turn %d: column turn_tokens.prompt_ids: %d ids, prompt_len says %d", t.Turn, len(t.PromptIDs), promptLen.Int64)
		}
	}
	if completion != nil || (exact && t.CompletionIDs == nil) {
		// An exact turn has a list, if empty: SQLite may give an empty
		// blob back as NULL.
		if t.CompletionIDs, err = decodeIDs(make([]int32, 0, len(completion)), completion); err != nil {
			return t, fmt.Errorf("turn %d: column turn_tokens.completion_ids: %w", t.Turn, err)
		}
	}
	if logprobs != nil {
		if t.Logprobs, err = decodeLogprobs(make([]float32, 0, len(logprobs)/4), logprobs); err != nil {
			return t, fmt.Errorf("turn %d: column turn_tokens.logprobs: %w", t.Turn, err)
		}
	}
	if texts.Valid {
		if err := json.Unmarshal([]byte(texts.String), &t.Texts); err != nil {
			return t, fmt.Errorf("turn %d: column turn_tokens.token_texts: %w", t.Turn, err)
		}
	}
	r.prev = nil
	if t.PromptIDs != nil && t.CompletionIDs != nil {
		r.prev = append(append(make([]int32, 0, len(t.PromptIDs)+len(t.CompletionIDs)), t.PromptIDs...), t.CompletionIDs...)
	}
	return t, nil
}

// TokenSummary is how much of a run's token data is exact.
type TokenSummary struct {
	// Turns counts the turns with token data; Exact those exact.
	Turns, Exact int
	// Problems counts the other turns by problem, numbers taken out.
	Problems map[string]int
}

// TokenSummary counts the turns of run runID with token data, the exact
// ones, and the others by problem: what bench run --tokens says at its end.
func (s *Store) TokenSummary(ctx context.Context, runID string) (TokenSummary, error) {
	out := TokenSummary{Problems: map[string]int{}}
	rows, err := s.db.QueryContext(ctx, `SELECT k.exact, k.problem, count(*) FROM turn_tokens k
		JOIN attempts a ON a.id = k.attempt_id WHERE a.run_id = ? GROUP BY k.exact, k.problem`, runID)
	if err != nil {
		return out, fmt.Errorf("token data of run %s: %w", runID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var exact bool
		var problem string
		var n int
		if err := rows.Scan(&exact, &problem, &n); err != nil {
			return out, fmt.Errorf("token data of run %s: %w", runID, err)
		}
		out.Turns += n
		if exact {
			out.Exact += n
		} else {
			out.Problems[generic(problem)] += n
		}
	}
	return out, rows.Err()
}
