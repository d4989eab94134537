package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/agent/mcp"
	"github.com/benchhq/bench/servers/issuetracker"
	"github.com/benchhq/bench/tasks"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

const mcpUsage = `Usage:
  bench mcp inspect [flags] -- COMMAND [ARGS...]   a stdio server
  bench mcp inspect [flags] --url URL              a Streamable HTTP server
  bench mcp inspect --task DIR [--server NAME]     a server as a task declares it
  bench mcp call [flags] TOOL ['JSON'] -- COMMAND [ARGS...]
  bench mcp call [flags] --url URL TOOL ['JSON']
  bench mcp call --task DIR [--server NAME] TOOL ['JSON']
                                                   call one tool by hand, as a run would
  bench mcp serve issues --file PATH [--http ADDR] the example issue tracker, over stdio or Streamable HTTP
`

const inspectUsage = `Usage: bench mcp inspect [flags] -- COMMAND [ARGS...]
       bench mcp inspect [flags] --url URL
       bench mcp inspect --task DIR [--server NAME]

Connects to an MCP server the way a run would, and shows the negotiated
protocol, the server's name and version, every tool with its schema, the
permission class that would apply, the server's annotations (recorded, never
trusted), flags on suspicious descriptions, and what would not be offered
and why. Placeholders: {workspace} is the current folder (with --task, a
fresh copy of the task's workspace), {task} and {data} need --task, {bench}
is this executable.

Flags:
`

// cmdMCP runs `bench mcp inspect` and `bench mcp serve` and returns the
// exit status: 0 for success, 1 for a failure, 2 for a usage error.
func cmdMCP(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, mcpUsage)
		return 2
	}
	switch args[0] {
	case "inspect":
		return cmdMCPInspect(ctx, args[1:], stdout, stderr)
	case "call":
		return cmdMCPCall(ctx, args[1:], stdout, stderr)
	case "serve":
		return cmdMCPServe(ctx, args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, mcpUsage)
		return 0
	}
	fmt.Fprintf(stderr, "bench mcp: unknown subcommand %q (expected inspect, call or serve)\n", args[0])
	return 2
}

// keyValues is a repeatable K=V flag.
type keyValues struct {
	flag string
	m    map[string]string
}

func (kv *keyValues) String() string { return "" }

func (kv *keyValues) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || strings.TrimSpace(k) == "" {
		return fmt.Errorf("expected KEY=VALUE, got %q", s)
	}
	if kv.m == nil {
		kv.m = map[string]string{}
	}
	kv.m[strings.TrimSpace(k)] = v
	return nil
}

type inspectFlags struct {
	name         string
	url          string
	headers      keyValues
	env          keyValues
	classes      keyValues
	defaultClass string
	task         string
	server       string
	timeout      time.Duration
	asJSON       bool
	oauth        tasks.OAuth
	useOAuth     bool
}

// connectionFlags defines the flags that say which server to connect to
// and how, shared by `bench mcp inspect` and `bench mcp call`.
func connectionFlags(name string, f *inspectFlags) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&f.name, "name", "server", "the server's name: its tools are shown as NAME__TOOL")
	fs.StringVar(&f.url, "url", "", "URL of a Streamable HTTP server")
	fs.Var(&f.headers, "header", "HTTP header `K=V` sent to a --url server (repeatable)")
	fs.Var(&f.env, "env", "environment variable `K=V` for a stdio server (repeatable)")
	fs.Var(&f.classes, "class", "permission class of a tool, `tool=class` by the server's tool name (repeatable)")
	fs.StringVar(&f.defaultClass, "default-class", "", "permission class of tools that --class does not name (default: none, denied)")
	fs.StringVar(&f.task, "task", "", "task folder: inspect a server its task.toml declares")
	fs.StringVar(&f.server, "server", "", "with --task: the name of the server to inspect (default: the only one)")
	fs.DurationVar(&f.timeout, "timeout", mcp.DefaultStartTimeout, "how long to wait for the server to start and list its tools")
	fs.BoolVar(&f.useOAuth, "oauth", false, "with --url: authorize by OAuth 2.1 when the server asks (dynamic registration unless --client-id or --client-metadata-url)")
	fs.StringVar(&f.oauth.Grant, "grant", "", "with --oauth: authorization_code (default) or client_credentials")
	fs.StringVar(&f.oauth.ClientID, "client-id", "", "with --oauth: a client registered in advance")
	fs.StringVar(&f.oauth.ClientSecretEnv, "client-secret-env", "", "with --oauth: the `VAR`iable of the environment that holds the client's secret")
	fs.StringVar(&f.oauth.ClientMetadataURL, "client-metadata-url", "", "with --oauth: an https:// client ID metadata document")
	fs.StringVar(&f.oauth.RedirectURL, "redirect-url", "", "with --oauth: where the browser comes back (default "+mcp.DefaultRedirectURL+")")
	return fs
}

