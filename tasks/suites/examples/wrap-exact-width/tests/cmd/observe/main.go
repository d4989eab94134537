// Command observe runs package textwrap on bench's golden cases: every
// file of $BENCH_CASES is a JSON list of calls, and the JSON list of their
// results goes to $BENCH_OBSERVATIONS/<case>. bench compares them, out of
// this process, with the reference solution's.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	textwrap "example.com/textwrap"
)

// call is one call of the package's exported API.
type call struct {
	Func   string `json:"func"`
	Text   string `json:"text"`
	Width  int    `json:"width"`
	Prefix string `json:"prefix"`
}

// result is what one call returned, or that it panicked.
type result struct {
	Value any  `json:"value"`
	Panic bool `json:"panic,omitempty"`
}

func run(c call) (r result) {
	defer func() {
		if recover() != nil {
			r = result{Panic: true}
		}
	}()
	switch c.Func {
	case "Wrap":
		return result{Value: textwrap.Wrap(c.Text, c.Width)}
	case "Fill":
		return result{Value: textwrap.Fill(c.Text, c.Width)}
	case "Indent":
		return result{Value: textwrap.Indent(c.Text, c.Prefix, c.Width)}
	}
	panic("unknown function " + c.Func)
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
