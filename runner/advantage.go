package runner

import (
	"context"
	"fmt"
	"sort"

	"github.com/benchhq/bench/evaluator"
	"github.com/benchhq/bench/results"
)

// DefaultAdvantage is the advantage method a run stores unless told otherwise.
const DefaultAdvantage = evaluator.GRPO

// StoreAdvantages computes the group-relative advantage of every finished
// attempt of a run and stores it with the method's name. A group is the
// attempts of one task under one arm; attempts that ended in an
// infrastructure failure are left out of their group, never counted as 0.
// It returns the share of groups with zero variance (they teach nothing).
func StoreAdvantages(ctx context.Context, store *results.Store, runID string, method evaluator.Method) (float64, error) {
	rows, err := store.Rewards(ctx, runID)
	if err != nil {
		return 0, fmt.Errorf("advantages of run %s: %w", runID, err)
	}
	type groupKey struct{ arm, task string }
	members := map[groupKey][]results.AttemptReward{}
	for _, r := range rows {
		if r.Status != results.StatusFinished || r.Reward == nil {
			continue
		}
		k := groupKey{r.Key.Arm, r.Key.Task}
		members[k] = append(members[k], r)
	}
	keys := make([]groupKey, 0, len(members))
	for k := range members {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].arm != keys[j].arm {
			return keys[i].arm < keys[j].arm
		}
		return keys[i].task < keys[j].task
	})
	groups := make([][]float64, len(keys))
	for i, k := range keys {
		for _, r := range members[k] {
			groups[i] = append(groups[i], float64(*r.Reward))
		}
	}
	adv, err := evaluator.Advantages(method, groups)
	if err != nil {
		return 0, fmt.Errorf("advantages of run %s: %w", runID, err)
	}
	out := map[int64]float64{}
	for i, k := range keys {
		for j, r := range members[k] {
			out[r.ID] = adv[i][j]
		}
	}
	if err := store.SetAdvantages(ctx, string(method), out); err != nil {
		return 0, fmt.Errorf("store advantages of run %s: %w", runID, err)
	}
	return evaluator.ZeroVarianceShare(groups), nil
}
