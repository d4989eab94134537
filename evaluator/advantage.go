package evaluator

import (
	"fmt"
	"math"
	"strings"
)

// Method names a way to turn the rewards of a group into advantages. Its
// value is the name stored in the database and accepted on the command line.
type Method string

// The advantage methods. A group is the attempts of one task under one arm.
const (
	// GRPO is (r - mean) / (std + GRPOEpsilon), with mean and std over the
	// group and std Bessel-corrected (n-1 denominator), as TRL's GRPOTrainer
	// computes it with scale_rewards="group".
	GRPO Method = "grpo"
	// GRPOBatch is like GRPO, but std is taken over every reward of the
	// batch (all groups given together); the mean is still the group's.
	// This is TRL's scale_rewards="batch".
	GRPOBatch Method = "grpo-batch"
	// DrGRPO is r - mean, with no std scaling (Dr. GRPO; TRL's
	// scale_rewards="none").
	DrGRPO Method = "drgrpo"
	// RLOO is r_i minus the mean of the other n-1 rewards of its group
	// (REINFORCE leave-one-out).
	RLOO Method = "rloo"
)

// GRPOEpsilon is added to the std before dividing, as TRL does, so that a
// group whose rewards are all equal gets advantages 0 rather than NaN.
const GRPOEpsilon = 1e-4

// Methods returns every advantage method, in a stable order.
func Methods() []Method {
	return []Method{GRPO, GRPOBatch, DrGRPO, RLOO}
}

// ParseMethod returns the method named s; the error lists the valid names.
func ParseMethod(s string) (Method, error) {
	for _, m := range Methods() {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("unknown advantage method %q (want one of %s)", s, methodNames())
}

// UnmarshalText parses a method name, so that a Method can be read from a
// TOML or JSON configuration field.
func (m *Method) UnmarshalText(text []byte) error {
	parsed, err := ParseMethod(string(text))
	if err != nil {
		return err
	}
	*m = parsed
	return nil
}

func methodNames() string {
	ms := Methods()
	names := make([]string, len(ms))
	for i, m := range ms {
		names[i] = string(m)
	}
	return strings.Join(names, ", ")
}

// Advantages computes the advantage of every reward, group by group. The
// result has the shape of groups: out[g][i] is the advantage of groups[g][i].
//
// Edge cases, the same for every method:
//   - a group of size 0 is allowed and gives an empty slice;
//   - a group of one reward gets advantage 0 (torch's std of one element is
//     NaN; TRL special-cases it to 0, and so does RLOO's empty "others");
//   - a group whose rewards are all equal gets advantages exactly 0 (TRL
//     gets 0 up to rounding: (r - mean) / (0 + 1e-4)).
//
// A reward that is NaN or infinite is an error naming its group and index.
func Advantages(m Method, groups [][]float64) ([][]float64, error) {
	if _, err := ParseMethod(string(m)); err != nil {
		return nil, err
	}
	for g, rs := range groups {
		for i, r := range rs {
			if math.IsNaN(r) || math.IsInf(r, 0) {
				return nil, fmt.Errorf("advantages: group %d, reward %d: %v is not a finite number", g, i, r)
			}
		}
	}
	var batchStd float64
	if m == GRPOBatch {
		var all []float64
		for _, rs := range groups {
			all = append(all, rs...)
		}
		batchStd = sampleStd(all)
	}
	out := make([][]float64, len(groups))
	for g, rs := range groups {
		adv := make([]float64, len(rs))
		out[g] = adv
		if len(rs) < 2 || allEqual(rs) {
			continue
		}
		mean := Mean(rs)
		switch m {
		case GRPO:
			std := sampleStd(rs)
			for i, r := range rs {
				adv[i] = (r - mean) / (std + GRPOEpsilon)
			}
		case GRPOBatch:
			for i, r := range rs {
				adv[i] = (r - mean) / (batchStd + GRPOEpsilon)
			}
		case DrGRPO:
			for i, r := range rs {
				adv[i] = r - mean
			}
		case RLOO:
			n := float64(len(rs))
			var sum float64
			for _, r := range rs {
				sum += r
			}
			for i, r := range rs {
				adv[i] = r - (sum-r)/(n-1)
			}
		}
	}
	return out, nil
}

// ZeroVarianceShare returns the share of non-empty groups whose rewards are
// all equal (all pass, all fail, or a group of one): their advantages are 0
// and they teach a trainer nothing. It returns 0 when no group has rewards.
func ZeroVarianceShare(groups [][]float64) float64 {
	var nonEmpty, zero int
	for _, rs := range groups {
		if len(rs) == 0 {
			continue
		}
		nonEmpty++
		if allEqual(rs) {
			zero++
		}
	}
	if nonEmpty == 0 {
		return 0
	}
	return float64(zero) / float64(nonEmpty)
}

func allEqual(rs []float64) bool {
	if len(rs) == 0 {
		return true
	}
	for _, r := range rs[1:] {
		if r != rs[0] {
			return false
		}
	}
	return true
}

// sampleStd is the Bessel-corrected standard deviation (n-1 denominator),
// torch.std's default; 0 for fewer than two values.
func sampleStd(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	mean := Mean(xs)
	var ss float64
	for _, x := range xs {
		d := x - mean
		ss += d * d
	}
	return math.Sqrt(ss / float64(len(xs)-1))
}