// oauthFlags are the flags that need --oauth.
var oauthFlags = []string{"grant", "client-id", "client-secret-env", "client-metadata-url", "redirect-url"}

func cmdMCPInspect(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var f inspectFlags
	fs := connectionFlags("mcp inspect", &f)
	fs.BoolVar(&f.asJSON, "json", false, "print JSON (info, tools, notes) instead of text")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, inspectUsage)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return 0
		}
		fmt.Fprintf(stderr, "bench mcp inspect: %v (see 'bench mcp inspect -h')\n", err)
		return 2
	}
	given := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	srv, vars, cleanup, err := inspectTarget(&f, given, fs.Args())
	if err != nil {
		fmt.Fprintf(stderr, "bench mcp inspect: %v\n", err)
		return 2
	}
	defer cleanup()

	// Lenient: a --class or an allow-listed name the server lacks is a
	// warning to show here, not a failure as in a run.
	opts := mcp.Options{StartTimeout: f.timeout, OtherTools: agent.BuiltinNames(), Lenient: true, Auth: promptAuth(stderr)}
	conn, err := mcp.Connect(ctx, srv, vars, opts)
	if err != nil {
		fmt.Fprintf(stderr, "bench mcp inspect: %v\n", err)
		return 1
	}
	desc := conn.Describe(ctx)
	log := conn.Close()
	report := newInspectReport(conn)
	report.Description = desc
	if f.asJSON {
		report.Stderr = log
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(report); err != nil {
			fmt.Fprintf(stderr, "bench mcp inspect: %v\n", err)
			return 1
		}
		return 0
	}
	report.write(stdout)
	if strings.TrimSpace(log) != "" {
		fmt.Fprintf(stderr, "--- the server's stderr:\n%s", log)
		if !strings.HasSuffix(log, "\n") {
			fmt.Fprintln(stderr)
		}
	}
	return 0
}

