package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/evaluator"
	"github.com/benchhq/bench/runner"
)

// addServerProblems starts each task's own MCP servers once, as a run's
// preflight does (runner.Runner.ToolSets: its placeholders filled, its
// tools listed and checked, none shadowing a built-in tool), and adds to a
// task's problems why one of them would stop a run. A task without
// servers is left as it is. Validations that are nil are skipped.
func addServerProblems(ctx context.Context, vals []*evaluator.Validation, startTimeout time.Duration, stderr io.Writer) {
	exe, _ := os.Executable()
	r := &runner.Runner{Log: io.Discard, BenchPath: exe, StartTimeout: startTimeout}
	for _, v := range vals {
		if v == nil || len(v.Task.Servers) == 0 {
			continue
		}
		fmt.Fprintf(stderr, "validate %s: starting its %s\n", v.Task.ID, count(len(v.Task.Servers), "MCP server"))
		sets, err := r.ToolSets(ctx, runner.Arm{Name: "validate"}, v.Task.Servers, v.Task)
		if err != nil {
			v.Problems = append(v.Problems, fmt.Sprintf("MCP server: %v", err))
			continue
		}
		reg := agent.NewRegistry()
		for _, set := range sets {
			for _, tool := range set.Tools {
				if err := reg.Add(tool); err != nil {
					v.Problems = append(v.Problems, fmt.Sprintf("MCP server %s: %v", set.Name, err))
				}
			}
		}
	}
}
