package results

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/benchhq/bench/agent"
)

// TokenFormat is a shape of the exact-token export (docs/export.md).
type TokenFormat string

// The shapes of the exact-token export.
const (
	// TokensTRL is one line per attempt in the shape TRL's GRPOTrainer
	// takes from a rollout_func: prompt_ids (the first turn's prompt),
	// completion_ids (everything after it, over every turn), logprobs
	// (one per completion id, 0 where the model did not sample) and
	// env_mask (1 where the model sampled the token, 0 for the prompts'
	// new parts: tool results and any text bench inserted).
	TokensTRL TokenFormat = "trl"
	// TokensVerifiers is one line per attempt with its turns, each with
	// its prompt_ids, completion_ids and completion_logprobs, as the
	// verifiers library records a trajectory's steps.
	TokensVerifiers TokenFormat = "verifiers"
)

// ParseTokenFormat reads a TokenFormat by name.
func ParseTokenFormat(s string) (TokenFormat, error) {
	switch f := TokenFormat(s); f {
	case TokensTRL, TokensVerifiers:
		return f, nil
	}
	return "", fmt.Errorf("token format %q: expected trl or verifiers", s)
}

// TokenExportOptions selects what an exact-token export writes: the
// attempts ExportOptions selects, in Format, of those whose every turn
// has exact token data.
type TokenExportOptions struct {
	ExportOptions
	// Format is the shape of the lines (TokensTRL by default).
	Format TokenFormat
	// ModelDigest, when set, keeps only attempts whose every turn was
	// served by weights of this identity (turns.model_digest): the rest
	// were sampled by other (stale) weights.
	ModelDigest string
}

// TokenExportStats says what an exact-token export wrote and what it left
// out.
type TokenExportStats struct {
	ExportStats
	// LeftOut counts the finished attempts left out, by reason: a turn
	// without exact ids (with the server's problem), a conversation whose
	// prompt was rendered anew so that it is no single sequence (trl),
	// other weights than ModelDigest. They are never tokenised again.
	LeftOut map[string]int
	// Tokens counts the ids written; Sampled those of them the model
	// sampled (mask 1).
	Tokens, Sampled int
}

// LeftOutTotal is the number of attempts left out, for every reason.
func (s *TokenExportStats) LeftOutTotal() int {
	n := 0
	for _, v := range s.LeftOut {
		n += v
	}
	return n
}

// ExportTokens writes, one JSON line per attempt, the exact token data of
// the finished attempts that opts selects (see TokenFormat), with reward
// and group advantage as Export gives them. An attempt without exact ids
// for every turn is left out and counted (TokenExportStats.LeftOut):
// stored messages are never tokenised again, since other ids than those
// sampled would corrupt a trainer's importance ratios silently.
func (s *Store) ExportTokens(ctx context.Context, w io.Writer, opts TokenExportOptions) (TokenExportStats, error) {
	stats := TokenExportStats{LeftOut: map[string]int{}}
	if opts.Format == "" {
		opts.Format = TokensTRL
	}
	if _, err := ParseTokenFormat(string(opts.Format)); err != nil {
		return stats, fmt.Errorf("export tokens: %w", err)
	}
	if err := opts.check(); err != nil {
		return stats, fmt.Errorf("export tokens: %w", err)
	}
	runs, err := s.exportRuns(ctx, opts.ExportOptions)
	if err != nil {
		return stats, fmt.Errorf("export tokens: %w", err)
	}
	st, err := s.db.PrepareContext(ctx, qGroupTokens)
	if err != nil {
		return stats, fmt.Errorf("export tokens: prepare: %w", err)
	}
	defer st.Close()
	methods := map[string]bool{}
	tw := &tokenWriter{w: w, stmt: st, opts: &opts, stats: &stats, methods: methods}
	for _, run := range runs {
		stats.Runs = append(stats.Runs, run.ID)
		if err := tw.run(ctx, s, run); err != nil {
			return stats, fmt.Errorf("export tokens of run %q from %s: %w", run.ID, s.path, err)
		}
	}
	stats.Methods = slices.Sorted(maps.Keys(methods))
	return stats, nil
}

