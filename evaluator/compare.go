package evaluator

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"sync"
)

// ExactSignFlipLimit is the largest number of tasks with a non-zero
// difference for which SignFlipTest enumerates all 2^m sign flips; past it
// the test samples flips at random.
const ExactSignFlipLimit = 20

// Defaults used when CompareOptions leaves a field at zero.
const (
	// DefaultFlips is the number of random sign flips of the Monte Carlo
	// permutation test.
	DefaultFlips = 100_000
	// DefaultResamples is the number of bootstrap resamples.
	DefaultResamples = 10_000
	// DefaultLevel is the confidence level of the bootstrap interval.
	DefaultLevel = 0.95
)

// Streams of the PCG generator, so that one seed drives the bootstrap and
// the sign flips independently.
const (
	streamSignFlip  = 0x5349474e464c4950 // "SIGNFLIP"
	streamBootstrap = 0x424f4f5453545250 // "BOOTSTRP"
)

// TaskPair is one task's outcome under two arms, A (the baseline) and B.
// The arms should have run the same task with the same seeds and G; the
// comparison is of pass rates C/N, so a task cut short in one arm still
// counts, with its own N.
type TaskPair struct {
	// Task names the task, for error messages and reports; may be empty.
	Task string
	// A is the task's passes and attempts under arm A.
	A TaskCount
	// B is the task's passes and attempts under arm B.
	B TaskCount
}

// CompareOptions tunes Compare. The zero value is ready to use.
type CompareOptions struct {
	// Seed seeds the bootstrap and the Monte Carlo sign flips: the same
	// seed and input give the same result.
	Seed uint64
	// Resamples is the number of bootstrap resamples; 0 means DefaultResamples.
	Resamples int
	// Flips is the number of random sign flips when there are more than
	// ExactSignFlipLimit tasks with a difference; 0 means DefaultFlips.
	Flips int
	// Level is the confidence level of the interval, in (0, 1); 0 means
	// DefaultLevel.
	Level float64
}

// Comparison is the paired comparison of arm B against arm A over tasks.
// Every difference is B's pass rate minus A's: positive means B did better.
type Comparison struct {
	// Tasks is the number of tasks compared.
	Tasks int
	// Diffs holds each task's difference of pass rates, in input order.
	Diffs []float64
	// RateA and RateB are the mean pass rates of the arms, tasks weighing the same.
	RateA, RateB float64
	// MeanDiff is the mean of Diffs (RateB - RateA).
	MeanDiff float64
	// Lo and Hi bound MeanDiff: a paired bootstrap percentile interval at Level.
	Lo, Hi float64
	// Level is the confidence level of [Lo, Hi].
	Level float64
	// P is the two-sided p-value of the sign-flip permutation test for
	// "no difference between the arms".
	P float64
	// Exact is true when P comes from enumerating every sign flip, false
	// when it was estimated from random flips.
	Exact bool
	// Improved and Worsened count the tasks where B's pass rate is above
	// or below A's; the others are ties.
	Improved, Worsened int
}

// Compare compares two arms task by task: the per-task difference of pass
// rates, its mean with a paired bootstrap interval, and a sign-flip
// permutation p-value. A task with N < 1 or C outside [0, N] in either arm,
// a repeated non-empty task name, or no task at all is an error.
func Compare(pairs []TaskPair, opts CompareOptions) (Comparison, error) {
	if len(pairs) == 0 {
		return Comparison{}, fmt.Errorf("compare: no tasks")
	}
	opts = opts.withDefaults()
	seen := make(map[string]int, len(pairs))
	diffs := make([]float64, len(pairs))
	var sumA, sumB float64
	cmp := Comparison{Tasks: len(pairs), Level: opts.Level}
	for i, p := range pairs {
		name := fmt.Sprintf("task %d", i)
		if p.Task != "" {
			name = fmt.Sprintf("task %d (%s)", i, p.Task)
			if j, dup := seen[p.Task]; dup {
				return Comparison{}, fmt.Errorf("compare: %s: the same task as task %d", name, j)
			}
			seen[p.Task] = i
		}
		ra, err := rate(p.A)
		if err != nil {
			return Comparison{}, fmt.Errorf("compare: %s, arm A: %w", name, err)
		}
		rb, err := rate(p.B)
		if err != nil {
			return Comparison{}, fmt.Errorf("compare: %s, arm B: %w", name, err)
		}
		diffs[i] = rb - ra
		sumA += ra
		sumB += rb
		switch {
		case rb > ra:
			cmp.Improved++
		case rb < ra:
			cmp.Worsened++
		}
	}
	cmp.Diffs = diffs
	cmp.RateA = sumA / float64(len(pairs))
	cmp.RateB = sumB / float64(len(pairs))
	cmp.MeanDiff = Mean(diffs)
	// The two draw from streams of their own: they run at once.
	var flipErr, bootErr error
	var wg sync.WaitGroup
	wg.Go(func() { cmp.P, cmp.Exact, flipErr = SignFlipTest(diffs, opts.Flips, opts.Seed) })
	cmp.Lo, cmp.Hi, bootErr = BootstrapMeanCI(diffs, opts.Level, opts.Resamples, opts.Seed)
	wg.Wait()
	if flipErr != nil {
		return Comparison{}, fmt.Errorf("compare: %w", flipErr)
	}
	if bootErr != nil {
		return Comparison{}, fmt.Errorf("compare: %w", bootErr)
	}
	return cmp, nil
}

