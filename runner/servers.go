package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/agent/mcp"
	"github.com/benchhq/bench/overhead"
	"github.com/benchhq/bench/results"
	"github.com/benchhq/bench/tasks"
)

// attached is one MCP server connected for an attempt.
type attached struct {
	name  string
	conn  *mcp.Conn
	tools []agent.Tool
}

// servers lists the MCP servers of an attempt: the task's, then the arm's.
func servers(t *tasks.Task, arm Arm) []tasks.Server {
	return append(append([]tasks.Server(nil), t.Servers...), arm.Servers...)
}

// connect starts or reaches every server of a list. Each server's
// description flags are checked against the names of the tools offered
// before it (otherTools, then the servers connected earlier). On an error
// the servers already connected are shut down.
func (r *Runner) connect(ctx context.Context, list []tasks.Server, vars mcp.Vars, otherTools []string, wrap func([]string) []string) ([]*attached, error) {
	var out []*attached
	others := append([]string(nil), otherTools...)
	for _, srv := range list {
		conn, err := mcp.Connect(ctx, srv, vars, mcp.Options{OtherTools: others, Wrap: wrap, StartTimeout: r.StartTimeout, Flags: r.flags, Auth: r.auth})
		if err != nil {
			closeAll(out)
			return nil, err
		}
		a := &attached{name: srv.Name, conn: conn, tools: conn.Tools()}
		for _, t := range a.tools {
			others = append(others, t.Spec().Name)
		}
		out = append(out, a)
	}
	return out, nil
}

// connsOf returns the connections of the attached servers.
func connsOf(list []*attached) []*mcp.Conn {
	out := make([]*mcp.Conn, len(list))
	for i, a := range list {
		out[i] = a.conn
	}
	return out
}

// closeAll shuts servers down and returns what each left for the store.
func closeAll(list []*attached) []results.ServerLog {
	var logs []results.ServerLog
	for _, a := range list {
		info := a.conn.Info()
		catalog, _ := json.Marshal(a.conn.Catalog())
		stderr := a.conn.Close()
		logs = append(logs, results.ServerLog{
			Name:            a.name,
			ProtocolVersion: info.ProtocolVersion,
			ServerName:      info.ServerName,
			ServerVersion:   info.ServerVersion,
			Stderr:          stderr,
			Catalog:         string(catalog),
		})
	}
	return logs
}

// vars are the placeholder values of an attempt of a task (nil for none:
// {task} and {data} then cannot be used).
func (r *Runner) vars(t *tasks.Task, workspace string) mcp.Vars {
	v := mcp.Vars{Workspace: workspace, Bench: r.BenchPath}
	if t != nil {
		v.Task, v.Data = t.Dir, t.DataDir()
	}
	return v
}

// ToolSets is what an arm offers the model, as tool sets: the built-in
// tools the arm allows, then the tools of each server of list, connected
// once in a scratch workspace (with task's folders for the placeholders,
// when task is not nil) and shut down again. Tools a server lists but does
// not offer are logged. The tools' specs stay usable after the servers are
// gone, for measuring them and for checking names; calling them is not.
func (r *Runner) ToolSets(ctx context.Context, arm Arm, list []tasks.Server, task *tasks.Task) ([]overhead.ToolSet, error) {
	dir, err := os.MkdirTemp(r.TempDir, "bench-tools-")
	if err != nil {
		return nil, fmt.Errorf("tools of arm %s: %w", arm.Name, err)
	}
	defer os.RemoveAll(dir)
	ws, err := agent.NewWorkspace(dir)
	if err != nil {
		return nil, fmt.Errorf("tools of arm %s: %w", arm.Name, err)
	}
	reg, err := builtinRegistry(r.schemas, ws, arm, agent.BuiltinOptions{})
	if err != nil {
		return nil, err
	}
	sets := []overhead.ToolSet{{Name: overhead.BuiltinSet, Tools: reg.Tools()}}
	conns, err := r.connect(ctx, list, r.vars(task, dir), reg.Names(), nil)
	if err != nil {
		return nil, fmt.Errorf("arm %s: %w", arm.Name, err)
	}
	for _, c := range conns {
		for _, s := range c.conn.Skipped() {
			r.logf("warning: MCP server %s: tool %s is not offered: %s", c.name, s.Tool, s.Reason)
		}
		sets = append(sets, overhead.ToolSet{Name: c.name, Tools: c.tools})
	}
	closeAll(conns)
	return sets, nil
}

// checkTaskServers connects each task's own servers once and checks,
// under every arm, that no tool would shadow another: a server that fails
// discovery or listing, or a name collision, stops the run before any
// attempt. armSets are the arms' tool sets, by arm name.
func (r *Runner) checkTaskServers(ctx context.Context, plan *Plan, armSets map[string][]overhead.ToolSet) error {
	for _, t := range plan.Suite.Tasks {
		if len(t.Servers) == 0 {
			continue
		}
		first := plan.Arms[0]
		taskSets, err := r.ToolSets(ctx, Arm{Name: first.Name, Tools: first.Tools}, t.Servers, t)
		if err != nil {
			return fmt.Errorf("task %s: %w", t.ID, err)
		}
		for _, arm := range plan.Arms {
			reg := agent.NewRegistry()
			for _, set := range append(armSets[arm.Name], taskSets[1:]...) {
				for _, tool := range set.Tools {
					if err := reg.Add(tool); err != nil {
						return fmt.Errorf("task %s, arm %s: %w", t.ID, arm.Name, err)
					}
				}
			}
		}
	}
	return nil
}

// addServerTools adds the servers' tools to a registry; a name collision
// (with a built-in or another server's tool) is an error naming both.
func addServerTools(reg *agent.Registry, conns []*attached) error {
	for _, c := range conns {
		for _, t := range c.tools {
			if err := reg.Add(t); err != nil {
				return err
			}
		}
	}
	return nil
}
