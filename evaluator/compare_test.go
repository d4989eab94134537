package evaluator

import (
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
)

// bruteSignFlip enumerates every sign flip directly, the slow obvious way.
func bruteSignFlip(diffs []float64) float64 {
	var obs, scale float64
	for _, d := range diffs {
		obs += d
		scale += math.Abs(d)
	}
	threshold := math.Abs(obs) - 1e-11*scale
	m := len(diffs)
	extreme := 0
	for mask := 0; mask < 1<<m; mask++ {
		var s float64
		for j, d := range diffs {
			if mask&(1<<j) != 0 {
				s -= d
			} else {
				s += d
			}
		}
		if math.Abs(s) >= threshold {
			extreme++
		}
	}
	return float64(extreme) / float64(int(1)<<m)
}

func TestPermSignFlipExact(t *testing.T) {
	tests := []struct {
		name  string
		diffs []float64
		want  float64
	}{
		// Only +++ and --- reach |sum| = 3: 2 of 8.
		{"three wins", []float64{1, 1, 1}, 0.25},
		{"zeros are left out", []float64{1, 0, 1, 0, 1}, 0.25},
		{"all ties", []float64{0, 0, 0}, 1},
		{"one task", []float64{1}, 1},
		{"cancelling", []float64{1, -1}, 1},
		// Sums of ±.5 ±.25 ±.25: |sum| >= .5 in 6 of 8.
		{"mixed", []float64{0.5, 0.25, -0.25}, 0.75},
		// .1+.2+.3 rounds to 0.6000000000000001, .1+(.2+.3) to 0.6: a tie
		// that must count as extreme.
		{"rounding tie", []float64{0.1, 0.2, 0.3}, 0.25},
		// Five wins of five: 2/32.
		{"five wins", []float64{1, 0.5, 0.25, 1, 0.75}, 2.0 / 32},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, exact, err := SignFlipTest(tt.diffs, DefaultFlips, 1)
			if err != nil {
				t.Fatal(err)
			}
			if !exact {
				t.Error("exact = false, want true")
			}
			if !closeTo(p, tt.want, 1e-15) {
				t.Errorf("p = %.17g, want %.17g", p, tt.want)
			}
		})
	}
}

func TestPermSignFlipMatchesBruteForce(t *testing.T) {
	// Pass-rate differences with G = 3, 4 and 5 mixed, 1 to 14 tasks.
	pool := []float64{1.0 / 3, -0.25, 0.5, -2.0 / 3, 0.2, 0.75, -0.4, 1, -1.0 / 3, 0.25, 0.6, -0.5, 0.8, 2.0 / 3}
	for m := 1; m <= len(pool); m++ {
		diffs := pool[:m]
		p, exact, err := SignFlipTest(diffs, DefaultFlips, 1)
		if err != nil {
			t.Fatal(err)
		}
		if want := bruteSignFlip(diffs); !exact || p != want {
			t.Errorf("m = %d: p = %g (exact %v), brute force %g", m, p, exact, want)
		}
	}
}

// binomTail2 is 2·P(X >= k) for X ~ Binomial(n, 1/2), exactly.
func binomTail2(n, k int) float64 {
	num := new(big.Int)
	for i := k; i <= n; i++ {
		num.Add(num, new(big.Int).Binomial(int64(n), int64(i)))
	}
	den := new(big.Int).Lsh(big.NewInt(1), uint(n-1))
	f, _ := new(big.Rat).SetFrac(num, den).Float64()
	return f
}

