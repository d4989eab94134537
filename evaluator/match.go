package evaluator

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/benchhq/bench/tasks"
)

// Match compares an observation (got) with the expected one (want) as the
// comparison kind of a golden task says (tasks.Compare*; the checker kind
// is not compared here). It returns "" when they match, or why not, in a
// line a person reads: where they differ and how. It runs in bench's own
// process, on bytes that the agent's code wrote: it must never panic,
// recurse without bound or take more than linear time.
func Match(kind string, tolerance float64, got, want []byte) string {
	switch kind {
	case tasks.CompareExact:
		return matchExact(got, want)
	case tasks.CompareLines:
		return matchLines(lines(got), lines(want))
	case tasks.CompareUnorderedLines:
		return matchUnordered(lines(got), lines(want))
	case tasks.CompareJSON:
		return matchJSON(got, want, tolerance)
	case tasks.CompareNumbers:
		return matchNumbers(got, want, tolerance)
	}
	return fmt.Sprintf("unknown comparison %q", kind)
}

// maxShown bounds a value quoted in a reason.
const maxShown = 120

// show quotes b for a reason, cut to maxShown bytes.
func show(b []byte) string {
	if len(b) > maxShown {
		cut := maxShown
		for cut > 0 && !utf8.RuneStart(b[cut]) {
			cut--
		}
		return strconv.Quote(string(b[:cut])) + "..."
	}
	return strconv.Quote(string(b))
}

func matchExact(got, want []byte) string {
	if bytes.Equal(got, want) {
		return ""
	}
	n := min(len(got), len(want))
	i := 0
	for i < n && got[i] == want[i] {
		i++
	}
	from := max(i-20, 0)
	return fmt.Sprintf("differs at byte %d (of %d, expected %d): got %s, expected %s", i, len(got), len(want), show(got[from:]), show(want[from:]))
}

// lines splits an observation into lines as CompareLines reads them.
func lines(b []byte) [][]byte {
	b = bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
	out := bytes.Split(b, []byte("\n"))
	for i, l := range out {
		out[i] = bytes.TrimRight(l, " \t\r")
	}
	for len(out) > 0 && len(out[len(out)-1]) == 0 {
		out = out[:len(out)-1]
	}
	return out
}

func matchLines(got, want [][]byte) string {
	for i := range min(len(got), len(want)) {
		if !bytes.Equal(got[i], want[i]) {
			return fmt.Sprintf("line %d: got %s, expected %s", i+1, show(got[i]), show(want[i]))
		}
	}
	switch {
	case len(got) > len(want):
		return fmt.Sprintf("%d lines, expected %d: line %d is extra: %s", len(got), len(want), len(want)+1, show(got[len(want)]))
	case len(got) < len(want):
		return fmt.Sprintf("%d lines, expected %d: missing line %d: %s", len(got), len(want), len(got)+1, show(want[len(got)]))
	}
	return ""
}

func matchUnordered(got, want [][]byte) string {
	g, w := slices.Clone(got), slices.Clone(want)
	slices.SortFunc(g, bytes.Compare)
	slices.SortFunc(w, bytes.Compare)
	i, j := 0, 0
	var extra, missing [][]byte
	for i < len(g) || j < len(w) {
		switch {
		case j == len(w) || (i < len(g) && bytes.Compare(g[i], w[j]) < 0):
			extra = append(extra, g[i])
			i++
		case i == len(g) || bytes.Compare(g[i], w[j]) > 0:
			missing = append(missing, w[j])
			j++
		default:
			i++
			j++
		}
	}
	var parts []string
	if len(missing) > 0 {
		parts = append(parts, fmt.Sprintf("%d expected lines missing (first: %s)", len(missing), show(missing[0])))
	}
	if len(extra) > 0 {
		parts = append(parts, fmt.Sprintf("%d lines not expected (first: %s)", len(extra), show(extra[0])))
	}
	return strings.Join(parts, "; ")
}

