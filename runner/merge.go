package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/benchhq/bench/results"
)

// ErrMergeConflict is matched (errors.Is) by the error of a merge refused
// because its inputs do not fit together: other plans, other weights,
// other tool overheads, or an attempt finished in two of them.
var ErrMergeConflict = errors.New("the pieces do not fit together")

// MergeInput is one file holding a piece of a run, usually a shard.
type MergeInput struct {
	// Path names the file in messages.
	Path  string
	Store *results.Store
}

// MergeOutcome is what Merge did.
type MergeOutcome struct {
	Run *results.Run
	// Finished counts the finished attempts copied; InfraErrors the
	// planned attempts that every piece tried and none finished
	// (infrastructure failures after their retries); Missing the planned
	// attempts no piece holds. Complete is true when Missing is empty:
	// the merged run is finished and its advantages are computed.
	Finished    int
	InfraErrors []results.AttemptKey
	Missing     []results.AttemptKey
	Complete    bool
}

// Merge puts the pieces of run runID ("" when each input holds one run
// only) back together in out. The pieces must have identical plans
// (model, options, API, seed, G, arms, tasks and their files: what only
// paces a run may differ), the same weights (runs.model_digest, unless
// allowMixed) and the same measured tool overhead; an attempt may be
// finished in one piece only. A finished attempt wins over an
// infrastructure failure of the same attempt in another piece. The merged
// run is one whole run: its advantages are computed over the merged
// groups, as the run in one piece would have them, when no attempt of
// the plan is missing; otherwise it is left interrupted, to be completed
// with bench run --resume.
func Merge(ctx context.Context, out *results.Store, runID string, ins []MergeInput, allowMixed bool) (*MergeOutcome, error) {
	if len(ins) == 0 {
		return nil, errors.New("merge: no input")
	}
	runs := make([]*results.Run, len(ins))
	for i, in := range ins {
		run, err := pieceRun(ctx, in, runID)
		if err != nil {
			return nil, err
		}
		if runID == "" {
			runID = run.ID
		}
		runs[i] = run
	}
	if err := fitTogether(ctx, ins, runs, allowMixed); err != nil {
		return nil, err
	}
	ref := runs[0]
	var plan storedPlan
	if err := json.Unmarshal([]byte(ref.Config), &plan); err != nil {
		return nil, fmt.Errorf("%s: stored plan of run %s: %w", ins[0].Path, ref.ID, err)
	}

	// Which attempt comes from which piece.
	type pick struct {
		piece  int
		id     int64
		status results.AttemptStatus
	}
	chosen := map[results.AttemptKey]pick{}
	var dups []string
	for i, in := range ins {
		ms, err := in.Store.AttemptMetrics(ctx, runID)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", in.Path, err)
		}
		for _, m := range ms {
			if m.Status == results.StatusCanceled {
				continue // not tried to its end: missing
			}
			prev, ok := chosen[m.Key]
			switch {
			case !ok, prev.status != results.StatusFinished && m.Status == results.StatusFinished:
				chosen[m.Key] = pick{piece: i, id: m.ID, status: m.Status}
			case prev.status == results.StatusFinished && m.Status == results.StatusFinished:
				dups = append(dups, fmt.Sprintf("%s (in %s and %s)", m.Key, ins[prev.piece].Path, in.Path))
			}
		}
	}
	if len(dups) > 0 {
		return nil, fmt.Errorf("%w: %d attempts are finished in two inputs, e.g. %s: give each shard's file once", ErrMergeConflict, len(dups), listSome(dups, 3))
	}

	res := &MergeOutcome{}
	pieces := make([]results.MergePiece, len(ins))
	for i, in := range ins {
		pieces[i].Store = in.Store
	}
	for _, arm := range ref.Arms {
		for _, task := range ref.Tasks {
			for idx := range ref.AttemptsPerTask {
				key := results.AttemptKey{Arm: arm.Name, Task: task.ID, Index: idx}
				p, ok := chosen[key]
				switch {
				case !ok:
					res.Missing = append(res.Missing, key)
					continue
				case p.status == results.StatusFinished:
					res.Finished++
				default:
					res.InfraErrors = append(res.InfraErrors, key)
				}
				pieces[p.piece].Attempts = append(pieces[p.piece].Attempts, p.id)
			}
		}
	}
	res.Complete = len(res.Missing) == 0
	patch := results.RunPatch{Status: results.RunFinished, CreatedAt: ref.CreatedAt}
	if !res.Complete {
		patch.Status = results.RunInterrupted
	}
	for _, r := range runs {
		if r.CreatedAt.Before(patch.CreatedAt) {
			patch.CreatedAt = r.CreatedAt
		}
		if r.FinishedAt != nil && (patch.FinishedAt == nil || r.FinishedAt.After(*patch.FinishedAt)) {
			t := *r.FinishedAt
			patch.FinishedAt = &t
		}
	}
	if patch.FinishedAt == nil {
		now := time.Now()
		patch.FinishedAt = &now
	}
	if err := out.MergeRun(ctx, runID, patch, pieces); err != nil {
		return nil, err
	}
	if res.Complete {
		if _, err := StoreAdvantages(ctx, out, runID, plan.Advantage); err != nil {
			return nil, err
		}
	}
	// The merged run's summary, which bench view reads.
	if err := out.SaveRunSummary(ctx, runID); err != nil {
		return nil, err
	}
	run, err := out.GetRun(ctx, runID)
	if err != nil {
		return nil, err
	}
	res.Run = run
	return res, nil
}

