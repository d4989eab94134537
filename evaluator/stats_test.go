package evaluator

import (
	"encoding/json"
	"math"
	"slices"
	"testing"
)

func TestStatMean(t *testing.T) {
	tests := []struct {
		xs   []float64
		want float64
	}{
		{nil, math.NaN()},
		{[]float64{3}, 3},
		{[]float64{1, 2, 3, 4}, 2.5},
		{[]float64{-1, 1}, 0},
	}
	for _, tt := range tests {
		if got := Mean(tt.xs); !closeTo(got, tt.want, 1e-15) {
			t.Errorf("Mean(%v) = %g, want %g", tt.xs, got, tt.want)
		}
	}
}

func TestPercentileSorted(t *testing.T) {
	// Expected values from numpy.percentile (linear interpolation).
	xs := []float64{15, 20, 35, 40, 50}
	tests := []struct {
		xs   []float64
		p    float64
		want float64
	}{
		{xs, 0, 15},
		{xs, 100, 50},
		{xs, 50, 35},
		{xs, 40, 29},   // h = 1.6: 20 + .6·15
		{xs, 90, 46},   // h = 3.6: 40 + .6·10
		{xs, 25, 20},   // h = 1
		{xs, 99, 49.6}, // h = 3.96
		{[]float64{1, 2, 3, 4}, 50, 2.5},
		{[]float64{4, 1, 3, 2}, 50, 2.5}, // sorted first, as Summarize does
		{[]float64{7}, 90, 7},
		{[]float64{1, 2}, 90, 1.9},
	}
	for _, tt := range tests {
		sorted := slices.Clone(tt.xs)
		slices.Sort(sorted)
		if got := percentileSorted(sorted, tt.p); !closeTo(got, tt.want, 1e-12) {
			t.Errorf("percentile of %v at %g = %.15g, want %g", tt.xs, tt.p, got, tt.want)
		}
	}
}

func TestSummary(t *testing.T) {
	xs := make([]float64, 0, 101)
	for i := 100; i >= 0; i-- { // 100, 99, ..., 0: unsorted on purpose
		xs = append(xs, float64(i))
	}
	got := Summarize(xs)
	want := Summary{N: 101, Mean: 50, P50: 50, P90: 90, P99: 99, Min: 0, Max: 100}
	if got != want {
		t.Errorf("Summarize(0..100) = %+v, want %+v", got, want)
	}
	if xs[0] != 100 {
		t.Error("Summarize modified its input")
	}

	if got := Summarize(nil); got != (Summary{}) {
		t.Errorf("Summarize(nil) = %+v, want the zero Summary", got)
	}
	if got := Summarize([]float64{2}); got != (Summary{N: 1, Mean: 2, P50: 2, P90: 2, P99: 2, Min: 2, Max: 2}) {
		t.Errorf("Summarize([2]) = %+v", got)
	}
	nan := Summarize([]float64{1, math.NaN()})
	if nan.N != 2 || !math.IsNaN(nan.Mean) || !math.IsNaN(nan.P50) || !math.IsNaN(nan.Min) || !math.IsNaN(nan.Max) {
		t.Errorf("Summarize with a NaN = %+v, want N 2 and NaN fields", nan)
	}
}

// TestSummaryJSON pins Summary's JSON encoding: the report's distributions
// (results.Dist) are Summaries, and docs/export.md documents these keys.
func TestSummaryJSON(t *testing.T) {
	b, err := json.Marshal(Summary{N: 3, Mean: 2.5, P50: 2, P90: 3.8, P99: 3.98, Min: 1, Max: 4})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"n":3,"mean":2.5,"p50":2,"p90":3.8,"p99":3.98,"min":1,"max":4}`; string(b) != want {
		t.Errorf("Summary encodes to %s, want %s", b, want)
	}
}

func TestWilson(t *testing.T) {
	tests := []struct {
		name           string
		successes, n   int
		wantLo, wantHi float64
		tol            float64
	}{
		// The roots of (p̂-p)² = z²·p(1-p)/n, solved in 40-digit decimal
		// arithmetic; 8/10 is the textbook [0.4902, 0.9433].
		{"8/10", 8, 10, 0.490162471537, 0.943317848546, 1e-11},
		{"1/2", 1, 2, 0.094531205734, 0.905468794266, 1e-11},
		{"3/7", 3, 7, 0.158219855251, 0.749541635472, 1e-11},
		{"50/100", 50, 100, 0.403831530366, 0.596168469634, 1e-11},
		{"0/10", 0, 10, 0, 0.277532799863, 1e-11},
		{"10/10", 10, 10, 0.722467200137, 1, 1e-11},
		{"no data", 0, 0, 0, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lo, hi := Wilson(tt.successes, tt.n, Z95)
			if !closeTo(lo, tt.wantLo, tt.tol) || !closeTo(hi, tt.wantHi, tt.tol) {
				t.Errorf("Wilson(%d, %d) = [%.10f, %.10f], want [%.10f, %.10f]", tt.successes, tt.n, lo, hi, tt.wantLo, tt.wantHi)
			}
		})
	}
	for _, bad := range []struct {
		s, n int
		z    float64
	}{{-1, 3, Z95}, {4, 3, Z95}, {1, -1, Z95}, {1, 3, 0}, {1, 3, math.NaN()}, {1, 3, math.Inf(1)}} {
		if lo, hi := Wilson(bad.s, bad.n, bad.z); !math.IsNaN(lo) || !math.IsNaN(hi) {
			t.Errorf("Wilson(%d, %d, %g) = [%g, %g], want NaNs", bad.s, bad.n, bad.z, lo, hi)
		}
	}
	// Symmetry: the interval for s/n mirrors the one for (n-s)/n.
	for n := 1; n <= 30; n++ {
		for s := 0; s <= n; s++ {
			lo, hi := Wilson(s, n, Z95)
			mlo, mhi := Wilson(n-s, n, Z95)
			if !closeTo(lo, 1-mhi, 1e-12) || !closeTo(hi, 1-mlo, 1e-12) {
				t.Errorf("Wilson(%d, %d) = [%g, %g] does not mirror Wilson(%d, %d) = [%g, %g]", s, n, lo, hi, n-s, n, mlo, mhi)
			}
			if p := float64(s) / float64(n); lo < 0 || hi > 1 || lo > p || hi < p {
				t.Errorf("Wilson(%d, %d) = [%g, %g] does not hold %g inside [0, 1]", s, n, lo, hi, p)
			}
		}
	}
}
