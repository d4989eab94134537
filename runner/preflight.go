package runner

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/ollama/ollama/api"

	"github.com/benchhq/bench/agent"
)

// preflight checks, before the first attempt, what would otherwise fail
// every attempt one by one: the arms' tool sets, and a model server that is
// down, a model that is not pulled, or one that cannot take tools. It sends
// one tiny request with the tools of the first arm and num_predict 1.
func (r *Runner) preflight(ctx context.Context, plan *Plan) error {
	dir, err := os.MkdirTemp(r.TempDir, "bench-preflight-")
	if err != nil {
		return fmt.Errorf("make temp folder: %w", err)
	}
	defer os.RemoveAll(dir)
	ws, err := agent.NewWorkspace(dir)
	if err != nil {
		return err
	}
	var tools []api.Tool
	for i, arm := range plan.Arms {
		reg, err := builtinRegistry(ws, arm, agent.BuiltinOptions{})
		if err != nil {
			return err
		}
		for _, t := range reg.Tools() {
			def, err := agent.OllamaTool(t.Spec())
			if err != nil {
				return fmt.Errorf("arm %s: %w", arm.Name, err)
			}
			if i == 0 {
				tools = append(tools, def)
			}
		}
	}
	opts := map[string]any{"num_predict": 1, "num_ctx": plan.Options["num_ctx"], "temperature": 0}
	_, err = r.Model.Chat(ctx, &api.ChatRequest{
		Model:    plan.Model,
		Messages: []api.Message{{Role: "user", Content: "Reply with OK."}},
		Tools:    tools,
		Options:  opts,
	})
	if err != nil {
		var me *agent.ModelError
		if errors.As(err, &me) {
			if hint := me.Hint(); hint != "" {
				return fmt.Errorf("%w\n  → %s", err, hint)
			}
		}
		return err
	}
	return nil
}