func TestPermSignFlipMonteCarlo(t *testing.T) {
	// 21 tasks (past ExactSignFlipLimit), 13 wins and 8 losses of equal
	// size: |sum| >= 5 has probability 2·P(X >= 13), X ~ Bin(21, 1/2).
	diffs := make([]float64, 21)
	for i := range diffs {
		diffs[i] = 0.5
		if i >= 13 {
			diffs[i] = -0.5
		}
	}
	want := binomTail2(21, 13)
	p, exact, err := SignFlipTest(diffs, DefaultFlips, 42)
	if err != nil {
		t.Fatal(err)
	}
	if exact {
		t.Error("exact = true for 21 tasks, want a sampled test")
	}
	// The seed is fixed, so this is deterministic; 5 standard errors of slack.
	if se := math.Sqrt(want * (1 - want) / DefaultFlips); math.Abs(p-want) > 5*se {
		t.Errorf("p = %g, want %g ± %g", p, want, 5*se)
	}
	again, _, _ := SignFlipTest(diffs, DefaultFlips, 42)
	if again != p {
		t.Errorf("same seed gave p = %g then %g", p, again)
	}

	// All 30 tasks better under B: the exact p (2/2^30) is below what
	// 1000 flips can see, and the estimate is 1/(1000+1), never 0.
	wins := make([]float64, 30)
	for i := range wins {
		wins[i] = 1
	}
	p, _, err = SignFlipTest(wins, 1000, 7)
	if err != nil {
		t.Fatal(err)
	}
	if p != 1.0/1001 {
		t.Errorf("p = %g, want 1/1001", p)
	}
}

