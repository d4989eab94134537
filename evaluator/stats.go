package evaluator

import (
	"math"
	"slices"
)

// Z95 is the standard normal quantile for a two-sided 95% interval.
const Z95 = 1.959963984540054

// Mean is the arithmetic mean of xs; NaN when xs is empty.
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

// percentileSorted returns the p-th percentile (p in [0, 100]) of sorted,
// non-empty values by linear interpolation between the closest ranks, as
// numpy.percentile does by default.
func percentileSorted(sorted []float64, p float64) float64 {
	h := float64(len(sorted)-1) * p / 100
	lo := int(math.Floor(h))
	if lo >= len(sorted)-1 {
		return sorted[len(sorted)-1]
	}
	frac := h - float64(lo)
	return sorted[lo] + frac*(sorted[lo+1]-sorted[lo])
}

// Summary describes a sample: its size, mean, extremes and percentiles
// (numpy's linear interpolation). Its JSON encoding is part of the report's
// documented structure (docs/export.md).
type Summary struct {
	N    int     `json:"n"`
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Min  float64 `json:"min"`
	Max  float64 `json:"max"`
}

// Summarize describes xs without modifying it. An empty xs gives the zero
// Summary (N == 0, every other field 0), so that it prints and encodes to
// JSON cleanly; a NaN anywhere in xs makes every field but N NaN.
func Summarize(xs []float64) Summary {
	if len(xs) == 0 {
		return Summary{}
	}
	if slices.ContainsFunc(xs, math.IsNaN) {
		nan := math.NaN()
		return Summary{N: len(xs), Mean: nan, P50: nan, P90: nan, P99: nan, Min: nan, Max: nan}
	}
	sorted := slices.Clone(xs)
	slices.Sort(sorted)
	return Summary{
		N:    len(xs),
		Mean: Mean(xs),
		P50:  percentileSorted(sorted, 50),
		P90:  percentileSorted(sorted, 90),
		P99:  percentileSorted(sorted, 99),
		Min:  sorted[0],
		Max:  sorted[len(sorted)-1],
	}
}

// Wilson returns the Wilson score interval for a proportion of successes
// out of n at the normal quantile z (Z95 for 95%). Unlike the normal
// approximation it stays inside [0, 1] and is sensible at 0 and n
// successes: the bound at an observed extreme is exactly 0 or 1.
//
// With n == 0 there is no information and the interval is [0, 1]. For
// inputs that make no sense (n < 0, successes outside [0, n], z <= 0 or
// NaN) both bounds are NaN.
func Wilson(successes, n int, z float64) (lo, hi float64) {
	if n < 0 || successes < 0 || successes > n || !(z > 0) || math.IsInf(z, 0) {
		return math.NaN(), math.NaN()
	}
	if n == 0 {
		return 0, 1
	}
	nf := float64(n)
	p := float64(successes) / nf
	z2 := z * z
	denom := 1 + z2/nf
	center := (p + z2/(2*nf)) / denom
	half := z / denom * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf))
	lo, hi = max(0, center-half), min(1, center+half)
	if successes == 0 {
		lo = 0
	}
	if successes == n {
		hi = 1
	}
	return lo, hi
}