// inspectTarget builds the server declaration and placeholder values from
// the flags; given are the names of the flags on the command line. cleanup
// removes any temporary workspace.
func inspectTarget(f *inspectFlags, given map[string]bool, rest []string) (tasks.Server, mcp.Vars, func(), error) {
	nop := func() {}
	wd, err := os.Getwd()
	if err != nil {
		return tasks.Server{}, mcp.Vars{}, nop, err
	}
	// Bench is left to Connect: this executable.
	vars := mcp.Vars{Workspace: wd}
	var srv tasks.Server
	switch {
	case f.task != "":
		if f.url != "" || len(rest) > 0 {
			return srv, vars, nop, errors.New("--task inspects a declared server: give no --url and no command")
		}
		for _, name := range []string{"name", "env", "header"} {
			if given[name] {
				return srv, vars, nop, fmt.Errorf("--%s cannot be used with --task: the task.toml declares the server (only --server, --class and --default-class apply)", name)
			}
		}
		t, err := tasks.Load(f.task)
		if err != nil {
			return srv, vars, nop, err
		}
		if srv, err = pickServer(t, f.server); err != nil {
			return srv, vars, nop, err
		}
		ws, err := os.MkdirTemp("", "bench-inspect-")
		if err != nil {
			return srv, vars, nop, err
		}
		cleanup := func() { os.RemoveAll(ws) }
		if err := t.CopyWorkspace(ws); err != nil {
			cleanup()
			return srv, vars, nop, fmt.Errorf("copy the workspace of %s: %w", t.ID, err)
		}
		vars = mcp.Vars{Task: t.Dir, Workspace: ws, Data: t.DataDir()}
		applyFlagOverrides(&srv, f)
		return srv, vars, cleanup, nil
	case f.url != "" && len(rest) > 0:
		return srv, vars, nop, errors.New("give either --url URL or a command after --, not both")
	case f.url != "":
		srv = tasks.Server{Name: f.name, URL: f.url, Headers: f.headers.m}
		if f.useOAuth {
			o := f.oauth
			srv.OAuth = &o
		}
	case len(rest) > 0:
		srv = tasks.Server{Name: f.name, Command: rest[0], Args: rest[1:], Env: f.env.m}
	default:
		return srv, vars, nop, errors.New("give a command after -- (a stdio server) or --url URL (see 'bench mcp inspect -h')")
	}
	if f.server != "" {
		return srv, vars, nop, errors.New("--server needs --task")
	}
	for _, name := range oauthFlags {
		if given[name] && !f.useOAuth {
			return srv, vars, nop, fmt.Errorf("--%s needs --oauth", name)
		}
	}
	if f.useOAuth && f.url == "" {
		return srv, vars, nop, errors.New("--oauth needs --url")
	}
	if len(f.headers.m) > 0 && f.url == "" {
		return srv, vars, nop, errors.New("--header needs --url")
	}
	if len(f.env.m) > 0 && f.url != "" {
		return srv, vars, nop, errors.New("--env is for a stdio server, not --url")
	}
	if err := tasks.ValidateServers("", "--name", []tasks.Server{srv}); err != nil {
		var fe *tasks.FieldError
		if errors.As(err, &fe) {
			return srv, vars, nop, fmt.Errorf("--name %s", fe.Msg)
		}
		return srv, vars, nop, err
	}
	srv.DefaultClass = f.defaultClass
	srv.Classes = f.classes.m
	return srv, vars, nop, nil
}

// promptAuth keeps the OAuth authorization of one command, and tells the
// person at the terminal which URL to open when one is needed.
func promptAuth(stderr io.Writer) *mcp.Auth {
	return &mcp.Auth{Prompt: func(u string) {
		fmt.Fprintf(stderr, "bench: to authorize bench, open this URL in a browser:\n  %s\n", u)
	}}
}

// applyFlagOverrides lets --class and --default-class change a declared
// server's classes, to try a setup before writing it down.
func applyFlagOverrides(srv *tasks.Server, f *inspectFlags) {
	if f.defaultClass != "" {
		srv.DefaultClass = f.defaultClass
	}
	if len(f.classes.m) > 0 {
		c := map[string]string{}
		for k, v := range srv.Classes {
			c[k] = v
		}
		for k, v := range f.classes.m {
			c[k] = v
		}
		srv.Classes = c
	}
}

func pickServer(t *tasks.Task, name string) (tasks.Server, error) {
	var names []string
	for _, s := range t.Servers {
		if s.Name == name || (name == "" && len(t.Servers) == 1) {
			return s, nil
		}
		names = append(names, s.Name)
	}
	switch {
	case len(names) == 0:
		return tasks.Server{}, fmt.Errorf("task %s declares no [[servers]]", t.ID)
	case name == "":
		return tasks.Server{}, fmt.Errorf("task %s declares %d servers (%s): choose one with --server", t.ID, len(names), strings.Join(names, ", "))
	}
	return tasks.Server{}, fmt.Errorf("task %s declares no server %q (it declares: %s)", t.ID, name, strings.Join(names, ", "))
}

