package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/agent/mcp"
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

// connect starts or reaches every server of a list for one attempt. On an
// error the servers already connected are shut down.
func (r *Runner) connect(ctx context.Context, list []tasks.Server, vars mcp.Vars, otherTools []string, wrap func([]string) []string) ([]*attached, error) {
	var out []*attached
	for _, srv := range list {
		conn, err := mcp.Connect(ctx, srv, vars, mcp.Options{OtherTools: otherTools, Wrap: wrap})
		if err != nil {
			closeAll(out)
			return nil, err
		}
		out = append(out, &attached{name: srv.Name, conn: conn, tools: conn.Tools()})
	}
	return out, nil
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

// vars are the placeholder values of a task's attempt.
func (r *Runner) vars(t *tasks.Task, workspace string) mcp.Vars {
	return mcp.Vars{Task: t.Dir, Workspace: workspace, Data: t.DataDir(), Bench: r.BenchPath}
}

// connectArmServers connects an arm's own servers in a scratch workspace,
// with the first task's folders for {task} and {data}, to measure them.
func (r *Runner) connectArmServers(ctx context.Context, plan *Plan, arm Arm, dir string) ([]*attached, error) {
	if len(arm.Servers) == 0 {
		return nil, nil
	}
	conns, err := r.connect(ctx, arm.Servers, r.vars(plan.Suite.Tasks[0], dir), nil, nil)
	if err != nil {
		return nil, fmt.Errorf("arm %s: %w", arm.Name, err)
	}
	return conns, nil
}

// checkServers connects, once, every server of every task under every arm
// in a scratch workspace, and builds the attempt's tool registry: a server
// that fails discovery or listing, or a tool that would shadow another,
// stops the run before any attempt. Tools a server lists but that are not
// offered (a schema bench cannot check, a name outside the allow-list) are
// reported once.
func (r *Runner) checkServers(ctx context.Context, plan *Plan) error {
	seen := map[string]bool{}
	for _, t := range plan.Suite.Tasks {
		for _, arm := range plan.Arms {
			list := servers(t, arm)
			if len(list) == 0 {
				continue
			}
			dir, err := os.MkdirTemp(r.TempDir, "bench-servers-")
			if err != nil {
				return fmt.Errorf("check MCP servers: %w", err)
			}
			ws, err := agent.NewWorkspace(dir)
			if err != nil {
				os.RemoveAll(dir)
				return err
			}
			reg, err := builtinRegistry(ws, arm, agent.BuiltinOptions{})
			if err == nil {
				var conns []*attached
				conns, err = r.connect(ctx, list, r.vars(t, dir), reg.Names(), nil)
				if err == nil {
					err = addServerTools(reg, conns)
					for _, c := range conns {
						for _, s := range c.conn.Skipped() {
							key := c.name + "/" + s.Tool
							if !seen[key] {
								seen[key] = true
								r.logf("warning: MCP server %s: tool %s is not offered: %s", c.name, s.Tool, s.Reason)
							}
						}
					}
					closeAll(conns)
				}
			}
			os.RemoveAll(dir)
			if err != nil {
				return fmt.Errorf("task %s, arm %s: %w", t.ID, arm.Name, err)
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
