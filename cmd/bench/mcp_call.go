package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/agent/mcp"
	"github.com/benchhq/bench/runner"
)

const callUsage = `Usage: bench mcp call [flags] TOOL ['JSON ARGS'] -- COMMAND [ARGS...]
       bench mcp call [flags] --url URL TOOL ['JSON ARGS']
       bench mcp call --task DIR [--server NAME] TOOL ['JSON ARGS']

Calls one tool of an MCP server by hand, the way a run would: connects (as
bench mcp inspect does, and as strictly as a run: a declaration the server
does not match is an error), checks the arguments (default {}) against the
schema the model would be shown, says the tool's permission class and the
decision the profile would give (--profile, or an arm of --config), then
calls it and shows the result, or the error and its kind, and the time it
took. TOOL is the server's own name for the tool, or NAME__TOOL. A call the
profile would deny or ask about is still made: you asked for it.
Exit status: 0 for a result, 1 for an error result or a failure to
connect, 2 for bad flags or arguments that do not match the schema.

Flags:
`

// callFlags are the flags of `bench mcp call` beyond the connection's.
type callFlags struct {
	profile string
	config  string
	arm     string
}

func cmdMCPCall(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var f inspectFlags
	var cf callFlags
	fs := connectionFlags("mcp call", &f)
	fs.StringVar(&cf.profile, "profile", "", "the permission profile whose decision to show: full, standard (default), no-exec, read-only, ask-exec, or one of --config's")
	fs.StringVar(&cf.config, "config", "", "a run file: its profiles, and with --arm that arm's profile")
	fs.StringVar(&cf.arm, "arm", "", "with --config: the arm whose profile decides")
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "bench mcp call: "+format+"\n", a...)
		return code
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, callUsage)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return 0
		}
		return fail(2, "%v (see 'bench mcp call -h')", err)
	}
	given := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	// TOOL and its arguments come first; a stdio server's command after --.
	rest := fs.Args()
	var command []string
	if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
		rest, command = nil, rest // flags, then -- at once: no TOOL
	} else if i := slices.Index(rest, "--"); i >= 0 {
		rest, command = rest[:i], rest[i+1:]
	} else if f.url == "" && f.task == "" && len(rest) > 2 {
		return fail(2, "give the server's command after --: bench mcp call TOOL 'JSON' -- COMMAND ARGS...")
	}
	if len(rest) == 0 || len(rest) > 2 {
		return fail(2, "expected TOOL and, optionally, its arguments as one JSON object (see 'bench mcp call -h')")
	}
	toolName, argText := rest[0], "{}"
	if len(rest) == 2 {
		argText = rest[1]
	}
	policy, err := callPolicy(cf)
	if err != nil {
		return fail(2, "%v", err)
	}
	srv, vars, cleanup, err := inspectTarget(&f, given, command)
	if err != nil {
		return fail(2, "%v", err)
	}
	defer cleanup()

	// Progress goes to stderr as it comes, one line each.
	onProgress := func(p mcp.Progress) {
		fmt.Fprintf(stderr, "progress    %s (after %s)\n", oneLine(mcp.FormatProgress(p)), p.Elapsed.Round(time.Millisecond))
	}
	conn, err := mcp.Connect(ctx, srv, vars, mcp.Options{StartTimeout: f.timeout, OtherTools: agent.BuiltinNames(), OnProgress: onProgress, Auth: promptAuth(stderr)})
	if err != nil {
		return fail(1, "%v", err)
	}
	defer func() {
		if log := conn.Close(); strings.TrimSpace(log) != "" {
			fmt.Fprintf(stderr, "--- the server's stderr:\n%s", strings.TrimSuffix(log, "\n")+"\n")
		}
	}()
	info := conn.Info()
	fmt.Fprintf(stdout, "server      %s (%s, protocol %s)\n", info.Name, info.Transport, info.ProtocolVersion)
	tool, why := findTool(conn, toolName)
	if tool == nil {
		return fail(2, "%s", why)
	}
	spec := tool.Spec()
	fmt.Fprintf(stdout, "tool        %s\n", spec.Name)
	reg := agent.NewRegistry()
	if err := reg.Add(tool); err != nil {
		return fail(1, "%v", err)
	}
	callArgs, err := reg.ValidateJSON(spec.Name, []byte(argText))
	if err != nil {
		fmt.Fprintf(stdout, "arguments   %s\n", oneLine(argText))
		return fail(2, "arguments: %v (a run would tell the model so, and not call the server)", err)
	}
	shown, _ := json.Marshal(callArgs)
	fmt.Fprintf(stdout, "arguments   %s\n", shown)
	class := string(spec.Class)
	if class == "" {
		class = "(none)"
	}
	fmt.Fprintf(stdout, "class       %s\n", class)
	fmt.Fprintf(stdout, "decision    %s\n", policy.describe(ctx, agent.Call{Tool: spec.Name, Class: spec.Class, Origin: spec.Origin, Args: callArgs}))

	start := time.Now()
	res, err := tool.Call(ctx, callArgs)
	took := time.Since(start).Round(time.Millisecond)
	switch {
	case err != nil:
		fmt.Fprintf(stdout, "error       %v (took %s)\n", err, took)
		return 1
	case res.IsError:
		kind := res.Kind
		if kind == "" {
			kind = "tool_error"
		}
		fmt.Fprintf(stdout, "error       %s (took %s)\n%s\n", kind, took, indentText(res.Text, "  "))
		return 1
	}
	fmt.Fprintf(stdout, "result      (took %s)\n%s\n", took, indentText(res.Text, "  "))
	return 0
}