// pieceRun is the run of an input: runID, or its only run.
func pieceRun(ctx context.Context, in MergeInput, runID string) (*results.Run, error) {
	if runID != "" {
		run, err := in.Store.GetRun(ctx, runID)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", in.Path, err)
		}
		return run, nil
	}
	stats, err := in.Store.RunStats(ctx)
	if err != nil {
		return nil, err
	}
	switch len(stats) {
	case 0:
		return nil, fmt.Errorf("%w: %s holds no run", ErrMergeConflict, in.Path)
	case 1:
		return in.Store.GetRun(ctx, stats[0].ID)
	}
	ids := make([]string, len(stats))
	for i, s := range stats {
		ids[i] = s.ID
	}
	return nil, fmt.Errorf("%w: %s holds %d runs (%s): say which with --run", ErrMergeConflict, in.Path, len(stats), strings.Join(ids, ", "))
}

// fitTogether checks that the pieces are of one plan, run on one model.
func fitTogether(ctx context.Context, ins []MergeInput, runs []*results.Run, allowMixed bool) error {
	ref := runs[0]
	var want storedPlan
	if err := json.Unmarshal([]byte(ref.Config), &want); err != nil {
		return fmt.Errorf("%s: stored plan of run %s: %w", ins[0].Path, ref.ID, err)
	}
	refOver, err := ins[0].Store.Overhead(ctx, ref.ID)
	if err != nil {
		return fmt.Errorf("%s: %w", ins[0].Path, err)
	}
	count := shardCount(ref.Shard)
	for i, run := range runs[1:] {
		in := ins[i+1]
		conflict := func(format string, args ...any) error {
			return fmt.Errorf("%w: %s and %s: %s", ErrMergeConflict, ins[0].Path, in.Path, fmt.Sprintf(format, args...))
		}
		if run.ID != ref.ID {
			return conflict("they hold runs %s and %s: the shards of one run share its id (--name)", ref.ID, run.ID)
		}
		var got storedPlan
		if err := json.Unmarshal([]byte(run.Config), &got); err != nil {
			return fmt.Errorf("%s: stored plan of run %s: %w", in.Path, run.ID, err)
		}
		if err := samePlan(want, got); err != nil {
			return conflict("their plans differ: %v", err)
		}
		if !slices.Equal(armNames(ref), armNames(run)) || !slices.EqualFunc(ref.Arms, run.Arms, func(a, b results.Arm) bool { return a.Config == b.Config }) {
			return conflict("their arms differ")
		}
		if !slices.EqualFunc(ref.Tasks, run.Tasks, func(a, b results.TaskInfo) bool {
			// Folders may differ from machine to machine; contents may not.
			return a.ID == b.ID && a.Hash == b.Hash && a.Instruction == b.Instruction
		}) {
			return conflict("their tasks differ (ids, order, files or instructions)")
		}
		if c := shardCount(run.Shard); c != count {
			return conflict("one is %s, the other %s: shards of one run split it the same way", shardName(ref.Shard), shardName(run.Shard))
		}
		if ref.ModelDigest != "" && run.ModelDigest != "" && ref.ModelDigest != run.ModelDigest && !allowMixed {
			return conflict("they ran on other weights (%s, %s): pass --allow-mixed-models to merge anyway", ref.ModelDigest, run.ModelDigest)
		}
		over, err := in.Store.Overhead(ctx, run.ID)
		if err != nil {
			return fmt.Errorf("%s: %w", in.Path, err)
		}
		for _, o := range over {
			for _, r := range refOver {
				if o.Arm == r.Arm && (o.Tokens != r.Tokens || o.BaselineTokens != r.BaselineTokens || o.NumCtx != r.NumCtx) && !allowMixed {
					return conflict("arm %s's tools measured %d tokens in one and %d in the other: not the same model or template (pass --allow-mixed-models to merge anyway)", o.Arm, r.Tokens, o.Tokens)
				}
			}
		}
	}
	return nil
}

func armNames(r *results.Run) []string {
	var out []string
	for _, a := range r.Arms {
		out = append(out, a.Name)
	}
	return out
}

// shardCount is N of "I/N", 1 for a whole run.
func shardCount(s string) int {
	sh, err := ParseShard(s)
	if err != nil || sh.Whole() {
		return 1
	}
	return sh.Count
}

func listSome(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:n], ", ") + fmt.Sprintf(" and %d more", len(items)-n)
}