// qGroupTokens reads the token data of a group's attempts (ids as a JSON
// array) with each turn's endpoint and digest, in attempt and turn order.
const qGroupTokens = `SELECT k.attempt_id, k.turn_idx, k.source, k.exact, k.problem, k.prompt_len,
	p.ids, k.prompt_shared, k.prompt_ids, k.completion_ids, k.logprobs, k.token_texts, k.sampling,
	coalesce(t.endpoint, ''), coalesce(t.model_digest, '')
	FROM turn_tokens k LEFT JOIN token_prompts p ON p.id = k.prompt_ref
	LEFT JOIN turns t ON t.attempt_id = k.attempt_id AND t.idx = k.turn_idx
	WHERE k.attempt_id IN (SELECT value FROM json_each(?))
	ORDER BY k.attempt_id, k.turn_idx`

// tokenWriter writes the lines of an exact-token export.
type tokenWriter struct {
	w       io.Writer
	stmt    *sql.Stmt
	opts    *TokenExportOptions
	stats   *TokenExportStats
	methods map[string]bool
	buf     []byte
}

// tokenTurn is one turn as the export reads it.
type tokenTurn struct {
	StoredTurnTokens
	endpoint, digest string
}

func (tw *tokenWriter) run(ctx context.Context, s *Store, run *Run) error {
	attempts, err := s.AttemptMetrics(ctx, run.ID)
	if err != nil {
		return fmt.Errorf("read attempts: %w", err)
	}
	for _, m := range attempts {
		if m.Status != StatusFinished && (len(tw.opts.Arms) == 0 || slices.Contains(tw.opts.Arms, m.Key.Arm)) {
			tw.stats.Unscored++
		}
	}
	groups, err := groupAttempts(run, attempts)
	if err != nil {
		return err
	}
	if method, ok := recomputeWith(tw.opts.Method, attempts); ok {
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
		tw.stats.Computed = append(tw.stats.Computed, run.ID)
	}
	for _, g := range groups {
		if len(tw.opts.Arms) > 0 && !slices.Contains(tw.opts.Arms, g.arm) {
			continue
		}
		if tw.opts.OnlySignal && g.zeroVariance() {
			continue
		}
		finished := g.finished()
		var kept []AttemptMetrics
		for _, a := range finished {
			if tw.opts.keep(float64(*a.Reward)) {
				kept = append(kept, a)
			}
		}
		if len(kept) == 0 {
			continue
		}
		turns, err := tw.read(ctx, kept)
		if err != nil {
			return fmt.Errorf("group %s/%s: %w", g.arm, g.task, err)
		}
		wrote := false
		for _, a := range kept {
			line := tokenLine{run: run, group: g, size: len(finished), a: a, turns: turns[a.ID]}
			if why := tw.leaveOut(&line); why != "" {
				tw.stats.LeftOut[why]++
				continue
			}
			tw.buf = line.append(tw.buf[:0], tw.opts.Format, tw.stats)
			if _, err := tw.w.Write(tw.buf); err != nil {
				return fmt.Errorf("write attempt %d: %w", a.ID, err)
			}
			tw.stats.Lines++
			tw.methods[a.AdvantageMethod] = true
			wrote = true
		}
		if wrote {
			tw.stats.Groups++
		}
	}
	return nil
}

// read reads the token data of attempts, by attempt id.
func (tw *tokenWriter) read(ctx context.Context, attempts []AttemptMetrics) (map[int64][]tokenTurn, error) {
	ids := []byte{'['}
	for i, a := range attempts {
		if i > 0 {
			ids = append(ids, ',')
		}
		ids = strconv.AppendInt(ids, a.ID, 10)
	}
	ids = append(ids, ']')
	rows, err := tw.stmt.QueryContext(ctx, string(ids))
	if err != nil {
		return nil, fmt.Errorf("read token data: %w", err)
	}
	defer rows.Close()
	out := make(map[int64][]tokenTurn, len(attempts))
	var r tokenReader
	for rows.Next() {
		var t tokenTurn
		t.StoredTurnTokens, err = r.scan(rows, &t.endpoint, &t.digest)
		if err != nil {
			return nil, fmt.Errorf("attempt %d: %w", t.AttemptID, err)
		}
		out[t.AttemptID] = append(out[t.AttemptID], t)
	}
	return out, rows.Err()
}

// tokenLine is one attempt to write.
type tokenLine struct {
	run   *Run
	group *group
	size  int
	a     AttemptMetrics
	turns []tokenTurn
}

