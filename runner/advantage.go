package runner

import (
	"context"
	"fmt"

	"github.com/benchhq/bench/evaluator"
	"github.com/benchhq/bench/results"
)

// DefaultAdvantage is the advantage method a run stores unless told otherwise.
const DefaultAdvantage = evaluator.GRPO

// StoreAdvantages computes the group-relative advantage of every finished
// attempt of a run (results.Advantages) and stores it with the method's
// name. A group is the attempts of one task under one arm; attempts that
// ended in an infrastructure failure are left out of their group, never
// counted as 0. It returns the share of groups with zero variance (they
// teach nothing).
func StoreAdvantages(ctx context.Context, store *results.Store, runID string, method evaluator.Method) (float64, error) {
	run, err := store.GetRun(ctx, runID)
	if err != nil {
		return 0, fmt.Errorf("advantages of run %s: %w", runID, err)
	}
	attempts, err := store.AttemptMetrics(ctx, runID)
	if err != nil {
		return 0, fmt.Errorf("advantages of run %s: %w", runID, err)
	}
	adv, zeroVar, err := results.Advantages(run, attempts, method)
	if err != nil {
		return 0, fmt.Errorf("advantages of run %s: %w", runID, err)
	}
	if err := store.SetAdvantages(ctx, string(method), adv); err != nil {
		return 0, fmt.Errorf("store advantages of run %s: %w", runID, err)
	}
	return zeroVar, nil
}