// numbersEqual says whether two numbers written a and b are equal within
// tol (relative to the larger magnitude, at least 1). Exact decimal values
// are compared exactly when tol is 0, so that large integers do not
// round to the same float. NaN never equals anything.
func numbersEqual(a, b string, tol float64) bool {
	fa, erra := strconv.ParseFloat(a, 64)
	fb, errb := strconv.ParseFloat(b, 64)
	overflow := errors.Is(erra, strconv.ErrRange) || errors.Is(errb, strconv.ErrRange)
	if tol == 0 || overflow {
		// Exactly, as decimals: large integers that round to one float,
		// and values past a float's range, stay apart.
		if ra, rb, ok := rats(a, b); ok {
			return ra.Cmp(rb) == 0
		}
	}
	if (erra != nil && !errors.Is(erra, strconv.ErrRange)) || (errb != nil && !errors.Is(errb, strconv.ErrRange)) {
		return false
	}
	if overflow {
		return false // past a float's range, and not exact decimals
	}
	if math.IsNaN(fa) || math.IsNaN(fb) {
		return false
	}
	if fa == fb {
		return true
	}
	if math.IsInf(fa, 0) || math.IsInf(fb, 0) {
		return false
	}
	return math.Abs(fa-fb) <= tol*max(1, math.Abs(fa), math.Abs(fb))
}

// maxRatExponent bounds the exponent of a number compared as an exact
// decimal: big.Rat would build 10^exponent, and the agent writes the
// numbers.
const maxRatExponent = 400

// rats parses two numbers as exact decimals, when both are and their
// exponents are small enough to compare so.
func rats(a, b string) (*big.Rat, *big.Rat, bool) {
	small := func(s string) bool {
		i := strings.IndexAny(s, "eE")
		if i < 0 {
			return len(s) <= 1000
		}
		e, err := strconv.Atoi(s[i+1:])
		return err == nil && e <= maxRatExponent && e >= -maxRatExponent && i <= 1000
	}
	if !small(a) || !small(b) {
		return nil, nil, false
	}
	ra, oka := new(big.Rat).SetString(a)
	rb, okb := new(big.Rat).SetString(b)
	return ra, rb, oka && okb
}

// isNumber reports whether a word is a number CompareNumbers reads.
func isNumber(w string) bool {
	_, err := strconv.ParseFloat(w, 64)
	return err == nil || errors.Is(err, strconv.ErrRange)
}

func matchNumbers(got, want []byte, tol float64) string {
	g, w := strings.Fields(string(got)), strings.Fields(string(want))
	for i := range min(len(g), len(w)) {
		switch gn, wn := isNumber(g[i]), isNumber(w[i]); {
		case wn && !gn:
			return fmt.Sprintf("word %d: got %s, expected the number %s", i+1, show([]byte(g[i])), w[i])
		case wn && !numbersEqual(g[i], w[i], tol):
			return fmt.Sprintf("word %d: got %s, expected %s (tolerance %g)", i+1, show([]byte(g[i])), w[i], tol)
		case !wn && g[i] != w[i]:
			return fmt.Sprintf("word %d: got %s, expected %s", i+1, show([]byte(g[i])), show([]byte(w[i])))
		}
	}
	if len(g) != len(w) {
		return fmt.Sprintf("%d words, expected %d", len(g), len(w))
	}
	return ""
}

// maxJSONDepth bounds the nesting of a JSON observation.
const maxJSONDepth = 256

// jsonValue is a parsed JSON value: nil, bool, json.Number, string,
// []jsonValue or jsonObject.
type jsonValue any

// jsonObject is a JSON object with its keys in the order written.
type jsonObject struct {
	keys []string
	vals map[string]jsonValue
}