// leaveOut says why an attempt cannot be written in the export's form,
// or "" when it can.
func (tw *tokenWriter) leaveOut(l *tokenLine) string {
	if len(l.turns) == 0 {
		return "no token data stored (run without --tokens)"
	}
	if len(l.turns) != l.a.Turns {
		return "a turn has no token data"
	}
	ts := make([]*agent.TurnTokens, len(l.turns))
	for i := range l.turns {
		if l.turns[i].Turn != i {
			return "a turn has no token data"
		}
		ts[i] = &l.turns[i].TurnTokens
	}
	if why := TokensProblem(ts, tw.opts.Format == TokensTRL); why != "" {
		return why
	}
	if tw.opts.ModelDigest != "" {
		for _, t := range l.turns {
			if t.digest != tw.opts.ModelDigest {
				return "a turn was served by other weights than --model-digest"
			}
		}
	}
	return ""
}

// TokensProblem says why an attempt's turns (each turn's token data, nil
// for none) give no exact token data, or "" when they do: a turn without
// data, or not exact (with the server's problem, numbers taken out), or a
// logprob that is not a finite number; and, when one sequence is wanted
// (TRL's form), a turn whose prompt does not extend the turn before's
// prompt and completion (the chat template rendered earlier turns anew).
// The reasons are what an export counts attempts left out by.
func TokensProblem(turns []*agent.TurnTokens, sequence bool) string {
	if len(turns) == 0 {
		return "no token data stored (run without --tokens)"
	}
	for _, t := range turns {
		if t == nil {
			return "a turn has no token data"
		}
		if !t.Exact {
			return "a turn's tokens are not exact: " + generic(t.Problem)
		}
		for _, v := range t.Logprobs {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return "a logprob is not a finite number"
			}
		}
	}
	if sequence {
		for i := 1; i < len(turns); i++ {
			prev, t := turns[i-1], turns[i]
			n := len(prev.PromptIDs) + len(prev.CompletionIDs)
			if len(t.PromptIDs) < n || !slices.Equal(t.PromptIDs[:len(prev.PromptIDs)], prev.PromptIDs) ||
				!slices.Equal(t.PromptIDs[len(prev.PromptIDs):n], prev.CompletionIDs) {
				return "a turn's prompt does not extend the conversation before it (the chat template renders earlier turns anew): no single sequence for trl; the verifiers form has it"
			}
		}
	}
	return ""
}

// Rollout is one attempt's token data in the shape TRL's GRPOTrainer
// takes from a rollout_func: the first turn's prompt, then everything
// after it as one completion, with a logprob (0 where the model did not
// sample) and a mask (1 where it did) per completion id.
type Rollout struct {
	PromptIDs     []int32   `json:"prompt_ids"`
	CompletionIDs []int32   `json:"completion_ids"`
	Logprobs      []float32 `json:"logprobs"`
	EnvMask       []int8    `json:"env_mask"`
}

// RolloutOf makes the Rollout of an attempt's turns, or says why it
// cannot (TokensProblem): ids are never made up by tokenising again.
func RolloutOf(turns []*agent.TurnTokens) (*Rollout, string) {
	if why := TokensProblem(turns, true); why != "" {
		return nil, why
	}
	// The completion is the last turn's prompt and completion after the
	// first prompt: its length is known, and each slice is made once.
	last := turns[len(turns)-1]
	n := len(last.PromptIDs) + len(last.CompletionIDs) - len(turns[0].PromptIDs)
	r := &Rollout{PromptIDs: turns[0].PromptIDs, CompletionIDs: make([]int32, 0, n), Logprobs: make([]float32, 0, n), EnvMask: make([]int8, 0, n)}
	for i, t := range turns {
		if i > 0 {
			prev := turns[i-1]
			env := t.PromptIDs[len(prev.PromptIDs)+len(prev.CompletionIDs):]
			r.CompletionIDs = append(r.CompletionIDs, env...)
			for range env {
				r.Logprobs = append(r.Logprobs, 0)
				r.EnvMask = append(r.EnvMask, 0)
			}
		}
		r.CompletionIDs = append(r.CompletionIDs, t.CompletionIDs...)
		r.Logprobs = append(r.Logprobs, t.Logprobs...)
		for range t.CompletionIDs {
			r.EnvMask = append(r.EnvMask, 1)
		}
	}
	return r, ""
}