// inspectReport is what `bench mcp inspect` shows.
type inspectReport struct {
	Info     mcp.Info       `json:"info"`
	Tools    []mcp.ToolInfo `json:"tools"`
	Warnings []string       `json:"warnings,omitempty"`
	Flags    []mcp.Flag     `json:"instructions_flags,omitempty"`
	// Description is the server's capabilities, resources, resource
	// templates and prompts.
	mcp.Description
	Stderr string `json:"stderr,omitempty"`
}

func newInspectReport(conn *mcp.Conn) *inspectReport {
	r := &inspectReport{Info: conn.Info(), Tools: conn.Catalog()}
	for _, w := range conn.Warnings() {
		r.Warnings = append(r.Warnings, w+" (a run would refuse this)")
	}
	if r.Info.Instructions != "" {
		r.Flags = mcp.FlagDescription("instructions", r.Info.Instructions, nil)
	}
	return r
}

func (r *inspectReport) write(w io.Writer) {
	offered, excluded, skipped := 0, 0, 0
	for _, t := range r.Tools {
		switch {
		case t.Offered:
			offered++
		case t.Excluded:
			excluded++
		default:
			skipped++
		}
	}
	fmt.Fprintf(w, "server      %s (%s)\n", r.Info.Name, r.Info.Transport)
	fmt.Fprintf(w, "protocol    %s\n", r.Info.ProtocolVersion)
	fmt.Fprintf(w, "implements  %s %s\n", orNone(r.Info.ServerName), r.Info.ServerVersion)
	fmt.Fprintf(w, "tools       %d listed: %d offered", len(r.Tools), offered)
	if excluded > 0 {
		fmt.Fprintf(w, ", %d left out by the allow-list", excluded)
	}
	if skipped > 0 {
		fmt.Fprintf(w, ", %d not offered (see below)", skipped)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "capabilities %s\n", capabilityList(r.Capabilities))
	if r.Info.Instructions != "" {
		fmt.Fprintf(w, "instructions (untrusted, never shown to the model):\n%s\n", indentText(r.Info.Instructions, "  "))
		writeFlags(w, r.Flags)
	}
	for _, t := range r.Tools {
		fmt.Fprintf(w, "\n%s", t.Name)
		if !t.Offered {
			fmt.Fprint(w, "  [NOT OFFERED]")
		}
		fmt.Fprintln(w)
		if !t.Offered {
			fmt.Fprintf(w, "  why          %s\n", t.Reason)
		}
		switch t.ClassSource {
		case mcp.ClassFromNone:
			fmt.Fprintf(w, "  class        (none: the policy denies every call)\n")
		default:
			fmt.Fprintf(w, "  class        %s (from %s)\n", t.Class, t.ClassSource)
		}
		if t.Title != "" {
			fmt.Fprintf(w, "  title        %s\n", oneLine(t.Title))
		}
		if t.Description != "" {
			fmt.Fprintf(w, "  description  %s\n", strings.TrimLeft(indentText(t.Description, "               "), " "))
		}
		if a := t.Annotations; a != nil {
			fmt.Fprintf(w, "  annotations  readOnlyHint=%v destructiveHint=%s idempotentHint=%v openWorldHint=%s (recorded, never trusted)\n",
				a.ReadOnlyHint, optBool(a.DestructiveHint), a.IdempotentHint, optBool(a.OpenWorldHint))
		}
		writeFlags(w, t.Flags)
		fmt.Fprintf(w, "  schema       %s\n", strings.TrimLeft(indentText(prettyJSON(t.InputSchema), "               "), " "))
	}
	r.writeDescription(w)
	if len(r.Warnings) > 0 {
		fmt.Fprintln(w, "\nwarnings:")
		for _, s := range r.Warnings {
			fmt.Fprintf(w, "  %s\n", s)
		}
	}
}

