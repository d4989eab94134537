package evaluator

import (
	"math"
	"math/big"
	"strings"
	"testing"
)

// exactPassAtK is 1 - C(n-c,k)/C(n,k) in exact rational arithmetic.
func exactPassAtK(n, c, k int) float64 {
	num := new(big.Int).Binomial(int64(n-c), int64(k)) // 0 when n-c < k
	den := new(big.Int).Binomial(int64(n), int64(k))
	r := new(big.Rat).SetFrac(num, den)
	r.Sub(big.NewRat(1, 1), r)
	f, _ := r.Float64()
	return f
}

// exactPassHatK is C(c,k)/C(n,k) in exact rational arithmetic.
func exactPassHatK(n, c, k int) float64 {
	num := new(big.Int).Binomial(int64(c), int64(k))
	den := new(big.Int).Binomial(int64(n), int64(k))
	f, _ := new(big.Rat).SetFrac(num, den).Float64()
	return f
}

func relClose(got, want, rel float64) bool {
	if want == 0 {
		return got == 0
	}
	return math.Abs(got-want) <= rel*math.Abs(want)
}

func TestPassAtKByHand(t *testing.T) {
	tests := []struct {
		name    string
		n, c, k int
		want    float64
	}{
		{"c=0", 10, 0, 3, 0},
		{"c=n", 10, 10, 3, 1},
		{"all pass k=1", 4, 4, 1, 1},
		{"all fail k=n", 4, 0, 4, 0},
		{"k=1 is c/n", 10, 3, 1, 0.3},
		{"k=n with a pass", 5, 1, 5, 1},
		{"n-c<k", 5, 3, 3, 1},
		// 1 - C(2,2)/C(4,2) = 1 - 1/6.
		{"n=4 c=2 k=2", 4, 2, 2, 5.0 / 6},
		// 1 - C(3,2)/C(5,2) = 1 - 3/10.
		{"n=5 c=2 k=2", 5, 2, 2, 0.7},
		{"G=1 pass", 1, 1, 1, 1},
		{"G=1 fail", 1, 0, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := PassAtK(tt.n, tt.c, tt.k)
			if err != nil {
				t.Fatal(err)
			}
			if !closeTo(got, tt.want, 1e-15) {
				t.Errorf("PassAtK(%d, %d, %d) = %.17g, want %.17g", tt.n, tt.c, tt.k, got, tt.want)
			}
		})
	}
}

func TestPassHatKByHand(t *testing.T) {
	tests := []struct {
		name    string
		n, c, k int
		want    float64
	}{
		{"c=0", 10, 0, 3, 0},
		{"c=n", 10, 10, 3, 1},
		{"k=1 is c/n", 10, 3, 1, 0.3},
		{"k=n all pass", 5, 5, 5, 1},
		{"k=n one fail", 5, 4, 5, 0},
		{"c<k", 5, 2, 3, 0},
		// C(2,2)/C(4,2) = 1/6.
		{"n=4 c=2 k=2", 4, 2, 2, 1.0 / 6},
		// C(3,2)/C(5,2) = 3/10.
		{"n=5 c=3 k=2", 5, 3, 2, 0.3},
		{"G=1 pass", 1, 1, 1, 1},
		{"G=1 fail", 1, 0, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := PassHatK(tt.n, tt.c, tt.k)
			if err != nil {
				t.Fatal(err)
			}
			if !closeTo(got, tt.want, 1e-15) {
				t.Errorf("PassHatK(%d, %d, %d) = %.17g, want %.17g", tt.n, tt.c, tt.k, got, tt.want)
			}
		})
	}
}

// TestPassKLargeN checks against exact rational arithmetic where the
// binomials (C(200,100) ≈ 9e58) would overflow int64 and lose float64
// precision if computed directly.
func TestPassKLargeN(t *testing.T) {
	for _, tc := range []struct{ n, k int }{{200, 100}, {200, 1}, {200, 10}, {200, 199}, {1000, 500}} {
		for _, c := range []int{0, 1, 2, 5, 50, 99, 100, 101, 150, tc.n - 1, tc.n} {
			if c > tc.n {
				continue
			}
			got, err := PassAtK(tc.n, c, tc.k)
			if err != nil {
				t.Fatal(err)
			}
			if want := exactPassAtK(tc.n, c, tc.k); !relClose(got, want, 1e-12) {
				t.Errorf("PassAtK(%d, %d, %d) = %.17g, want %.17g", tc.n, c, tc.k, got, want)
			}
			got, err = PassHatK(tc.n, c, tc.k)
			if err != nil {
				t.Fatal(err)
			}
			if want := exactPassHatK(tc.n, c, tc.k); !relClose(got, want, 1e-12) {
				t.Errorf("PassHatK(%d, %d, %d) = %.17g, want %.17g", tc.n, c, tc.k, got, want)
			}
		}
	}
}

func TestPassKErrors(t *testing.T) {
	tests := []struct {
		name    string
		n, c, k int
		want    string
	}{
		{"k>n", 3, 1, 4, "k = 4"},
		{"k=0", 3, 1, 0, "k = 0"},
		{"c>n", 3, 4, 1, "c = 4"},
		{"c<0", 3, -1, 1, "c = -1"},
		{"n=0", 0, 0, 1, "n = 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for name, f := range map[string]func(n, c, k int) (float64, error){"pass@k": PassAtK, "pass^k": PassHatK} {
				_, err := f(tt.n, tt.c, tt.k)
				if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), name) {
					t.Errorf("%s(%d, %d, %d): got error %v, want one naming %s and %q", name, tt.n, tt.c, tt.k, err, name, tt.want)
				}
			}
		})
	}
}

func TestMeanPassK(t *testing.T) {
	results := []TaskCount{{N: 4, C: 0}, {N: 4, C: 2}, {N: 4, C: 4}}
	at, err := MeanPassAtK(results, 2)
	if err != nil {
		t.Fatal(err)
	}
	// (0 + 5/6 + 1) / 3.
	if want := (5.0/6 + 1) / 3; !closeTo(at, want, 1e-15) {
		t.Errorf("MeanPassAtK = %.17g, want %.17g", at, want)
	}
	hat, err := MeanPassHatK(results, 2)
	if err != nil {
		t.Fatal(err)
	}
	// (0 + 1/6 + 1) / 3.
	if want := (1.0/6 + 1) / 3; !closeTo(hat, want, 1e-15) {
		t.Errorf("MeanPassHatK = %.17g, want %.17g", hat, want)
	}

	if _, err := MeanPassAtK(nil, 1); err == nil || !strings.Contains(err.Error(), "no tasks") {
		t.Errorf("MeanPassAtK(nil): got %v, want a 'no tasks' error", err)
	}
	_, err = MeanPassHatK([]TaskCount{{N: 4, C: 1}, {N: 2, C: 1}}, 3)
	if err == nil || !strings.Contains(err.Error(), "task 1") {
		t.Errorf("MeanPassHatK with a short task: got %v, want an error naming task 1", err)
	}
}