// parseJSON reads exactly one JSON value, strictly: a duplicate key, more
// than one value, trailing bytes or nesting past maxJSONDepth make it
// unreadable.
func parseJSON(b []byte) (jsonValue, error) {
	if !utf8.Valid(b) {
		// encoding/json would read invalid bytes as U+FFFD: two
		// different strings would compare equal.
		return nil, errors.New("not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	v, err := readJSON(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("more than one JSON value, or bytes after it")
	}
	return v, nil
}

func readJSON(dec *json.Decoder, depth int) (jsonValue, error) {
	if depth > maxJSONDepth {
		return nil, fmt.Errorf("nested deeper than %d", maxJSONDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			return nil, errors.New("no JSON value (empty or cut short)")
		}
		return nil, fmt.Errorf("not JSON: %v", err)
	}
	switch d := tok.(type) {
	case json.Delim:
		switch d {
		case '[':
			var arr []jsonValue
			for dec.More() {
				v, err := readJSON(dec, depth+1)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, fmt.Errorf("not JSON: %v", err)
			}
			if arr == nil {
				arr = []jsonValue{}
			}
			return arr, nil
		case '{':
			obj := jsonObject{vals: map[string]jsonValue{}}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, fmt.Errorf("not JSON: %v", err)
				}
				k, _ := kt.(string)
				if _, dup := obj.vals[k]; dup {
					return nil, fmt.Errorf("the key %s appears twice in one object", show([]byte(k)))
				}
				v, err := readJSON(dec, depth+1)
				if err != nil {
					return nil, err
				}
				obj.keys = append(obj.keys, k)
				obj.vals[k] = v
			}
			if _, err := dec.Token(); err != nil {
				return nil, fmt.Errorf("not JSON: %v", err)
			}
			return obj, nil
		}
		return nil, fmt.Errorf("not JSON: unexpected %v", d)
	default:
		return tok, nil
	}
}

func matchJSON(got, want []byte, tol float64) string {
	w, err := parseJSON(want)
	if err != nil {
		return "the expected observation is not JSON bench can read: " + err.Error()
	}
	g, err := parseJSON(got)
	if err != nil {
		return "the observation is not JSON bench can read: " + err.Error()
	}
	return jsonDiff("$", g, w, tol)
}

func jsonType(v jsonValue) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case string:
		return "a string"
	case []jsonValue:
		return "an array"
	case jsonObject:
		return "an object"
	}
	return "?"
}

// jsonDiff says where got and want first differ, or "".
func jsonDiff(at string, got, want jsonValue, tol float64) string {
	if jsonType(got) != jsonType(want) {
		return fmt.Sprintf("at %s: got %s, expected %s", at, jsonType(got), jsonType(want))
	}
	switch w := want.(type) {
	case nil:
		return ""
	case bool:
		if got.(bool) != w {
			return fmt.Sprintf("at %s: got %v, expected %v", at, got, w)
		}
	case json.Number:
		if !numbersEqual(string(got.(json.Number)), string(w), tol) {
			return fmt.Sprintf("at %s: got %s, expected %s", at, got, w)
		}
	case string:
		if got.(string) != w {
			return fmt.Sprintf("at %s: got %s, expected %s", at, show([]byte(got.(string))), show([]byte(w)))
		}
	case []jsonValue:
		g := got.([]jsonValue)
		for i := range min(len(g), len(w)) {
			if d := jsonDiff(fmt.Sprintf("%s[%d]", at, i), g[i], w[i], tol); d != "" {
				return d
			}
		}
		if len(g) != len(w) {
			return fmt.Sprintf("at %s: %d elements, expected %d", at, len(g), len(w))
		}
	case jsonObject:
		g := got.(jsonObject)
		for _, k := range w.keys {
			gv, ok := g.vals[k]
			if !ok {
				return fmt.Sprintf("at %s: the key %s is missing", at, show([]byte(k)))
			}
			if d := jsonDiff(at+"."+k, gv, w.vals[k], tol); d != "" {
				return d
			}
		}
		for _, k := range g.keys {
			if _, ok := w.vals[k]; !ok {
				return fmt.Sprintf("at %s: the key %s is not expected", at, show([]byte(k)))
			}
		}
	}
	return ""
}