// capabilityList names what the server declares it can do.
func capabilityList(c *sdkCapabilities) string {
	if c == nil {
		return "(none declared)"
	}
	var out []string
	add := func(name string, on bool, detail string) {
		if on {
			out = append(out, name+detail)
		}
	}
	add("tools", c.Tools != nil, listChanged(c.Tools != nil && c.Tools.ListChanged))
	if c.Resources != nil {
		d := ""
		if c.Resources.Subscribe {
			d = " (subscribe"
			if c.Resources.ListChanged {
				d += ", listChanged"
			}
			d += ")"
		} else {
			d = listChanged(c.Resources.ListChanged)
		}
		out = append(out, "resources"+d)
	}
	add("prompts", c.Prompts != nil, listChanged(c.Prompts != nil && c.Prompts.ListChanged))
	add("logging", c.Logging != nil, "")
	add("completions", c.Completions != nil, "")
	for _, k := range slices.Sorted(maps.Keys(c.Extensions)) {
		out = append(out, "extension "+k)
	}
	if len(out) == 0 {
		return "(none declared)"
	}
	return strings.Join(out, ", ")
}

func listChanged(on bool) string {
	if on {
		return " (listChanged)"
	}
	return ""
}

// writeDescription shows the resources, templates and prompts.
func (r *inspectReport) writeDescription(w io.Writer) {
	if r.Capabilities != nil && r.Capabilities.Resources != nil {
		fmt.Fprintf(w, "\nresources   %d listed", len(r.Resources))
		if len(r.Templates) > 0 {
			fmt.Fprintf(w, ", %d templates", len(r.Templates))
		}
		fmt.Fprintln(w, " (the model reads them with the server's read_resource tool)")
		for _, res := range r.Resources {
			fmt.Fprintf(w, "  %s", oneLine(res.URI))
			var parts []string
			if res.Name != "" {
				parts = append(parts, oneLine(res.Name))
			}
			if res.MIMEType != "" {
				parts = append(parts, oneLine(res.MIMEType))
			}
			if res.Size > 0 {
				parts = append(parts, fmt.Sprintf("%d bytes", res.Size))
			}
			if len(parts) > 0 {
				fmt.Fprintf(w, " (%s)", strings.Join(parts, ", "))
			}
			fmt.Fprintln(w)
		}
		for _, t := range r.Templates {
			fmt.Fprintf(w, "  template %s", oneLine(t.URITemplate))
			if t.Name != "" {
				fmt.Fprintf(w, " (%s)", oneLine(t.Name))
			}
			fmt.Fprintln(w)
		}
	}
	if len(r.Prompts) > 0 {
		fmt.Fprintf(w, "\nprompts     %d listed (never used by bench)\n", len(r.Prompts))
		for _, p := range r.Prompts {
			fmt.Fprintf(w, "  %s", oneLine(p.Name))
			if len(p.Arguments) > 0 {
				fmt.Fprintf(w, "(%s)", oneLine(strings.Join(p.Arguments, ", ")))
			}
			if p.Description != "" {
				fmt.Fprintf(w, ": %s", oneLine(p.Description))
			}
			fmt.Fprintln(w)
		}
	}
	for _, e := range r.Errors {
		fmt.Fprintf(w, "\nlisting failed: %s\n", oneLine(e))
	}
}

// sdkCapabilities is the SDK's ServerCapabilities, as mcp.Description
// holds it.
type sdkCapabilities = sdk.ServerCapabilities

func writeFlags(w io.Writer, flags []mcp.Flag) {
	if len(flags) == 0 {
		fmt.Fprintf(w, "  flags        none\n")
		return
	}
	fmt.Fprintf(w, "  flags        %d (shown for review; they grant and block nothing)\n", len(flags))
	for _, f := range flags {
		fmt.Fprintf(w, "    - %s in %s: %s\n", f.Kind, f.Where, oneLine(f.Excerpt))
	}
}