func (o CompareOptions) withDefaults() CompareOptions {
	if o.Resamples == 0 {
		o.Resamples = DefaultResamples
	}
	if o.Flips == 0 {
		o.Flips = DefaultFlips
	}
	if o.Level == 0 {
		o.Level = DefaultLevel
	}
	return o
}

func rate(t TaskCount) (float64, error) {
	if t.N < 1 {
		return 0, fmt.Errorf("N = %d attempts: want at least 1", t.N)
	}
	if t.C < 0 || t.C > t.N {
		return 0, fmt.Errorf("C = %d passes: want 0 <= C <= N = %d", t.C, t.N)
	}
	return float64(t.C) / float64(t.N), nil
}

// SignFlipTest is the two-sided paired permutation test of "the mean of
// diffs is zero": under that hypothesis each difference is as likely to
// have the opposite sign, so the statistic |sum of diffs| is compared with
// its value under every assignment of signs. Flips that reach the observed
// statistic count as extreme (>=, ties included, with a relative tolerance
// of 1e-11 for floating-point rounding).
//
// Differences that are 0 do not move under a flip and are left out. With m
// non-zero differences, m <= ExactSignFlipLimit enumerates all 2^m flips
// and p is exact (exact == true); otherwise p is estimated from flips
// random sign assignments drawn from a PCG generator seeded with seed, as
// (extreme + 1) / (flips + 1), which never reports p = 0 for a sampled
// test. With no non-zero difference p is 1.
//
// It is an error to give no differences, a NaN or infinite difference, or
// flips < 1 when sampling is needed.
func SignFlipTest(diffs []float64, flips int, seed uint64) (p float64, exact bool, err error) {
	if len(diffs) == 0 {
		return 0, false, fmt.Errorf("sign-flip test: no differences")
	}
	var nz []float64
	for i, d := range diffs {
		if math.IsNaN(d) || math.IsInf(d, 0) {
			return 0, false, fmt.Errorf("sign-flip test: difference %d: %v is not a finite number", i, d)
		}
		if d != 0 {
			nz = append(nz, d)
		}
	}
	if len(nz) == 0 {
		return 1, true, nil
	}
	var obs, scale float64
	for _, d := range nz {
		obs += d
		scale += math.Abs(d)
	}
	// A flip is extreme when |its sum| >= threshold.
	threshold := math.Abs(obs) - 1e-11*scale
	if len(nz) <= ExactSignFlipLimit {
		return exactSignFlip(nz, threshold), true, nil
	}
	if flips < 1 {
		return 0, false, fmt.Errorf("sign-flip test: flips = %d: want at least 1", flips)
	}
	// rand.Rand's Uint64 is its source's: drawn from the PCG itself, the
	// draws are the same, and inlined.
	extreme, _ := sampledSignFlips(rand.NewPCG(seed, streamSignFlip), nz, threshold, flips)
	return float64(extreme+1) / float64(flips+1), false, nil
}

