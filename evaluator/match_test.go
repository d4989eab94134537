package evaluator_test

import (
	"strings"
	"testing"

	"github.com/benchhq/bench/evaluator"
	"github.com/benchhq/bench/tasks"
)

func TestMatch(t *testing.T) {
	for _, c := range []struct {
		name, kind string
		tol        float64
		got, want  string
		// why is a part of the reason of a mismatch; "" for a match.
		why string
	}{
		{"exact same", tasks.CompareExact, 0, "a\nb\n", "a\nb\n", ""},
		{"exact trailing newline", tasks.CompareExact, 0, "a\nb", "a\nb\n", "differs at byte 3"},
		{"lines ignore CRLF and trailing blanks", tasks.CompareLines, 0, "a  \r\nb\n\n\n", "a\nb", ""},
		{"lines differ", tasks.CompareLines, 0, "a\nc\n", "a\nb\n", "line 2"},
		{"lines extra", tasks.CompareLines, 0, "a\nb\nc", "a\nb", "line 3 is extra"},
		{"lines missing", tasks.CompareLines, 0, "a", "a\nb", "missing line 2"},
		{"lines keep leading blanks", tasks.CompareLines, 0, " a", "a", "line 1"},
		{"unordered same multiset", tasks.CompareUnorderedLines, 0, "b\na\na\n", "a\nb\na", ""},
		{"unordered count matters", tasks.CompareUnorderedLines, 0, "a\nb\n", "a\na\nb", "1 expected lines missing"},
		{"unordered extra", tasks.CompareUnorderedLines, 0, "a\nb\nz", "b\na", "not expected"},
		{"json keys in any order", tasks.CompareJSON, 0, `{"b":[1,2],"a":{"x":null}}`, `{"a":{"x":null},"b":[1,2]}`, ""},
		{"json numbers by value", tasks.CompareJSON, 0, `[1.0, 1e2, -0]`, `[1, 100, 0]`, ""},
		{"json big integers exactly", tasks.CompareJSON, 0, `9007199254740993`, `9007199254740992`, "got 9007199254740993"},
		{"json tolerance", tasks.CompareJSON, 1e-6, `[0.3000000001]`, `[0.3]`, ""},
		{"json wrong type", tasks.CompareJSON, 0, `{"age":"36"}`, `{"age":36}`, "at $.age: got a string, expected a number"},
		{"json duplicate key", tasks.CompareJSON, 0, `{"a":1,"a":2}`, `{"a":2}`, "appears twice"},
		{"json trailing bytes", tasks.CompareJSON, 0, `{"a":1} x`, `{"a":1}`, "more than one JSON value"},
		{"json two values", tasks.CompareJSON, 0, `1 2`, `1`, "more than one JSON value"},
		{"json truncated", tasks.CompareJSON, 0, `[1, 2`, `[1, 2]`, "not JSON"},
		{"json empty", tasks.CompareJSON, 0, ``, `[]`, "no JSON value"},
		{"json missing key", tasks.CompareJSON, 0, `{}`, `{"a":1}`, "the key \"a\" is missing"},
		{"json extra key", tasks.CompareJSON, 0, `{"a":1,"b":2}`, `{"a":1}`, "the key \"b\" is not expected"},
		{"json array length", tasks.CompareJSON, 0, `[1]`, `[1,2]`, "1 elements, expected 2"},
		{"json too deep", tasks.CompareJSON, 0, strings.Repeat("[", 300) + strings.Repeat("]", 300), `[]`, "nested deeper"},
		{"numbers within tolerance", tasks.CompareNumbers, 1e-3, "x= 3.1416 y=2\n", "x= 3.14159 y=2", ""},
		{"numbers outside tolerance", tasks.CompareNumbers, 1e-6, "3.1416", "3.14159", "word 1"},
		{"numbers NaN never equal", tasks.CompareNumbers, 1, "NaN", "NaN", "word 1"},
		{"numbers text must match", tasks.CompareNumbers, 0, "total 3", "sum 3", "word 1"},
		{"numbers expected a number", tasks.CompareNumbers, 0, "three", "3", "expected the number 3"},
		{"numbers count", tasks.CompareNumbers, 0, "1 2", "1 2 3", "2 words, expected 3"},
		{"numbers infinity equals itself", tasks.CompareNumbers, 0, "+Inf", "Inf", ""},
		{"numbers huge exact", tasks.CompareNumbers, 0, "12345678901234567890", "12345678901234567891", "word 1"},
		{"numbers past a float's range stay apart", tasks.CompareNumbers, 1e-6, "1e999", "1e400", "word 1"},
		{"numbers past a float's range equal themselves", tasks.CompareNumbers, 1e-6, "1e400", "1e400", ""},
		{"numbers with huge exponents, past a float's range, apart", tasks.CompareNumbers, 0, "1e999999", "1e999998", "word 1"},
		{"numbers with huge exponents, zero, equal", tasks.CompareNumbers, 0, "0e999999", "0", ""},
		{"json invalid UTF-8", tasks.CompareJSON, 0, "\"\xff\"", "\"\xfe\"", "not valid UTF-8"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := evaluator.Match(c.kind, c.tol, []byte(c.got), []byte(c.want))
			switch {
			case c.why == "" && got != "":
				t.Errorf("Match = %q, want a match", got)
			case c.why != "" && !strings.Contains(got, c.why):
				t.Errorf("Match = %q, want a mismatch saying %q", got, c.why)
			}
		})
	}
}

// Match runs in bench's process on bytes the agent's code wrote: nothing
// may make it panic.
func FuzzMatch(f *testing.F) {
	for _, s := range []string{`{"a":[1,2,{"b":null}]}`, "1 2 3", "a\r\nb\n", `[1e999]`, "NaN inf -0"} {
		f.Add(s, s, 0.0)
	}
	f.Fuzz(func(t *testing.T, got, want string, tol float64) {
		for _, k := range tasks.CompareKinds() {
			if k == tasks.CompareChecker {
				continue
			}
			if r := evaluator.Match(k, tol, []byte(want), []byte(want)); r != "" && k != tasks.CompareJSON && k != tasks.CompareNumbers {
				t.Errorf("%s: %q does not match itself: %s", k, want, r)
			}
			evaluator.Match(k, tol, []byte(got), []byte(want))
		}
	})
}
