package agent

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"

	"github.com/ollama/ollama/api"
)

// CheckOptions returns the first Ollama option bench refuses, as its key
// and what was expected, or "", "" when all are fine. It is the one rule
// for options, wherever they are given: a run file's [options], bench
// run's --temperature, --num-ctx and --num-predict, a stored plan. An
// option must be one Ollama knows (api.Options names them: Ollama ignores
// any other, so a typo would silently change nothing), of its type, and in
// its range; seed is refused, since each attempt's seed derives from the
// run seed. Numbers may come as int, int64, float64 or json.Number, as
// flags, TOML and JSON give them.
func CheckOptions(opts map[string]any) (key, msg string) {
	kinds := optionKinds()
	for _, k := range slices.Sorted(maps.Keys(opts)) {
		v := opts[k]
		if k == "seed" {
			return k, "set the run seed instead (seed = N, --seed N): each attempt's seed derives from it"
		}
		kind, ok := kinds[k]
		if !ok {
			return k, fmt.Sprintf("not an Ollama option (Ollama would ignore it; expected one of: %s)", strings.Join(slices.Sorted(maps.Keys(kinds)), ", "))
		}
		if m := checkOption(k, kind, v); m != "" {
			return k, m
		}
	}
	return "", ""
}

// checkOption checks one value against its field's kind in api.Options
// and its range.
func checkOption(key string, kind reflect.Kind, v any) string {
	switch kind {
	case reflect.Int:
		n, ok := integer(v)
		if !ok {
			return fmt.Sprintf("expected an integer, got %s", describe(v))
		}
		switch key {
		case "num_ctx":
			if n < 1 {
				return fmt.Sprintf("expected a positive integer, got %d", n)
			}
		case "num_predict":
			if n < -2 {
				return fmt.Sprintf("expected a number of tokens, or -1 (no limit) or -2 (fill the context), got %d", n)
			}
		case "top_k", "num_keep", "repeat_last_n", "num_batch", "num_thread":
			if n < -1 {
				return fmt.Sprintf("expected 0 or more, got %d", n)
			}
		}
	case reflect.Float32, reflect.Float64:
		f, ok := number(v)
		if !ok {
			return fmt.Sprintf("expected a number, got %s", describe(v))
		}
		switch key {
		case "temperature":
			if f < 0 {
				return fmt.Sprintf("expected 0 or more, got %g", f)
			}
		case "top_p", "min_p", "typical_p":
			if f < 0 || f > 1 {
				return fmt.Sprintf("expected a number from 0 to 1, got %g", f)
			}
		}
	case reflect.Bool, reflect.Pointer: // use_mmap is a *bool
		if _, ok := v.(bool); !ok {
			return fmt.Sprintf("expected true or false, got %s", describe(v))
		}
	case reflect.String:
		if _, ok := v.(string); !ok {
			return fmt.Sprintf("expected a string, got %s", describe(v))
		}
	case reflect.Slice:
		ok := true
		switch l := v.(type) {
		case []string:
		case []any:
			for _, e := range l {
				_, isString := e.(string)
				ok = ok && isString
			}
		default:
			ok = false
		}
		if !ok {
			return fmt.Sprintf("expected an array of strings, got %s", describe(v))
		}
	}
	return ""
}

// optionKinds maps every option of api.Options (its json names) to the
// kind of its field.
func optionKinds() map[string]reflect.Kind {
	out := map[string]reflect.Kind{}
	for _, f := range reflect.VisibleFields(reflect.TypeFor[api.Options]()) {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "" && name != "-" && !f.Anonymous {
			out[name] = f.Type.Kind()
		}
	}
	return out
}

// integer reads a whole number of any numeric type flags, TOML and JSON
// give.
func integer(v any) (int64, bool) {
	switch n := v.(type) {
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	case int64:
		return n, true
	case float64:
		if n == math.Trunc(n) && !math.IsInf(n, 0) {
			return int64(n), true
		}
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	}
	return 0, false
}

// number reads any number.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int32:
		return float64(n), true
	case int64:
		return float64(n), true
	case float32:
		return float64(n), true
	case float64:
		return n, !math.IsNaN(n) && !math.IsInf(n, 0)
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// describe shows a value given where another type was expected.
func describe(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("the string %q", x)
	case bool:
		return fmt.Sprintf("%v", x)
	case nil:
		return "nothing"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	return string(b)
}
