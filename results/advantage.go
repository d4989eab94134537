package results

import (
	"github.com/benchhq/bench/evaluator"
)

// Advantages computes the group-relative advantage of every finished
// attempt of run with method. A group is the finished attempts of one task
// under one arm, in index order: an attempt that did not finish is left out
// of its group, never counted as reward 0. attempts are as
// Store.AttemptMetrics returns them; one of an arm or task that run does
// not list is an error.
//
// It returns the advantages by attempt id (the map SetAdvantages takes)
// and the share of groups with a finished attempt whose rewards are all
// equal: their advantages are 0 and they teach a trainer nothing (0 when
// no attempt finished).
func Advantages(run *Run, attempts []AttemptMetrics, method evaluator.Method) (adv map[int64]float64, zeroVarShare float64, err error) {
	groups, err := groupAttempts(run, attempts)
	if err != nil {
		return nil, 0, err
	}
	adv, err = groupAdvantages(groups, method)
	if err != nil {
		return nil, 0, err
	}
	var scored, zero int
	for _, g := range groups {
		if n, _ := g.counts(); n > 0 {
			scored++
		}
		if g.zeroVariance() {
			zero++
		}
	}
	if scored > 0 {
		zeroVarShare = float64(zero) / float64(scored)
	}
	return adv, zeroVarShare, nil
}

// groupAdvantages computes the advantage of every finished attempt of the
// groups, by attempt id: the groups are one batch (evaluator.GRPOBatch
// scales by the standard deviation over all of them).
func groupAdvantages(groups []*group, method evaluator.Method) (map[int64]float64, error) {
	finished := make([][]AttemptMetrics, len(groups))
	rewards := make([][]float64, len(groups))
	for i, g := range groups {
		finished[i] = g.finished()
		for _, a := range finished[i] {
			rewards[i] = append(rewards[i], float64(*a.Reward))
		}
	}
	adv, err := evaluator.Advantages(method, rewards)
	if err != nil {
		return nil, err
	}
	out := map[int64]float64{}
	for i, as := range finished {
		for j, a := range as {
			out[a.ID] = adv[i][j]
		}
	}
	return out, nil
}