// findTool finds a tool the server offers by its own name or as the model
// sees it; why says why not.
func findTool(conn *mcp.Conn, name string) (agent.Tool, string) {
	for _, t := range conn.Tools() {
		if n := t.Spec().Name; n == name || n == conn.Info().Name+mcp.Separator+name {
			return t, ""
		}
	}
	var offered []string
	for _, ti := range conn.Catalog() {
		if ti.Tool == name || ti.Name == name {
			return nil, fmt.Sprintf("tool %s is not offered: %s", ti.Name, ti.Reason)
		}
		if ti.Offered {
			offered = append(offered, ti.Tool)
		}
	}
	return nil, fmt.Sprintf("the server offers no tool %q (it offers: %s)", name, strings.Join(offered, ", "))
}

// probePolicy decides calls by a profile, as a run's, without asking an
// approver: it says when the run's approver would be asked.
type probePolicy struct {
	prof *agent.Profile
}

func callPolicy(cf callFlags) (*probePolicy, error) {
	profiles := agent.BuiltinProfiles()
	name := cf.profile
	if cf.config != "" {
		rf, err := runner.LoadRunFile(cf.config)
		if err != nil {
			return nil, err
		}
		if rf.ParsedProfiles != nil {
			profiles = rf.ParsedProfiles
		}
		if cf.arm != "" {
			if cf.profile != "" {
				return nil, errors.New("--profile and --arm conflict: the arm names its profile")
			}
			i := slices.IndexFunc(rf.Arms, func(a runner.Arm) bool { return a.Name == cf.arm })
			if i < 0 {
				return nil, fmt.Errorf("--arm: %s has no arm %q", cf.config, cf.arm)
			}
			name = rf.Arms[i].Profile
		}
	} else if cf.arm != "" {
		return nil, errors.New("--arm needs --config")
	}
	prof, err := profiles.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("--profile: %w", err)
	}
	return &probePolicy{prof: prof}, nil
}

// describe says what a run would decide for the call.
func (p *probePolicy) describe(ctx context.Context, c agent.Call) string {
	asked := &askProbe{}
	v := (&agent.ProfilePolicy{Profile: p.prof, Approver: asked}).Decide(ctx, c)
	if asked.asked {
		return fmt.Sprintf("ask (profile %s, rule %s): the arm's approver would answer; called anyway", p.prof.Name, v.Rule)
	}
	if v.Decision == agent.Deny {
		return fmt.Sprintf("deny (profile %s, rule %s): a run would not call it; called anyway", p.prof.Name, v.Rule)
	}
	return fmt.Sprintf("%s (profile %s, rule %s)", v.Decision, p.prof.Name, v.Rule)
}

// askProbe is an approver that only notes it was asked.
type askProbe struct{ asked bool }

func (a *askProbe) Name() string { return "probe" }

func (a *askProbe) Approve(context.Context, agent.ApprovalRequest) (agent.Answer, error) {
	a.asked = true
	return agent.Answer{Decision: agent.Deny}, nil
}