func optBool(b *bool) string {
	if b == nil {
		return "unset"
	}
	return fmt.Sprint(*b)
}

func orNone(s string) string {
	if s == "" {
		return "(no name given)"
	}
	return s
}

// oneLine shows untrusted text on one line, with invisible characters made
// visible.
func oneLine(s string) string {
	return visible(strings.Join(strings.Fields(s), " "))
}

// indentText shows untrusted multi-line text, indented, with invisible
// characters made visible.
func indentText(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + visible(l)
	}
	return strings.Join(lines, "\n")
}

// visible escapes, as <U+XXXX>, the characters of untrusted text that a
// terminal would not show or would show misleadingly (mcp.Invisible, and a
// carriage return, which moves the cursor), and bytes that are not UTF-8.
func visible(s string) string {
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			fmt.Fprintf(&b, "<byte %#x>", s[i])
		case r == '\r', mcp.Invisible(r):
			fmt.Fprintf(&b, "<U+%04X>", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func prettyJSON(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "(none: any object)"
	}
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return string(raw)
	}
	return b.String()
}

// cmdMCPServe serves one of the project's own MCP servers over stdio, or
// over Streamable HTTP with --http.
func cmdMCPServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "issues" {
		fmt.Fprintln(stderr, "bench mcp serve: expected a server name: issues (usage: bench mcp serve issues --file PATH [--http ADDR])")
		return 2
	}
	fs := flag.NewFlagSet("mcp serve issues", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	file := fs.String("file", "", "the issue file (JSON)")
	addr := fs.String("http", "", "serve Streamable HTTP on `ADDR` (host:port, e.g. 127.0.0.1:8931) instead of stdio")
	var hosts, origins repeatFlag
	fs.Var(&hosts, "allow-host", "with --http: a `HOST` name requests may name besides localhost, 127.0.0.1 and ::1 (repeatable)")
	fs.Var(&origins, "allow-origin", "with --http: an `ORIGIN` (scheme://host:port) browser requests may come from (repeatable; default none)")
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stdout, "Usage: bench mcp serve issues --file PATH [--http ADDR [--allow-host H]... [--allow-origin O]...]\n\n"+
				"Serves the issue tracker in PATH (tools list_issues, get_issue, search_issues) over stdio, or\n"+
				"over Streamable HTTP at http://ADDR/mcp. Over HTTP a request whose Host header names\n"+
				"another host (DNS rebinding) or that carries an Origin not allowed is refused (403).\n\nFlags:")
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return 0
		}
		fmt.Fprintf(stderr, "bench mcp serve issues: %v\n", err)
		return 2
	}
	if *file == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "bench mcp serve issues: expected --file PATH and nothing else")
		return 2
	}
	if *addr == "" && (len(hosts) > 0 || len(origins) > 0) {
		fmt.Fprintln(stderr, "bench mcp serve issues: --allow-host and --allow-origin need --http")
		return 2
	}
	path, err := filepath.Abs(*file)
	if err != nil {
		fmt.Fprintf(stderr, "bench mcp serve issues: %v\n", err)
		return 2
	}
	if *addr != "" {
		opts := issuetracker.HTTPOptions{Hosts: hosts, Origins: origins}
		err = issuetracker.ServeHTTP(ctx, path, *addr, opts, func(endpoint string) {
			fmt.Fprintf(stderr, "bench mcp serve issues: serving %s over Streamable HTTP at %s\n", path, endpoint)
		})
	} else {
		err = issuetracker.ServeStdio(ctx, path)
	}
	if err != nil {
		fmt.Fprintf(stderr, "bench mcp serve issues: %v\n", err)
		return 1
	}
	return 0
}

// repeatFlag is a repeatable string flag, one value each time.
type repeatFlag []string

func (l *repeatFlag) String() string { return strings.Join(*l, ",") }

func (l *repeatFlag) Set(s string) error {
	*l = append(*l, s)
	return nil
}
