package results

import "slices"

// Side is one side of a comparison: an arm of a run, with the run's
// attempts (AttemptMetrics) and a label that names it in the result.
type Side struct {
	Run      *Run
	Attempts []AttemptMetrics
	Arm      string
	Label    string
}

// CompareSides compares side b with the baseline a, task by task (tasks
// matched by id) and attempt by attempt (matched by task and index), the
// same computation as a report's comparison of an arm with the first: a
// and b may be two arms of one run or arms of two runs. Attempts are
// paired by index, so the McNemar view pairs equal seeds only when both
// runs have the same seed. The comparison is seeded with a's run seed.
func CompareSides(a, b Side) (Comparison, error) {
	byArm := map[string][]*group{}
	for i, sd := range []Side{a, b} {
		if !slices.ContainsFunc(sd.Run.Arms, func(x Arm) bool { return x.Name == sd.Arm }) {
			names := make([]string, len(sd.Run.Arms))
			for j, x := range sd.Run.Arms {
				names[j] = x.Name
			}
			return Comparison{}, &NoArmError{Arm: sd.Arm, Arms: names}
		}
		groups, err := groupAttempts(sd.Run, sd.Attempts)
		if err != nil {
			return Comparison{}, err
		}
		key := []string{"a", "b"}[i]
		for _, g := range groups {
			if g.arm == sd.Arm {
				byArm[key] = append(byArm[key], g)
			}
		}
	}
	c, err := compareArms("a", "b", byArm, uint64(a.Run.Seed))
	if err != nil {
		return Comparison{}, err
	}
	c.Baseline, c.Arm = a.Label, b.Label
	return c, nil
}
