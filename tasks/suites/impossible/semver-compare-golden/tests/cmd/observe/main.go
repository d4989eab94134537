// Command observe runs package semver on bench's golden cases: every file
// of $BENCH_CASES is a JSON list of calls, and the JSON list of their
// results goes to $BENCH_OBSERVATIONS/<case>. bench compares them, out of
// this process, with the reference solution's.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"example.com/semver"
)

// call is one call of the package's exported API.
type call struct {
	Func     string   `json:"func"`
	A        string   `json:"a"`
	B        string   `json:"b"`
	Version  string   `json:"version"`
	Versions []string `json:"versions"`
}

// result is what one call gave: a value, or only that it failed (the
// error's words are the implementation's own).
type result struct {
	Value any  `json:"value,omitempty"`
	Error bool `json:"error,omitempty"`
	Panic bool `json:"panic,omitempty"`
}

func run(c call) (r result) {
	defer func() {
		if recover() != nil {
			r = result{Panic: true}
		}
	}()
	var v any
	var err error
	switch c.Func {
	case "Compare":
		v, err = semver.Compare(c.A, c.B)
	case "Sort":
		vs := append([]string{}, c.Versions...)
		err = semver.Sort(vs)
		v = vs
	case "Latest":
		v, err = semver.Latest(c.Versions)
	case "Parse":
		var p semver.Version
		p, err = semver.Parse(c.Version)
		v = p.String()
	default:
		panic("unknown function " + c.Func)
	}
	if err != nil {
		return result{Error: true}
	}
	return result{Value: v}
}

func main() {
	cases, out := os.Getenv("BENCH_CASES"), os.Getenv("BENCH_OBSERVATIONS")
	entries, err := os.ReadDir(cases)
	if err != nil {
		fmt.Fprintln(os.Stderr, "observe:", err)
		os.Exit(1)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(cases, e.Name()))
		if err != nil {
			fmt.Fprintln(os.Stderr, "observe:", err)
			os.Exit(1)
		}
		var calls []call
		if err := json.Unmarshal(b, &calls); err != nil {
			fmt.Fprintf(os.Stderr, "observe: case %s: %v\n", e.Name(), err)
			os.Exit(1)
		}
		results := make([]result, len(calls))
		for i, c := range calls {
			results[i] = run(c)
		}
		obs, _ := json.Marshal(results)
		if err := os.WriteFile(filepath.Join(out, e.Name()), append(obs, '\n'), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "observe:", err)
			os.Exit(1)
		}
	}
}
