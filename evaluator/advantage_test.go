package evaluator

import (
	"math"
	"strings"
	"testing"
)

func closeTo(got, want, tol float64) bool {
	if math.IsNaN(want) {
		return math.IsNaN(got)
	}
	return math.Abs(got-want) <= tol
}

func TestAdvParseMethod(t *testing.T) {
	for _, m := range Methods() {
		got, err := ParseMethod(string(m))
		if err != nil || got != m {
			t.Errorf("ParseMethod(%q) = %q, %v; want %q, nil", m, got, err, m)
		}
	}
	_, err := ParseMethod("ppo")
	if err == nil {
		t.Fatal(`ParseMethod("ppo"): want an error`)
	}
	for _, want := range []string{`"ppo"`, "grpo", "grpo-batch", "drgrpo", "rloo"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("ParseMethod error %q does not mention %s", err, want)
		}
	}
}

func TestAdvMethodUnmarshalText(t *testing.T) {
	var m Method
	if err := m.UnmarshalText([]byte("rloo")); err != nil || m != RLOO {
		t.Errorf("UnmarshalText(rloo) = %q, %v; want rloo, nil", m, err)
	}
	if err := m.UnmarshalText([]byte("GRPO")); err == nil {
		t.Error("UnmarshalText(GRPO): want an error, names are lower case")
	}
}

