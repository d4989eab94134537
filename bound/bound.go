// Package bound is a token figure that may be known from one side only.
//
// Ollama cuts a prompt longer than its context silently and reports what it
// kept, so a truncated prompt count is a lower bound on the prompt, and every
// figure computed from it is a bound too: a difference with a truncated count
// is at least, or at most, what it says. Reports print bounds with ≥ or ≤,
// never as plain figures, and "?" when nothing is known.
package bound

import (
	"math"
	"strconv"
)

// Kind says how much is known of a Value.
type Kind int

// The kinds of a Value.
const (
	// Exact: the number is the count.
	Exact Kind = iota
	// AtLeast: the count is the number or more (a prompt Ollama cut).
	AtLeast
	// AtMost: the count is the number or less (a lower bound subtracted).
	AtMost
	// Unknown: a lower bound minus a lower bound, or the like; the number
	// is what the measurements gave, and says nothing.
	Unknown
)

// Value is a figure and what is known of it.
type Value struct {
	N    int
	Kind Kind
}

// Of is n, exact, or at least n when cut is true: a measured prompt.
func Of(n int, cut bool) Value {
	if cut {
		return Value{N: n, Kind: AtLeast}
	}
	return Value{N: n}
}

// Plus adds two values: at least + at least is at least, at least + at
// most is unknown.
func (v Value) Plus(o Value) Value { return Value{N: v.N + o.N, Kind: combine(v.Kind, o.Kind)} }

// Minus subtracts o: at least − exact is at least, exact − at least is at
// most, at least − at least is unknown.
func (v Value) Minus(o Value) Value { return Value{N: v.N - o.N, Kind: combine(v.Kind, o.Kind.flip())} }

// Times scales a value by a non-negative factor, rounded.
func (v Value) Times(f float64) Value {
	return Value{N: int(math.Round(float64(v.N) * f)), Kind: v.Kind}
}

// IsExact reports whether the figure is the count itself.
func (v Value) IsExact() bool { return v.Kind == Exact }

// Mark is the sign a figure of this kind is printed with: "", "≥" or "≤"
// ("?" for Unknown, which is printed alone).
func (k Kind) Mark() string {
	switch k {
	case AtLeast:
		return "≥"
	case AtMost:
		return "≤"
	case Unknown:
		return "?"
	}
	return ""
}

// Format prints the value with num for the number: "2,048", "≥2,048",
// "≤-1,370", or "?" when nothing is known.
func (v Value) Format(num func(int) string) string {
	if v.Kind == Unknown {
		return "?"
	}
	return v.Kind.Mark() + num(v.N)
}

// String prints the value with strconv.Itoa.
func (v Value) String() string { return v.Format(strconv.Itoa) }

// FormatFloat prints f, a figure derived from a value of kind k (a mean,
// a share), with num for the number and the kind's mark.
func (k Kind) FormatFloat(f float64, num func(float64) string) string {
	if k == Unknown {
		return "?"
	}
	return k.Mark() + num(f)
}

func (k Kind) flip() Kind {
	switch k {
	case AtLeast:
		return AtMost
	case AtMost:
		return AtLeast
	}
	return k
}

func combine(a, b Kind) Kind {
	switch {
	case a == Unknown || b == Unknown:
		return Unknown
	case a == Exact:
		return b
	case b == Exact || a == b:
		return a
	}
	return Unknown
}
