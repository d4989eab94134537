package evaluator

import (
	"fmt"
	"math"
)

// TaskCount is how one task fared: C attempts passed out of N.
type TaskCount struct {
	// N is the number of scored attempts.
	N int
	// C is the number of attempts that passed.
	C int
}

func checkPassK(n, c, k int) error {
	switch {
	case n < 1:
		return fmt.Errorf("n = %d attempts: want at least 1", n)
	case c < 0 || c > n:
		return fmt.Errorf("c = %d passes: want 0 <= c <= n = %d", c, n)
	case k < 1 || k > n:
		return fmt.Errorf("k = %d: want 1 <= k <= n = %d (the estimator needs at least k attempts)", k, n)
	}
	return nil
}

// PassAtK is the unbiased estimator of pass@k of Chen et al. (2021): the
// probability that at least one of k attempts drawn without replacement
// from n, of which c passed, passes: 1 - C(n-c, k) / C(n, k).
//
// It is computed without binomials, as in the paper's numpy code, in log
// space: 1 - prod_{i=n-c+1..n} (1 - k/i) = -expm1(sum log1p(-k/i)), which
// neither overflows for large n nor loses the small values to cancellation.
// It is 1 when n - c < k (every draw of k holds a pass).
//
// It returns an error unless n >= 1, 0 <= c <= n and 1 <= k <= n: with
// fewer than k attempts the estimator is undefined, and a caller asking for
// it has a plan with too small a G.
func PassAtK(n, c, k int) (float64, error) {
	if err := checkPassK(n, c, k); err != nil {
		return 0, fmt.Errorf("pass@k: %w", err)
	}
	if n-c < k {
		return 1, nil
	}
	var logFail float64
	for i := n - c + 1; i <= n; i++ {
		logFail += math.Log1p(-float64(k) / float64(i))
	}
	return -math.Expm1(logFail), nil
}

// PassHatK is pass^k of τ-bench (Yao et al., 2024): the probability that
// all of k attempts drawn without replacement from n, of which c passed,
// pass: C(c, k) / C(n, k), computed as the product prod_{i=0..k-1}
// (c-i)/(n-i), which stays accurate for large n. It is 0 when c < k.
// Its arguments are checked as PassAtK's are.
func PassHatK(n, c, k int) (float64, error) {
	if err := checkPassK(n, c, k); err != nil {
		return 0, fmt.Errorf("pass^k: %w", err)
	}
	if c < k {
		return 0, nil
	}
	p := 1.0
	for i := range k {
		p *= float64(c-i) / float64(n-i)
	}
	return p, nil
}

// MeanPassAtK averages PassAtK over tasks, each task weighing the same.
// It is an error to give no task or a task with fewer than k attempts; the
// error names the task's index.
func MeanPassAtK(results []TaskCount, k int) (float64, error) {
	return meanOver(results, k, "pass@k", PassAtK)
}

// MeanPassHatK averages PassHatK over tasks, each task weighing the same,
// with the errors of MeanPassAtK.
func MeanPassHatK(results []TaskCount, k int) (float64, error) {
	return meanOver(results, k, "pass^k", PassHatK)
}

func meanOver(results []TaskCount, k int, name string, f func(n, c, k int) (float64, error)) (float64, error) {
	if len(results) == 0 {
		return 0, fmt.Errorf("mean %s: no tasks", name)
	}
	var sum float64
	for i, r := range results {
		v, err := f(r.N, r.C, k)
		if err != nil {
			return 0, fmt.Errorf("mean %s: task %d: %w", name, i, err)
		}
		sum += v
	}
	return sum / float64(len(results)), nil
}