func TestAdvantages(t *testing.T) {
	// Group [1,0,0,0]: mean .25, Bessel std sqrt((.75² + 3·.25²)/3) = .5.
	const d = 0.5 + GRPOEpsilon
	// Group [1,1,0,0]: mean .5, std sqrt(4·.25/3) = 1/sqrt(3).
	s2 := 1/math.Sqrt(3) + GRPOEpsilon
	// Batch [1,0,0,0,1,1,0,0] (3/8 pass): std sqrt((3·(5/8)² + 5·(3/8)²)/7) = sqrt(15/56).
	sb := math.Sqrt(15.0/56) + GRPOEpsilon
	tests := []struct {
		name   string
		method Method
		groups [][]float64
		want   [][]float64
	}{
		{"grpo one pass of four", GRPO, [][]float64{{1, 0, 0, 0}},
			[][]float64{{.75 / d, -.25 / d, -.25 / d, -.25 / d}}},
		{"grpo two of four", GRPO, [][]float64{{1, 1, 0, 0}},
			[][]float64{{.5 / s2, .5 / s2, -.5 / s2, -.5 / s2}}},
		{"grpo all pass", GRPO, [][]float64{{1, 1, 1}}, [][]float64{{0, 0, 0}}},
		{"grpo all fail", GRPO, [][]float64{{0, 0, 0}}, [][]float64{{0, 0, 0}}},
		{"grpo group of one", GRPO, [][]float64{{1}, {0}}, [][]float64{{0}, {0}}},
		{"grpo empty group", GRPO, [][]float64{{}, {1, 0}},
			// [1,0]: mean .5, std sqrt(.5) .
			[][]float64{{}, {.5 / (math.Sqrt(.5) + GRPOEpsilon), -.5 / (math.Sqrt(.5) + GRPOEpsilon)}}},
		{"grpo no groups", GRPO, nil, [][]float64{}},
		{"grpo-batch", GRPOBatch, [][]float64{{1, 0, 0, 0}, {1, 1, 0, 0}},
			[][]float64{{.75 / sb, -.25 / sb, -.25 / sb, -.25 / sb}, {.5 / sb, .5 / sb, -.5 / sb, -.5 / sb}}},
		{"grpo-batch zero-variance group stays 0", GRPOBatch, [][]float64{{1, 1}, {1, 0}},
			// batch [1,1,1,0]: std sqrt((3·.25² + .75²)/3) = .5.
			[][]float64{{0, 0}, {.5 / d, -.5 / d}}},
		{"grpo-batch single reward", GRPOBatch, [][]float64{{1}}, [][]float64{{0}}},
		{"drgrpo", DrGRPO, [][]float64{{1, 0, 0, 0}, {1, 1, 1}},
			[][]float64{{.75, -.25, -.25, -.25}, {0, 0, 0}}},
		{"drgrpo fractional", DrGRPO, [][]float64{{.5, 1, 0}}, [][]float64{{0, .5, -.5}}},
		// RLOO by hand: 1 - (0+0+0)/3 = 1; 0 - (1+0+0)/3 = -1/3.
		{"rloo one of four", RLOO, [][]float64{{1, 0, 0, 0}},
			[][]float64{{1, -1.0 / 3, -1.0 / 3, -1.0 / 3}}},
		// 1 - (1+0)/2 = .5; 0 - (1+1)/2 = -1.
		{"rloo two of three", RLOO, [][]float64{{1, 1, 0}}, [][]float64{{.5, .5, -1}}},
		{"rloo pair", RLOO, [][]float64{{1, 0}}, [][]float64{{1, -1}}},
		{"rloo group of one", RLOO, [][]float64{{1}}, [][]float64{{0}}},
		{"rloo all pass", RLOO, [][]float64{{1, 1, 1, 1}}, [][]float64{{0, 0, 0, 0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Advantages(tt.method, tt.groups)
			if err != nil {
				t.Fatalf("Advantages: %v", err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d groups, want %d", len(got), len(tt.want))
			}
			for g := range tt.want {
				if len(got[g]) != len(tt.want[g]) {
					t.Fatalf("group %d: got %d advantages, want %d", g, len(got[g]), len(tt.want[g]))
				}
				for i := range tt.want[g] {
					if !closeTo(got[g][i], tt.want[g][i], 1e-12) {
						t.Errorf("group %d, attempt %d: got %.15g, want %.15g", g, i, got[g][i], tt.want[g][i])
					}
				}
			}
		})
	}
}

func TestAdvantagesGRPOByHand(t *testing.T) {
	// The brief's vector, with numbers written out: .75/.5001 and -.25/.5001.
	got, err := Advantages(GRPO, [][]float64{{1, 0, 0, 0}})
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{1.4997000599880024, -0.4999000199960008, -0.4999000199960008, -0.4999000199960008}
	for i := range want {
		if !closeTo(got[0][i], want[i], 1e-15) {
			t.Errorf("attempt %d: got %.17g, want %.17g", i, got[0][i], want[i])
		}
	}
}

func TestAdvantagesSumToZero(t *testing.T) {
	groups := [][]float64{{1, 0, 1, 1, 0, 0, 0}, {0.3, 0.9, 0.1}, {1, 0}}
	for _, m := range Methods() {
		adv, err := Advantages(m, groups)
		if err != nil {
			t.Fatal(err)
		}
		for g, a := range adv {
			var sum float64
			for _, x := range a {
				sum += x
			}
			if math.Abs(sum) > 1e-12 {
				t.Errorf("%s group %d: advantages sum to %g, want 0", m, g, sum)
			}
		}
	}
}

func TestAdvantagesErrors(t *testing.T) {
	tests := []struct {
		name   string
		method Method
		groups [][]float64
		want   string
	}{
		{"unknown method", "ppo", [][]float64{{1}}, "unknown advantage method"},
		{"NaN reward", GRPO, [][]float64{{1, 0}, {0, math.NaN()}}, "group 1, reward 1"},
		{"infinite reward", RLOO, [][]float64{{math.Inf(1)}}, "group 0, reward 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Advantages(tt.method, tt.groups)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestAdvZeroVarianceShare(t *testing.T) {
	tests := []struct {
		name   string
		groups [][]float64
		want   float64
	}{
		{"none", nil, 0},
		{"only empty", [][]float64{{}, {}}, 0},
		{"mixed", [][]float64{{1, 1}, {0, 0, 0}, {1, 0}, {0, 1, 1}}, 0.5},
		{"group of one counts", [][]float64{{1}, {1, 0}}, 0.5},
		{"empty skipped", [][]float64{{}, {1, 0}, {1, 1}}, 0.5},
		{"all informative", [][]float64{{1, 0}, {0, 1}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ZeroVarianceShare(tt.groups); got != tt.want {
				t.Errorf("got %g, want %g", got, tt.want)
			}
		})
	}
}