// sampledSignFlips counts the flips whose |sum| reaches threshold, as
// adding each flip's differences in order, from the first, with the sign
// flipped where its bit is set, counts them (signFlipBefore in the tests
// is that). Each flip draws one random bit per difference, 64 to a draw
// from src, in the order the flips come.
//
// Only which side of threshold a flip's sum falls on counts, not its last
// bits. A flip's sum is Σd − 2 × (the sum of the differences its bits
// negate), and that sum is added from tables of the sums of every run of
// eight differences under each byte of bits: one lookup and addition per
// eight differences instead of one addition per difference. It rounds
// otherwise than the sum in order, but each of the two is within a bound
// of the exact sum (Higham's γ of its number of additions, times Σ|d|): a
// flip further than twice both bounds from threshold falls on the same
// side as the sum in order would; the rare others are added in order.
// closeCalls counts those. TestSignFlipSampledUnchanged and
// TestSignFlipCloseCalls hold the count to the sum in order's.
func sampledSignFlips(src *rand.PCG, nz []float64, threshold float64, flips int) (extreme, closeCalls int) {
	n := len(nz)
	words, chunks := (n+63)/64, (n+7)/8
	var obs, scale float64
	for _, d := range nz {
		obs += d
		scale += math.Abs(d)
	}
	// tables[256*k+m] is the sum of nz[8k+i] over the bits i set in m
	// (0 past the last difference).
	tables := make([]float64, 256*chunks)
	for k := range chunks {
		t := tables[256*k : 256*k+256]
		for m := 1; m < 256; m++ {
			var d float64
			if i := 8*k + bits.TrailingZeros(uint(m)); i < n {
				d = nz[i]
			}
			t[m] = t[m&(m-1)] + d
		}
	}
	// Each sum is within γ(additions) × scale of the exact one: in order,
	// n-1 additions; here Σd (n-1), each table entry (7), the sum of the
	// entries (chunks+2, whatever their order), and the last subtraction
	// of a value at most 3 × scale. Twice both bounds covers the rounding
	// of these comparisons.
	const u = 0x1p-53
	gamma := func(k int) float64 { return float64(k) * u / (1 - float64(k)*u) }
	margin := 2 * (2*gamma(n-1) + 2*(gamma(7)+gamma(chunks+2)*(1+gamma(7))) + 3*u) * scale
	// Past a quarter of the largest float, the sums could overflow.
	bounded := scale < math.MaxFloat64/4
	signs := make([]uint64, n)
	for i, d := range nz {
		signs[i] = math.Float64bits(d)
	}
	inOrder := func(draws []uint64) float64 {
		var sum float64
		for j, b := range signs {
			sum += math.Float64frombits(b ^ (draws[j>>6]>>(j&63)&1)<<63)
		}
		return sum
	}
	draws := make([]uint64, words)
	for range flips {
		for i := range draws {
			draws[i] = src.Uint64()
		}
		// Four sums side by side, whose additions do not wait on each
		// other; chunks 4i to 4i+3 are four bytes of one draw.
		var s0, s1, s2, s3 float64
		k := 0
		for ; k+4 <= chunks; k += 4 {
			w := draws[k>>3] >> (8 * (k & 7))
			t := tables[256*k : 256*k+1024]
			s0 += t[w&0xff]
			s1 += t[256+(w>>8&0xff)]
			s2 += t[512+(w>>16&0xff)]
			s3 += t[768+(w>>24&0xff)]
		}
		for ; k < chunks; k++ {
			s0 += tables[256*k+int(draws[k>>3]>>(8*(k&7))&0xff)]
		}
		a := math.Abs(obs - 2*((s0+s1)+(s2+s3)))
		switch {
		case bounded && a >= threshold+margin:
			extreme++
		case bounded && a < threshold-margin:
		default:
			// Too close to call, or no bound.
			closeCalls++
			if math.Abs(inOrder(draws)) >= threshold {
				extreme++
			}
		}
	}
	return extreme, closeCalls
}

// exactSignFlip enumerates all 2^len(nz) sign flips, meeting in the
// middle: the sums of each half's 2^(m/2) flips are tabulated once, so
// each flip costs one addition and no rounding accumulates across flips.
func exactSignFlip(nz []float64, threshold float64) float64 {
	half := len(nz) / 2
	low, high := signedSums(nz[:half]), signedSums(nz[half:])
	extreme := 0
	for _, h := range high {
		for _, l := range low {
			if math.Abs(l+h) >= threshold {
				extreme++
			}
		}
	}
	return float64(extreme) / float64(len(low)*len(high))
}

// signedSums returns, for each of the 2^len(xs) masks, the sum of xs with
// the elements whose bit is set negated.
func signedSums(xs []float64) []float64 {
	sums := make([]float64, 1<<len(xs))
	for mask := range sums {
		var s float64
		for j, x := range xs {
			if mask&(1<<j) != 0 {
				s -= x
			} else {
				s += x
			}
		}
		sums[mask] = s
	}
	return sums
}