// generic is a problem's text with its numbers taken out, so that the
// same problem counts once however many tokens it was about.
func generic(problem string) string {
	var b strings.Builder
	digits := false
	for _, r := range problem {
		if r >= '0' && r <= '9' {
			if !digits {
				b.WriteByte('N')
			}
			digits = true
			continue
		}
		digits = false
		b.WriteRune(r)
	}
	return b.String()
}

// append writes the line in format f, counting its tokens.
func (l *tokenLine) append(b []byte, f TokenFormat, stats *TokenExportStats) []byte {
	a := l.a
	b = append(b, `{"run_id":`...)
	b = appendString(b, l.run.ID)
	b = append(b, `,"arm":`...)
	b = appendString(b, a.Key.Arm)
	b = append(b, `,"task_id":`...)
	b = appendString(b, a.Key.Task)
	b = append(b, `,"index":`...)
	b = strconv.AppendInt(b, int64(a.Key.Index), 10)
	b = append(b, `,"attempt_id":`...)
	b = strconv.AppendInt(b, a.ID, 10)
	b = append(b, `,"group_id":`...)
	b = appendString(b, l.run.ID+"/"+l.group.arm+"/"+l.group.task)
	b = append(b, `,"group_size":`...)
	b = strconv.AppendInt(b, int64(l.size), 10)
	b = append(b, `,"model":`...)
	b = appendString(b, l.run.Model)
	b = append(b, `,"sampling":`...)
	b = append(b, l.turns[0].Sampling...)
	b = append(b, `,"reward":`...)
	b = strconv.AppendFloat(b, float64(*a.Reward), 'g', -1, 64)
	b = append(b, `,"advantage":`...)
	adv := 0.0
	if a.Advantage != nil {
		adv = *a.Advantage
	}
	b = strconv.AppendFloat(b, adv, 'g', -1, 64)
	b = append(b, `,"advantage_method":`...)
	b = appendString(b, a.AdvantageMethod)
	b = append(b, `,"model_digests":[`...)
	for i, t := range l.turns {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, t.digest)
	}
	b = append(b, ']')
	if f == TokensVerifiers {
		b = append(b, `,"turns":[`...)
		for i, t := range l.turns {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"prompt_ids":`...)
			b = appendIDs(b, t.PromptIDs)
			b = append(b, `,"completion_ids":`...)
			b = appendIDs(b, t.CompletionIDs)
			b = append(b, `,"completion_logprobs":`...)
			b = appendLogprobs(b, t.Logprobs)
			b = append(b, `,"endpoint":`...)
			b = appendString(b, t.endpoint)
			b = append(b, `,"model_digest":`...)
			b = appendString(b, t.digest)
			b = append(b, '}')
			stats.Tokens += len(t.PromptIDs) + len(t.CompletionIDs)
			stats.Sampled += len(t.CompletionIDs)
		}
		return append(b, "]}\n"...)
	}
	// trl: RolloutOf's sequence, as bench serve streams it (leaveOut
	// checked that there is one).
	ts := make([]*agent.TurnTokens, len(l.turns))
	for i := range l.turns {
		ts[i] = &l.turns[i].TurnTokens
	}
	r, _ := RolloutOf(ts)
	b = append(b, `,"prompt_ids":`...)
	b = appendIDs(b, r.PromptIDs)
	b = append(b, `,"completion_ids":`...)
	b = appendIDs(b, r.CompletionIDs)
	b = append(b, `,"logprobs":`...)
	b = appendLogprobs(b, r.Logprobs)
	b = append(b, `,"env_mask":[`...)
	for i, m := range r.EnvMask {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '0'+byte(m))
		stats.Sampled += int(m)
	}
	stats.Tokens += len(r.PromptIDs) + len(r.CompletionIDs)
	return append(b, "]}\n"...)
}

// appendIDs writes ids as a JSON array.
func appendIDs(b []byte, ids []int32) []byte {
	b = append(b, '[')
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(id), 10)
	}
	return append(b, ']')
}

// appendLogprobs writes logprobs as a JSON array, each the shortest text
// that reads back as the same float32.
func appendLogprobs(b []byte, lps []float32) []byte {
	b = append(b, '[')
	for i, v := range lps {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendFloat(b, float64(v), 'g', -1, 32)
	}
	return append(b, ']')
}
