package bound_test

import (
	"strconv"
	"testing"

	"github.com/benchhq/bench/bound"
)

// comma writes n with thousands separated by commas.
func comma(n int) string {
	s := strconv.Itoa(n)
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		return "-" + s
	}
	return s
}

func TestBoundArithmetic(t *testing.T) {
	exact := func(n int) bound.Value { return bound.Value{N: n} }
	least := func(n int) bound.Value { return bound.Value{N: n, Kind: bound.AtLeast} }
	most := func(n int) bound.Value { return bound.Value{N: n, Kind: bound.AtMost} }
	tests := []struct {
		name string
		got  bound.Value
		want string
	}{
		{"exact", exact(2048), "2,048"},
		{"cut minus exact", least(2048).Minus(exact(18)), "≥2,030"},
		{"exact minus cut", exact(500).Minus(least(2030)), "≤-1,530"},
		{"cut minus cut", least(2048).Minus(least(2048)), "?"},
		{"cut plus exact", least(100).Plus(exact(5)), "≥105"},
		{"at least plus at most", least(100).Plus(most(5)), "?"},
		{"at most minus at least", most(10).Minus(least(3)), "≤7"},
		{"times", least(546).Times(10), "≥5,460"},
	}
	for _, tt := range tests {
		if got := tt.got.Format(comma); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
