package evaluator_test

import (
	"fmt"

	"github.com/benchhq/bench/evaluator"
)

// Two tasks, four attempts each: the first passed once, the second every
// time. The second group teaches nothing: its advantages are 0.
func ExampleAdvantages() {
	groups := [][]float64{{1, 0, 0, 0}, {1, 1, 1, 1}}
	for _, m := range []evaluator.Method{evaluator.GRPO, evaluator.DrGRPO, evaluator.RLOO} {
		adv, err := evaluator.Advantages(m, groups)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%-6s %.4f\n", m, adv)
	}
	fmt.Printf("zero-variance share: %.2f\n", evaluator.ZeroVarianceShare(groups))
	// Output:
	// grpo   [[1.4997 -0.4999 -0.4999 -0.4999] [0.0000 0.0000 0.0000 0.0000]]
	// drgrpo [[0.7500 -0.2500 -0.2500 -0.2500] [0.0000 0.0000 0.0000 0.0000]]
	// rloo   [[1.0000 -0.3333 -0.3333 -0.3333] [0.0000 0.0000 0.0000 0.0000]]
	// zero-variance share: 0.50
}

// Ten attempts of a task, three of which passed.
func ExamplePassAtK() {
	for _, k := range []int{1, 5, 10} {
		at, err := evaluator.PassAtK(10, 3, k)
		if err != nil {
			fmt.Println(err)
			return
		}
		hat, err := evaluator.PassHatK(10, 3, k)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("k=%-2d pass@k %.4f  pass^k %.4f\n", k, at, hat)
	}
	_, err := evaluator.PassAtK(10, 3, 11)
	fmt.Println(err)
	// Output:
	// k=1  pass@k 0.3000  pass^k 0.3000
	// k=5  pass@k 0.9167  pass^k 0.0000
	// k=10 pass@k 1.0000  pass^k 0.0000
	// pass@k: k = 11: want 1 <= k <= n = 10 (the estimator needs at least k attempts)
}

// A 95% interval for a pass rate of 8 out of 10.
func ExampleWilson() {
	lo, hi := evaluator.Wilson(8, 10, evaluator.Z95)
	fmt.Printf("[%.4f, %.4f]\n", lo, hi)
	// Output:
	// [0.4902, 0.9433]
}

// Arm B against arm A on three tasks, four attempts each.
func ExampleCompare() {
	cmp, err := evaluator.Compare([]evaluator.TaskPair{
		{Task: "recipe-trailing-dot", A: evaluator.TaskCount{N: 4, C: 1}, B: evaluator.TaskCount{N: 4, C: 3}},
		{Task: "csv-quoting", A: evaluator.TaskCount{N: 4, C: 2}, B: evaluator.TaskCount{N: 4, C: 3}},
		{Task: "off-by-one", A: evaluator.TaskCount{N: 4, C: 0}, B: evaluator.TaskCount{N: 4, C: 1}},
	}, evaluator.CompareOptions{Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("B - A = %+.3f, p = %.3f (exact %v), better on %d of %d tasks\n",
		cmp.MeanDiff, cmp.P, cmp.Exact, cmp.Improved, cmp.Tasks)
	// Output:
	// B - A = +0.333, p = 0.250 (exact true), better on 3 of 3 tasks
}