// BootstrapMeanCI is the percentile bootstrap interval at the given level
// (for example 0.95) for the mean of xs: xs is resampled with replacement
// resamples times, by a PCG generator seeded with seed, and the interval
// is bounded by the (1-level)/2 and (1+level)/2 percentiles of the
// resampled means. For paired data, xs holds the per-pair differences, so
// pairs are resampled together. It is an error to give no values, a NaN
// or infinite value, a level outside (0, 1), or resamples < 1.
func BootstrapMeanCI(xs []float64, level float64, resamples int, seed uint64) (lo, hi float64, err error) {
	if len(xs) == 0 {
		return 0, 0, fmt.Errorf("bootstrap: no values")
	}
	if !(level > 0 && level < 1) {
		return 0, 0, fmt.Errorf("bootstrap: level = %v: want 0 < level < 1", level)
	}
	if resamples < 1 {
		return 0, 0, fmt.Errorf("bootstrap: resamples = %d: want at least 1", resamples)
	}
	for i, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return 0, 0, fmt.Errorf("bootstrap: value %d: %v is not a finite number", i, x)
		}
	}
	src := rand.NewPCG(seed, streamBootstrap)
	n := len(xs)
	means := make([]float64, resamples)
	for b := range means {
		means[b] = resampleSum(src, xs) / float64(n)
	}
	slices.Sort(means)
	alpha := (1 - level) / 2
	return percentileSorted(means, 100*alpha), percentileSorted(means, 100*(1-alpha)), nil
}

// resampleSum sums len(xs) values drawn from xs with replacement, in
// order, at the indexes rand.New(src).IntN(len(xs)) would draw, by the
// same steps: math/rand/v2's Lemire reduction, where a power of two masks
// a draw and any other n takes the high word of draw × n, drawing again
// while the low word is below 2⁶⁴ mod n (which only a low word below n
// can be). Drawing from the PCG itself rather than through rand.Rand's
// Source interface lets the compiler inline the generator: a bootstrap of
// a large run draws tens of millions of indexes. TestResampleSumAsIntN
// holds it to IntN. xs must not be empty.
func resampleSum(src *rand.PCG, xs []float64) float64 {
	n := uint64(len(xs))
	var sum float64
	if n&(n-1) == 0 {
		for range n {
			sum += xs[src.Uint64()&(n-1)]
		}
		return sum
	}
	thresh := -n % n
	for range n {
		hi, lo := bits.Mul64(src.Uint64(), n)
		for lo < thresh {
			hi, lo = bits.Mul64(src.Uint64(), n)
		}
		sum += xs[hi]
	}
	return sum
}

// McNemarExact is the two-sided exact McNemar test for paired 0/1
// outcomes, such as attempt i of a task under arm A and under arm B with
// the same seed. b counts the pairs where only A passed, c those where only
// B passed; pairs that agree carry no information. Under "no difference"
// b is Binomial(b+c, 1/2), and the p-value is min(1, 2 * P(X <= min(b, c))).
// It is 1 when there is no discordant pair, and NaN for a negative count.
func McNemarExact(b, c int) float64 {
	if b < 0 || c < 0 {
		return math.NaN()
	}
	n := b + c
	if n == 0 {
		return 1
	}
	k := min(b, c)
	// Sum the binomial terms in log space: 2^-n underflows for n > 1074.
	logHalfN := float64(n) * math.Ln2
	lgN, _ := math.Lgamma(float64(n + 1))
	terms := make([]float64, k+1)
	maxTerm := math.Inf(-1)
	for i := 0; i <= k; i++ {
		lgI, _ := math.Lgamma(float64(i + 1))
		lgNI, _ := math.Lgamma(float64(n - i + 1))
		terms[i] = lgN - lgI - lgNI - logHalfN
		maxTerm = max(maxTerm, terms[i])
	}
	var sum float64
	for _, t := range terms {
		sum += math.Exp(t - maxTerm)
	}
	return min(1, 2*math.Exp(maxTerm)*sum)
}

// Discordant counts the discordant pairs of paired 0/1 outcomes, the input
// of McNemarExact: onlyA where a[i] passed and b[i] did not, onlyB the
// reverse. a and b must have the same length.
func Discordant(a, b []bool) (onlyA, onlyB int, err error) {
	if len(a) != len(b) {
		return 0, 0, fmt.Errorf("discordant pairs: %d outcomes under A, %d under B: want the same number", len(a), len(b))
	}
	for i := range a {
		switch {
		case a[i] && !b[i]:
			onlyA++
		case !a[i] && b[i]:
			onlyB++
		}
	}
	return onlyA, onlyB, nil
}