func TestPermSignFlipErrors(t *testing.T) {
	many := make([]float64, ExactSignFlipLimit+1)
	for i := range many {
		many[i] = 1
	}
	tests := []struct {
		name  string
		diffs []float64
		flips int
		want  string
	}{
		{"empty", nil, 10, "no differences"},
		{"NaN", []float64{1, math.NaN()}, 10, "difference 1"},
		{"Inf", []float64{math.Inf(-1)}, 10, "difference 0"},
		{"no flips when sampling", many, 0, "flips = 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := SignFlipTest(tt.diffs, tt.flips, 1)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestBootstrapMeanCI(t *testing.T) {
	lo, hi, err := BootstrapMeanCI([]float64{0.5, 0.5, 0.5}, 0.95, 1000, 1)
	if err != nil {
		t.Fatal(err)
	}
	if lo != 0.5 || hi != 0.5 {
		t.Errorf("constant sample: [%g, %g], want [0.5, 0.5]", lo, hi)
	}

	// 0, .01, ..., .99: mean .495, plug-in standard error sqrt(.083325/100)
	// ≈ .0289, so the 95% interval is close to .495 ± .0566.
	xs := make([]float64, 100)
	for i := range xs {
		xs[i] = float64(i) / 100
	}
	lo, hi, err = BootstrapMeanCI(xs, 0.95, DefaultResamples, 3)
	if err != nil {
		t.Fatal(err)
	}
	if !closeTo(lo, 0.495-0.0566, 0.005) || !closeTo(hi, 0.495+0.0566, 0.005) {
		t.Errorf("interval [%g, %g], want about [0.438, 0.552]", lo, hi)
	}
	lo2, hi2, _ := BootstrapMeanCI(xs, 0.95, DefaultResamples, 3)
	if lo2 != lo || hi2 != hi {
		t.Errorf("same seed gave [%g, %g] then [%g, %g]", lo, hi, lo2, hi2)
	}
	lo90, hi90, _ := BootstrapMeanCI(xs, 0.90, DefaultResamples, 3)
	if lo90 <= lo || hi90 >= hi {
		t.Errorf("90%% interval [%g, %g] is not inside the 95%% one [%g, %g]", lo90, hi90, lo, hi)
	}
}

func TestBootstrapErrors(t *testing.T) {
	tests := []struct {
		name      string
		xs        []float64
		level     float64
		resamples int
		want      string
	}{
		{"empty", nil, 0.95, 10, "no values"},
		{"level 1", []float64{1}, 1, 10, "level = 1"},
		{"level 0", []float64{1}, 0, 10, "level = 0"},
		{"level 95", []float64{1}, 95, 10, "level = 95"},
		{"no resamples", []float64{1}, 0.95, 0, "resamples = 0"},
		{"NaN", []float64{1, math.NaN()}, 0.95, 10, "value 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := BootstrapMeanCI(tt.xs, tt.level, tt.resamples, 1)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// exactMcNemar is min(1, 2·P(X <= min(b,c))), X ~ Bin(b+c, 1/2), exactly.
func exactMcNemar(b, c int) float64 {
	n, k := b+c, min(b, c)
	num := new(big.Int)
	term := big.NewInt(1) // C(n, i), updated as C(n, i+1) = C(n, i)·(n-i)/(i+1)
	for i := 0; i <= k; i++ {
		num.Add(num, term)
		term.Mul(term, big.NewInt(int64(n-i)))
		term.Quo(term, big.NewInt(int64(i+1)))
	}
	den := new(big.Int).Lsh(big.NewInt(1), uint(n-1))
	f, _ := new(big.Rat).SetFrac(num, den).Float64()
	return min(1, f)
}

func TestMcNemarExact(t *testing.T) {
	tests := []struct {
		b, c int
		want float64
	}{
		{0, 0, 1},
		{0, 5, 2.0 / 32},
		{5, 0, 2.0 / 32},
		{1, 5, 14.0 / 64},     // 2·(1+6)/64
		{2, 10, 158.0 / 4096}, // 2·(1+12+66)/4096
		{5, 5, 1},             // 2·P(X <= 5) > 1 for n = 10
		{3, 4, 1},             // 2·P(X <= 3) = 1 for n = 7
		{0, 1, 1},             // 2·1/2
		{7, 20, exactMcNemar(7, 20)},
	}
	for _, tt := range tests {
		if got := McNemarExact(tt.b, tt.c); !relClose(got, tt.want, 1e-12) {
			t.Errorf("McNemarExact(%d, %d) = %.17g, want %.17g", tt.b, tt.c, got, tt.want)
		}
	}
	// Large counts, where 2^-n underflows a float64.
	for _, bc := range [][2]int{{900, 1100}, {1000, 1010}, {450, 1650}} {
		got, want := McNemarExact(bc[0], bc[1]), exactMcNemar(bc[0], bc[1])
		if !relClose(got, want, 1e-9) {
			t.Errorf("McNemarExact(%d, %d) = %.17g, want %.17g", bc[0], bc[1], got, want)
		}
	}
	if got := McNemarExact(-1, 3); !math.IsNaN(got) {
		t.Errorf("McNemarExact(-1, 3) = %g, want NaN", got)
	}
}

func TestMcNemarDiscordant(t *testing.T) {
	a := []bool{true, true, false, false, true}
	b := []bool{true, false, true, false, false}
	onlyA, onlyB, err := Discordant(a, b)
	if err != nil || onlyA != 2 || onlyB != 1 {
		t.Errorf("Discordant = %d, %d, %v; want 2, 1, nil", onlyA, onlyB, err)
	}
	if _, _, err := Discordant(a, b[:2]); err == nil || !strings.Contains(err.Error(), "5 outcomes under A, 2 under B") {
		t.Errorf("Discordant with lengths 5 and 2: got %v", err)
	}
}

func TestCompare(t *testing.T) {
	pairs := []TaskPair{
		{Task: "a", A: TaskCount{N: 4, C: 1}, B: TaskCount{N: 4, C: 3}},
		{Task: "b", A: TaskCount{N: 4, C: 2}, B: TaskCount{N: 4, C: 3}},
		{Task: "c", A: TaskCount{N: 4, C: 0}, B: TaskCount{N: 4, C: 1}},
		{Task: "d", A: TaskCount{N: 4, C: 4}, B: TaskCount{N: 4, C: 4}},
	}
	got, err := Compare(pairs, CompareOptions{Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	wantDiffs := []float64{0.5, 0.25, 0.25, 0}
	for i, d := range wantDiffs {
		if got.Diffs[i] != d {
			t.Errorf("Diffs[%d] = %g, want %g", i, got.Diffs[i], d)
		}
	}
	if got.Tasks != 4 || got.RateA != 7.0/16 || got.RateB != 11.0/16 || got.MeanDiff != 0.25 {
		t.Errorf("Tasks %d, RateA %g, RateB %g, MeanDiff %g; want 4, 7/16, 11/16, 0.25", got.Tasks, got.RateA, got.RateB, got.MeanDiff)
	}
	if got.Improved != 3 || got.Worsened != 0 {
		t.Errorf("Improved %d, Worsened %d; want 3, 0", got.Improved, got.Worsened)
	}
	// Three non-zero differences, all positive: p = 2/8.
	if got.P != 0.25 || !got.Exact {
		t.Errorf("P = %g (exact %v), want 0.25 exact", got.P, got.Exact)
	}
	if got.Level != DefaultLevel {
		t.Errorf("Level = %g, want %g", got.Level, DefaultLevel)
	}
	// Resampled means lie between the smallest and largest difference.
	if got.Lo < 0 || got.Hi > 0.5 || got.Lo > got.MeanDiff || got.Hi < got.MeanDiff {
		t.Errorf("interval [%g, %g] does not hold %g inside [0, 0.5]", got.Lo, got.Hi, got.MeanDiff)
	}
	again, _ := Compare(pairs, CompareOptions{Seed: 9})
	if again.Lo != got.Lo || again.Hi != got.Hi || again.P != got.P {
		t.Errorf("same seed: [%g, %g] p %g, then [%g, %g] p %g", got.Lo, got.Hi, got.P, again.Lo, again.Hi, again.P)
	}

	// B worse on one task, and a task cut short in arm B (N = 2).
	mixed, err := Compare([]TaskPair{
		{A: TaskCount{N: 4, C: 4}, B: TaskCount{N: 4, C: 2}},
		{A: TaskCount{N: 4, C: 0}, B: TaskCount{N: 2, C: 1}},
	}, CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if mixed.Diffs[0] != -0.5 || mixed.Diffs[1] != 0.5 || mixed.MeanDiff != 0 || mixed.Improved != 1 || mixed.Worsened != 1 || mixed.P != 1 {
		t.Errorf("mixed comparison = %+v", mixed)
	}
}

func TestCompareErrors(t *testing.T) {
	ok := TaskCount{N: 4, C: 2}
	tests := []struct {
		name  string
		pairs []TaskPair
		opts  CompareOptions
		want  string
	}{
		{"no tasks", nil, CompareOptions{}, "no tasks"},
		{"N = 0", []TaskPair{{Task: "x", A: ok, B: ok}, {Task: "y", A: TaskCount{}, B: ok}}, CompareOptions{}, "task 1 (y), arm A: N = 0"},
		{"C > N", []TaskPair{{A: ok, B: TaskCount{N: 2, C: 3}}}, CompareOptions{}, "task 0, arm B: C = 3"},
		{"C < 0", []TaskPair{{A: TaskCount{N: 2, C: -1}, B: ok}}, CompareOptions{}, "arm A: C = -1"},
		{"duplicate task", []TaskPair{{Task: "x", A: ok, B: ok}, {Task: "x", A: ok, B: ok}}, CompareOptions{}, "task 1 (x): the same task as task 0"},
		{"bad level", []TaskPair{{A: ok, B: ok}}, CompareOptions{Level: 1.5}, "level = 1.5"},
		{"bad resamples", []TaskPair{{A: ok, B: ok}}, CompareOptions{Resamples: -1}, "resamples = -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Compare(tt.pairs, tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func BenchmarkPermSignFlipExact20(b *testing.B) {
	diffs := make([]float64, ExactSignFlipLimit)
	for i := range diffs {
		diffs[i] = float64(i%5-2) / 4
	}
	for b.Loop() {
		if _, _, err := SignFlipTest(diffs, DefaultFlips, 1); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPermSignFlipMonteCarlo100(b *testing.B) {
	diffs := make([]float64, 100)
	for i := range diffs {
		diffs[i] = float64(i%5-2) / 4
	}
	for b.Loop() {
		if _, _, err := SignFlipTest(diffs, DefaultFlips, 1); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBootstrapMeanCI(b *testing.B) {
	xs := make([]float64, 100)
	for i := range xs {
		xs[i] = float64(i%5-2) / 4
	}
	for b.Loop() {
		if _, _, err := BootstrapMeanCI(xs, DefaultLevel, DefaultResamples, 1); err != nil {
			b.Fatal(err)
		}
	}
}

// The bootstrap at the size of a large run: 3,125 tasks.
func BenchmarkBootstrapMeanCI3125(b *testing.B) {
	xs := make([]float64, 3125)
	for i := range xs {
		xs[i] = float64(i%17-8) / 16
	}
	for b.Loop() {
		if _, _, err := BootstrapMeanCI(xs, DefaultLevel, DefaultResamples, 1); err != nil {
			b.Fatal(err)
		}
	}
}

// The sampled sign-flip test at the size of a large run.
func BenchmarkPermSignFlipMonteCarlo3125(b *testing.B) {
	diffs := make([]float64, 3125)
	for i := range diffs {
		diffs[i] = float64(i%17-8) / 16
	}
	for b.Loop() {
		if _, _, err := SignFlipTest(diffs, DefaultFlips, 1); err != nil {
			b.Fatal(err)
		}
	}
}

// At the size of a large run, 3,125 tasks, the sampled test gives the p
// of the sum in order: differences of pass rates over 16 attempts (many
// flips tie with the observed sum), over 15 or 16, and of no pattern.
func TestSignFlipLargeRunUnchanged(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, tt := range []struct {
		name string
		diff func() float64
	}{
		{"rates over 16", func() float64 { return float64(rng.IntN(17)-rng.IntN(17)) / 16 }},
		{"rates over 15 or 16", func() float64 {
			return float64(rng.IntN(16))/float64(15+rng.IntN(2)) - float64(rng.IntN(16))/float64(15+rng.IntN(2))
		}},
		{"no pattern", func() float64 { return rng.NormFloat64() / 4 }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var nz []float64
			var obs, scale float64
			for len(nz) < 3125 {
				if d := tt.diff(); d != 0 {
					nz = append(nz, d)
					obs += d
					scale += math.Abs(d)
				}
			}
			// Near the observed sum, and further, where few flips reach.
			for _, threshold := range []float64{math.Abs(obs) - 1e-11*scale, math.Sqrt(scale) / 2, math.Sqrt(scale) * 2} {
				const flips, seed = 2000, 99
				got, _ := sampledSignFlips(rand.NewPCG(seed, streamSignFlip), nz, threshold, flips)
				if p, want := float64(got+1)/float64(flips+1), signFlipBefore(nz, threshold, flips, seed); p != want {
					t.Errorf("threshold %v: p = %v, in order %v", threshold, p, want)
				}
			}
		})
	}
}

// Flips whose sum falls within rounding of the threshold are counted as
// the sum in order counts them: eleven differences of 0.5, eleven of
// -0.5 and two small ones, the second of which, flipped, puts the sum
// 1e-11 × Σ|d| below |Σd|, on the threshold give or take rounding, for
// the sixth of the flips whose halves cancel. Among the sizes of the
// second, some flips are close calls; a range of seeds covers the rest.
func TestSignFlipCloseCalls(t *testing.T) {
	closeCalls := 0
	for i := range 41 {
		nz := make([]float64, 0, 24)
		for range 11 {
			nz = append(nz, 0.5, -0.5)
		}
		nz = append(nz, 1e-3, 0)
		var scale float64
		for _, d := range nz {
			scale += math.Abs(d)
		}
		nz[23] = 0.5e-11 * scale * (1 + float64(i-20)*1e-5)
		var obs float64
		scale = 0
		for _, d := range nz {
			obs += d
			scale += math.Abs(d)
		}
		threshold := math.Abs(obs) - 1e-11*scale
		for seed := range uint64(3) {
			const flips = 3000
			got, close := sampledSignFlips(rand.NewPCG(seed, streamSignFlip), nz, threshold, flips)
			closeCalls += close
			if p, want := float64(got+1)/float64(flips+1), signFlipBefore(nz, threshold, flips, seed); p != want {
				t.Fatalf("second difference %g, seed %d: p = %v, in order %v (%d close calls)", nz[23], seed, p, want, close)
			}
		}
	}
	if closeCalls == 0 {
		t.Error("no flip was a close call: the test does not reach the sums in order")
	}
	t.Logf("%d close calls", closeCalls)
}

// resampleSum draws the indexes rand.Rand.IntN draws from the same
// generator, and adds their values in the same order, to the last bit:
// the bootstrap intervals of stored runs do not change. The sizes include
// 1 and powers of two, which mask a draw. (A draw is rejected with a
// probability below n/2⁶⁴: no size a test can hold reaches that branch,
// whose steps are math/rand/v2's.)
func TestResampleSumAsIntN(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	sizes := []int{1, 2, 3, 5, 16, 17, 100, 1024, 3125, 6250, 1<<20 + 1}
	for range 20 {
		sizes = append(sizes, 1+rng.IntN(5000))
	}
	for _, n := range sizes {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = rng.NormFloat64()
		}
		seed := rng.Uint64()
		fast := rand.NewPCG(seed, streamBootstrap)
		slow := rand.New(rand.NewPCG(seed, streamBootstrap))
		for round := range 3 {
			var want float64
			for range n {
				want += xs[slow.IntN(n)]
			}
			if got := resampleSum(fast, xs); math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("n = %d, round %d: sum %v, IntN's %v", n, round, got, want)
			}
		}
	}
}

// signFlipBefore is SignFlipTest's sampling as it was written first, one
// branch per difference: the reference its faster form must match exactly.
func signFlipBefore(nz []float64, threshold float64, flips int, seed uint64) float64 {
	r := rand.New(rand.NewPCG(seed, streamSignFlip))
	extreme := 0
	for range flips {
		var sum float64
		var bits uint64
		for j, d := range nz {
			if j%64 == 0 {
				bits = r.Uint64()
			}
			if bits&1 == 1 {
				sum -= d
			} else {
				sum += d
			}
			bits >>= 1
		}
		if math.Abs(sum) >= threshold {
			extreme++
		}
	}
	return float64(extreme+1) / float64(flips+1)
}

// The sampled sign-flip test gives the same p as before it was made
// faster, to the last bit: reports of stored runs do not change.
func TestSignFlipSampledUnchanged(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := range 40 {
		n := ExactSignFlipLimit + 1 + rng.IntN(300)
		diffs := make([]float64, n)
		for i := range diffs {
			switch rng.IntN(4) {
			case 0:
				diffs[i] = 0
			case 1:
				diffs[i] = float64(rng.IntN(17)-8) / 16
			default:
				diffs[i] = rng.NormFloat64() / 3
			}
		}
		seed := rng.Uint64()
		flips := []int{2000, 2003, 1, 6, 4097}[trial%5]
		p, exact, err := SignFlipTest(diffs, flips, seed)
		if err != nil || exact {
			t.Fatalf("trial %d: %v, exact %v", trial, err, exact)
		}
		var nz []float64
		var obs, scale float64
		for _, d := range diffs {
			if d != 0 {
				nz = append(nz, d)
				obs += d
				scale += math.Abs(d)
			}
		}
		if want := signFlipBefore(nz, math.Abs(obs)-1e-11*scale, flips, seed); p != want {
			t.Fatalf("trial %d (%d differences): p = %v, was %v", trial, n, p, want)
		}
	}
}
