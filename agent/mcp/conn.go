// Package mcp attaches MCP servers to an attempt as tool providers.
//
// Connect starts (stdio) or reaches (Streamable HTTP) one server declared in
// a task or a run, negotiates the protocol with the official Go SDK, lists
// its tools and turns each into an agent.Tool named "<server>__<tool>",
// with the permission class the operator gave it. The harness trusts
// nothing the server says about itself: annotations are recorded, never
// used; descriptions are flagged when they look like instructions to the
// model; a schema the harness cannot show or check is not offered. Every
// failure of the server during a call (an error result, a protocol error, a
// timeout, a crash, garbage on stdout, a huge result) comes back to the
// model as an error observation, and the attempt goes on.
package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/tasks"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Defaults for Options left zero.
const (
	DefaultCallTimeout   = 30 * time.Second
	DefaultStartTimeout  = 60 * time.Second
	DefaultShutdownGrace = 2 * time.Second
)

const (
	// stderrLimit is how many bytes of a stdio server's stderr are kept
	// (the beginning and the end).
	stderrLimit = 64 << 10
	// resultLimit is how many bytes of one result the model is shown.
	resultLimit = 32 << 10
	// frameLimit is the largest message a stdio server may write; a longer
	// line is dropped (and the call waiting for it times out).
	frameLimit = 64 << 20
)

// Separator joins a server's name and its tool's name into the name the
// model sees: "issues" + "list_issues" = "issues__list_issues".
const Separator = "__"

// Vars are the values of the placeholders a server declaration may use in
// command, args, env values, url and header values.
type Vars struct {
	Task      string // {task}: the task folder
	Workspace string // {workspace}: the attempt's workspace (also a stdio server's working folder)
	Data      string // {data}: the task's data folder
	// Bench is {bench}: the bench executable; when empty, the running
	// executable. A Go test binary (name ending in ".test") is refused:
	// started as `mcp serve ...` it would run its tests instead.
	Bench string
}

// Options tune a connection. Zero values take the defaults above.
type Options struct {
	// CallTimeout bounds one tool call when the server declares no
	// call_timeout of its own.
	CallTimeout time.Duration
	// StartTimeout bounds starting, negotiating and listing tools.
	StartTimeout time.Duration
	// ShutdownGrace is how long Close waits after closing stdin before
	// SIGTERM, and after SIGTERM before SIGKILL.
	ShutdownGrace time.Duration
	// Wrap, when set, rewrites the argv of a stdio server declared with
	// sandbox = true, for example to put a sandbox launcher in front of it
	// (agent.Sandbox.Server makes one for the attempt's workspace).
	Wrap func(argv []string) []string
	// OtherTools are the names of the other tools the model will see (the
	// built-ins, other servers' tools as "server__tool"): a description
	// that mentions one is flagged. The server's own tools are always
	// checked, by their names alone or as "server__tool".
	OtherTools []string
	// Flags, when set, keeps the description flags computed for the tools
	// listed so far: connections sharing it flag each distinct tool once
	// (a run shares one among all its attempts).
	Flags *FlagCache
	// Lenient keeps the mismatches between the declaration and the server
	// (a classes entry or an allow-listed name the server does not offer,
	// an allow-listed tool that cannot be offered) as Warnings instead of
	// failing Connect with the first of them. A run wants the failure;
	// `bench mcp inspect` wants to show them all.
	Lenient bool
	// OnProgress, when set, is told of each progress notification of a
	// call (from the SDK's goroutine; it must not block).
	OnProgress func(Progress)
	// maxMessage bounds one message over HTTP (0: frameLimit); tests
	// lower it.
	maxMessage int
	// Auth, when set, keeps the OAuth authorizations of HTTP servers
	// declared with oauth, shared by the connections of a run; nil: each
	// connection authorizes for itself.
	Auth *Auth
}

func (o Options) withDefaults() Options {
	if o.CallTimeout <= 0 {
		o.CallTimeout = DefaultCallTimeout
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = DefaultStartTimeout
	}
	if o.ShutdownGrace <= 0 {
		o.ShutdownGrace = DefaultShutdownGrace
	}
	return o
}

// Info says what was connected.
type Info struct {
	// Name is the operator's name for the server.
	Name string `json:"name"`
	// Transport is "stdio" or "http".
	Transport string `json:"transport"`
	// ProtocolVersion is the negotiated MCP revision, e.g. "2026-07-28".
	ProtocolVersion string `json:"protocol_version"`
	// ServerName and ServerVersion are what the server says it is.
	ServerName    string `json:"server_name"`
	ServerVersion string `json:"server_version"`
	// Instructions are the server's instructions for the model: untrusted,
	// recorded, never shown to the model.
	Instructions string `json:"instructions,omitempty"`
}

// Annotations are the hints a server gives about a tool. They are recorded
// and shown, never trusted: the operator's class decides.
type Annotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    bool   `json:"readOnlyHint"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  bool   `json:"idempotentHint"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

// ToolInfo is everything known about one tool the server listed, offered
// or not: for storage and for `bench mcp inspect`.
type ToolInfo struct {
	// Server is the operator's name for the server.
	Server string `json:"server"`
	// Tool is the server's own name for the tool.
	Tool string `json:"tool"`
	// Name is the name the model sees: Server + "__" + Tool.
	Name string `json:"name"`
	// Title and Description are the server's words (untrusted).
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	// Class is the permission class the operator gave the tool ("" = none: denied).
	Class agent.Class `json:"class"`
	// ClassSource says where Class came from: one of the ClassFrom* values.
	ClassSource string `json:"class_source"`
	// Annotations are the server's hints, or nil.
	Annotations *Annotations `json:"annotations,omitempty"`
	// InputSchema is the schema as the server sent it.
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
	// OutputSchema is the tool's outputSchema as the server sent it, if
	// any: its structured results are checked against it.
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
	// OutputSchemaError says why OutputSchema cannot be used to check
	// results; every call of the tool then returns an error observation.
	OutputSchemaError string `json:"output_schema_error,omitempty"`
	// Flags mark suspicious text in the description or the schema.
	Flags []Flag `json:"flags,omitempty"`
	// Offered says whether the model is offered the tool; Reason says why not.
	Offered bool   `json:"offered"`
	Reason  string `json:"reason,omitempty"`
	// Excluded is true when the operator's tools allow-list left it out.
	Excluded bool `json:"excluded,omitempty"`
}

// Where a tool's class came from (ToolInfo.ClassSource).
const (
	// ClassFromClasses: the declaration's classes table names the tool.
	ClassFromClasses = "classes"
	// ClassFromDefault: the declaration's default_class.
	ClassFromDefault = "default class"
	// ClassFromNone: neither; the tool has no class and the policy denies
	// every call to it.
	ClassFromNone = "none"
)

// Skipped is a tool the server listed that is not offered because of a
// problem with it (not because an allow-list left it out).
type Skipped struct {
	Tool   string `json:"tool"`
	Reason string `json:"reason"`
}

// Conn is a connected server for one attempt.
type Conn struct {
	srv         tasks.Server
	opts        Options
	callTimeout time.Duration

	session *sdk.ClientSession
	proc    *process        // nil for HTTP
	stdio   *stdioTransport // nil for HTTP
	httpTap *httpTap        // nil for stdio
	log     *capBuffer      // stderr and the harness's notes
	raw     *rawToolSchema  // tools as sent, by name

	info     Info
	catalog  []ToolInfo
	tools    []agent.Tool
	warnings []string // mismatches kept by Options.Lenient

	watches watches // calls in flight, by progress token

	// The tool list's changes (listchange.go): announced counts the
	// server's notifications, stale says one came since the last listing.
	announced    atomic.Int64
	stale        atomic.Bool
	relists      int
	relistCapped bool
	// cancels counts the calls abandoned through the SDK (over HTTP),
	// whose notifications/cancelled the SDK sends in the background:
	// Close waits for the tap to have seen as many go out.
	cancels atomic.Int64

	mu     sync.Mutex
	broken string // why the connection is unusable, once it is

	closeOnce sync.Once
}

// Connect starts or reaches the server srv, negotiates the protocol, lists
// its tools and prepares them. An error names the server and, for a stdio
// server, ends with the tail of its stderr; nothing is left running.
func Connect(ctx context.Context, srv tasks.Server, vars Vars, opts Options) (*Conn, error) {
	opts = opts.withDefaults()
	c := &Conn{
		srv:         srv,
		opts:        opts,
		callTimeout: opts.CallTimeout,
		log:         newCapBuffer(stderrLimit),
		raw:         &rawToolSchema{byName: map[string]rawTool{}},
	}
	if srv.CallTimeout.Duration > 0 {
		c.callTimeout = srv.CallTimeout.Duration
	}
	c.info.Name = srv.Name
	if err := checkServer(srv); err != nil {
		return nil, err
	}

	var transport sdk.Transport
	switch {
	case srv.Command != "":
		t, err := c.startStdio(vars)
		if err != nil {
			return nil, c.startError("start", err)
		}
		transport = t
	default:
		t, err := c.httpTransport(vars)
		if err != nil {
			return nil, fmt.Errorf("mcp server %q: %w", srv.Name, err)
		}
		transport = t
	}

	sctx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: clientVersion()}, &sdk.ClientOptions{
		// No roots, no sampling, no elicitation: the server gets nothing
		// from the harness but tool calls (refuseRequests).
		Capabilities:                &sdk.ClientCapabilities{},
		Logger:                      slog.New(slog.NewTextHandler(noteWriter{c.log}, &slog.HandlerOptions{Level: slog.LevelWarn})),
		LoggingMessageHandler:       c.logMessage,
		ProgressNotificationHandler: c.progressNotification,
		ToolListChangedHandler:      c.toolsChanged,
	})
	client.AddReceivingMiddleware(c.refuseRequests)
	session, err := client.Connect(sctx, transport, nil)
	if err != nil {
		c.shutdown()
		return nil, c.startError("connect", timeoutHint(sctx, err, opts.StartTimeout))
	}
	c.session = session
	ir := session.InitializeResult()
	if ir != nil {
		c.info.ProtocolVersion = ir.ProtocolVersion
		c.info.Instructions = ir.Instructions
		if ir.ServerInfo != nil {
			c.info.ServerName = ir.ServerInfo.Name
			c.info.ServerVersion = ir.ServerInfo.Version
		}
	}
	listed, err := c.listTools(sctx)
	if err != nil {
		c.shutdown()
		return nil, c.startError("list tools", timeoutHint(sctx, err, opts.StartTimeout))
	}
	if err := c.prepare(listed); err != nil {
		c.shutdown()
		return nil, fmt.Errorf("mcp server %q: %w", srv.Name, err)
	}
	return c, nil
}

// checkServer checks the declaration the way a task file's is checked
// (tasks.ValidateServers): a name that is usable as a prefix of tool
// names, a command or a url.
func checkServer(srv tasks.Server) error {
	err := tasks.ValidateServers("", "server", []tasks.Server{srv})
	var fe *tasks.FieldError
	switch {
	case err == nil:
		return nil
	case !errors.As(err, &fe):
		return fmt.Errorf("mcp server %q: %w", srv.Name, err)
	case strings.HasSuffix(fe.Field, ".name"):
		return fmt.Errorf("mcp server name %s", fe.Msg)
	}
	return fmt.Errorf("mcp server %q: %s", srv.Name, fe.Msg)
}

func clientVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

func timeoutHint(ctx context.Context, err error, d time.Duration) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("no answer within %s: %w", d, err)
	}
	return err
}

// startError wraps a failure to start, list or connect, naming the server
// and quoting the end of its stderr.
func (c *Conn) startError(what string, err error) error {
	msg := fmt.Sprintf("mcp server %q: %s: %v", c.srv.Name, what, err)
	if c.proc != nil {
		if c.proc.waitExit(200 * time.Millisecond) {
			msg += fmt.Sprintf(" (the server exited: %s)", c.proc.exitStatus())
		}
		if tail := c.log.lastLines(20, 4096); tail != "" {
			msg += "\nstderr ends with:\n" + indent(tail, "  ")
		} else {
			msg += "\n(the server wrote nothing to stderr)"
		}
	}
	return errors.New(msg)
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}

// baseEnv are the variables of the harness's environment a stdio server
// inherits; anything else it needs must be declared in env.
var baseEnv = []string{"PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR"}

func (c *Conn) startStdio(vars Vars) (sdk.Transport, error) {
	ex := newExpander(vars)
	argv := []string{ex.expand("command", c.srv.Command)}
	for i, a := range c.srv.Args {
		argv = append(argv, ex.expand(fmt.Sprintf("args[%d]", i), a))
	}
	env := make([]string, 0, len(baseEnv)+len(c.srv.Env))
	for _, k := range baseEnv {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(c.srv.Env)) {
		env = append(env, k+"="+ex.expand("env."+k, c.srv.Env[k]))
	}
	if ex.err != nil {
		return nil, ex.err
	}
	dir := vars.Workspace
	if c.srv.Sandbox {
		if c.opts.Wrap != nil {
			argv = c.opts.Wrap(argv)
		} else {
			c.log.note("sandbox = true, but no sandbox is available: the server runs unconfined")
		}
	}
	p, err := startProcess(argv, dir, env, c.log)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", strings.Join(argv, " "), err)
	}
	c.proc = p
	c.info.Transport = "stdio"
	// The connection closes stdin; stdout is closed by process.stop.
	c.stdio = &stdioTransport{out: p.filter, in: p.in, readDeadline: p.stdout.SetReadDeadline, progress: c.takeProgress}
	if w, ok := p.out.(interface{ setWait(bool) }); ok {
		c.stdio.waiter = w
	}
	return c.stdio, nil
}

func (c *Conn) httpTransport(vars Vars) (sdk.Transport, error) {
	ex := newExpander(vars)
	u := ex.expand("url", c.srv.URL)
	headers := http.Header{}
	for _, k := range slices.Sorted(maps.Keys(c.srv.Headers)) {
		headers.Set(k, ex.expand("headers."+k, c.srv.Headers[k]))
	}
	if ex.err != nil {
		return nil, ex.err
	}
	if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
		return nil, fmt.Errorf("url %q: expected an http:// or https:// URL", u)
	}
	c.httpTap = &httpTap{base: http.DefaultTransport, headers: headers, limit: c.opts.maxMessage}
	c.info.Transport = "http"
	client := &http.Client{Transport: c.httpTap}
	// The standalone stream is open: a server's requests (refused at once)
	// and notifications (logs, list changes) may come on it.
	t := &sdk.StreamableClientTransport{
		Endpoint:   u,
		HTTPClient: client,
		MaxRetries: 2,
	}
	if c.srv.OAuth != nil {
		// Discovery, registration and token requests go out without the
		// operator's headers, which are for the MCP server alone.
		h, err := c.opts.Auth.handler(c.srv, u, &http.Client{Timeout: 30 * time.Second}, c.log)
		if err != nil {
			return nil, err
		}
		t.OAuthHandler = h
	}
	return t, nil
}

// expander replaces placeholders, remembering the first one without a value.
type expander struct {
	vals    map[string]string
	missing map[string]string // why a placeholder has no value
	err     error
}

func newExpander(vars Vars) *expander {
	e := &expander{
		vals:    map[string]string{"{task}": vars.Task, "{workspace}": vars.Workspace, "{data}": vars.Data},
		missing: map[string]string{},
	}
	bench := vars.Bench
	if bench == "" {
		exe, err := os.Executable()
		if err != nil {
			e.missing["{bench}"] = fmt.Sprintf(" (the running executable is unknown: %v)", err)
		}
		bench = exe
	}
	if b := filepath.Base(bench); strings.HasSuffix(b, ".test") || strings.HasSuffix(b, ".test.exe") {
		// A Go test binary takes `mcp serve ...` for a request to run all
		// its tests, servers and all: never start one in bench's place.
		e.missing["{bench}"] = fmt.Sprintf(" (%s is a Go test binary, not bench: build bench and give its path)", b)
		bench = ""
	}
	e.vals["{bench}"] = bench
	return e
}

func (e *expander) expand(field, s string) string {
	for _, ph := range []string{"{task}", "{workspace}", "{data}", "{bench}"} {
		if !strings.Contains(s, ph) {
			continue
		}
		if e.vals[ph] == "" && e.err == nil {
			e.err = fmt.Errorf("%s uses %s, which has no value here%s", field, ph, e.missing[ph])
		}
		s = strings.ReplaceAll(s, ph, e.vals[ph])
	}
	return s
}

// noteWriter turns the SDK's log lines into notes in the server's log.
type noteWriter struct{ log *capBuffer }

func (w noteWriter) Write(p []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		w.log.note("client: %s", line)
	}
	return len(p), nil
}

// maxListPages bounds tools/list pagination against a server whose cursor
// never ends.
const maxListPages = 1000

func (c *Conn) listTools(ctx context.Context) ([]*sdk.Tool, error) {
	stop := c.startSniffing()
	defer stop()
	var out []*sdk.Tool
	params := &sdk.ListToolsParams{}
	seen := map[string]bool{}
	for page := 0; ; page++ {
		if page >= maxListPages {
			return nil, fmt.Errorf("tools/list did not end after %d pages", maxListPages)
		}
		res, err := c.session.ListTools(ctx, params)
		if err != nil {
			return nil, err
		}
		out = append(out, res.Tools...)
		if res.NextCursor == "" {
			return out, nil
		}
		if seen[res.NextCursor] {
			return nil, fmt.Errorf("tools/list returned the cursor %q twice (a pagination loop)", res.NextCursor)
		}
		seen[res.NextCursor] = true
		params = &sdk.ListToolsParams{Cursor: res.NextCursor}
	}
}

// startSniffing records the tool schemas as the server wrote them while
// tools are listed; the SDK hands them over as Go maps, which lose the
// order of properties.
func (c *Conn) startSniffing() (stop func()) {
	fn := func(msg []byte) { c.raw.observe(msg) }
	switch {
	case c.proc != nil:
		c.proc.filter.sniff.Store(&fn)
		return func() { c.proc.filter.sniff.Store(nil) }
	case c.httpTap != nil:
		c.httpTap.sniff.Store(&fn)
		return func() { c.httpTap.sniff.Store(nil) }
	}
	return func() {}
}

// rawToolSchema keeps what the SDK does not hand over of each listed tool:
// its inputSchema as written (the SDK gives a Go map, which loses the order
// of properties) and execution.taskSupport (which it does not parse).
type rawToolSchema struct {
	mu     sync.Mutex
	byName map[string]rawTool
}

type rawTool struct {
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema"`
	Execution    *struct {
		TaskSupport string `json:"taskSupport"`
	} `json:"execution"`
}

// observe takes one JSON-RPC message; a tools/list result adds its tools.
func (r *rawToolSchema) observe(msg []byte) {
	var m struct {
		Result *struct {
			Tools []struct {
				Name string `json:"name"`
				rawTool
			} `json:"tools"`
		} `json:"result"`
	}
	// Checked whole (its nesting bounded): over Streamable HTTP, msg is a
	// response body that nothing has checked yet.
	if unmarshal(msg, &m) != nil || m.Result == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, t := range m.Result.Tools {
		if _, dup := r.byName[t.Name]; !dup {
			r.byName[t.Name] = t.rawTool
		}
	}
}

// reset forgets the tools seen, before they are listed again.
func (r *rawToolSchema) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	clear(r.byName)
}

func (r *rawToolSchema) get(name string) (rawTool, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.byName[name]
	return t, ok
}

// prepare turns the listed tools into the catalog and the offered tools,
// and checks the declaration against them: a mismatch is the error, or,
// with Options.Lenient, one of the warnings.
func (c *Conn) prepare(listed []*sdk.Tool) error {
	c.catalog, c.tools, c.warnings = c.build(listed)
	if len(c.warnings) > 0 && !c.opts.Lenient {
		return errors.New(c.warnings[0])
	}
	return nil
}

// build makes the catalog, the offered tools and the mismatches between
// the declaration and the server of a tool list, by the trust rules:
// the operator's classes, the allow-list, names and schemas the harness
// can offer, description flags.
func (c *Conn) build(listed []*sdk.Tool) (catalog []ToolInfo, tools []agent.Tool, warnings []string) {
	count := map[string]int{}
	var names []string
	for _, t := range listed {
		if count[t.Name] == 0 {
			names = append(names, t.Name)
		}
		count[t.Name]++
	}
	allow := map[string]bool{}
	for _, n := range c.srv.Tools {
		allow[n] = true
	}
	readers := c.hasResources()
	done := map[string]bool{}
	for _, t := range listed {
		if done[t.Name] {
			continue
		}
		done[t.Name] = true
		info := ToolInfo{
			Server:      c.srv.Name,
			Tool:        t.Name,
			Name:        c.srv.Name + Separator + t.Name,
			Title:       t.Title,
			Description: t.Description,
		}
		switch cl, ok := c.srv.Classes[t.Name]; {
		case ok:
			info.Class, info.ClassSource = agent.Class(cl), ClassFromClasses
		case c.srv.DefaultClass != "":
			info.Class, info.ClassSource = agent.Class(c.srv.DefaultClass), ClassFromDefault
		default:
			info.ClassSource = ClassFromNone
		}
		if a := t.Annotations; a != nil {
			info.Annotations = &Annotations{Title: a.Title, ReadOnlyHint: a.ReadOnlyHint, DestructiveHint: a.DestructiveHint, IdempotentHint: a.IdempotentHint, OpenWorldHint: a.OpenWorldHint}
		}
		rt, sniffed := c.raw.get(t.Name)
		raw := rt.InputSchema
		if len(raw) == 0 && t.InputSchema != nil {
			raw, _ = json.Marshal(t.InputSchema)
		}
		info.InputSchema = raw
		out := outputChecker(rt.OutputSchema, t.OutputSchema)
		info.OutputSchema, info.OutputSchemaError = out.raw, out.err
		others := slices.DeleteFunc(slices.Concat(names, c.opts.OtherTools), func(n string) bool { return n == t.Name })
		var spec agent.Spec
		reason := ""
		if err := checkToolName(t.Name); err != nil {
			reason = err.Error()
		} else if count[t.Name] > 1 {
			reason = fmt.Sprintf("the server lists %d tools named %q, so none of them is offered", count[t.Name], t.Name)
		} else if t.Name == ReaderTool && readers {
			reason = fmt.Sprintf("the name is bench's: %s%s%s reads the server's resources", c.srv.Name, Separator, ReaderTool)
		} else if sniffed && rt.Execution != nil && rt.Execution.TaskSupport == "required" {
			reason = `the tool must be called as a task (execution.taskSupport is "required"), which the harness does not do`
		}
		schema, err := agent.ParseSchema(raw)
		if err != nil && reason == "" {
			reason = "input schema: " + err.Error()
		}
		info.Flags = c.opts.Flags.toolFlags(t.Description, t.Title, raw, schema, others)
		if reason == "" {
			spec = agent.Spec{Name: info.Name, Description: t.Description, InputSchema: schema, Class: info.Class, Origin: "mcp:" + c.srv.Name}
			reason = checkSpec(spec)
		}
		switch {
		case reason != "":
			info.Reason = reason
		case len(allow) > 0 && !allow[t.Name]:
			info.Excluded = true
			info.Reason = "not in the server's tools allow-list"
		default:
			info.Offered = true
			tools = append(tools, &Tool{conn: c, spec: spec, info: info, output: out})
		}
		catalog = append(catalog, info)
	}
	if readers {
		// The server declares resources: bench's reader of them, unless
		// the allow-list leaves it out.
		reader, info := c.newReader()
		if len(allow) > 0 && !allow[ReaderTool] {
			info.Offered, info.Excluded, info.Reason = false, true, "not in the server's tools allow-list"
		} else {
			tools = append(tools, reader)
		}
		catalog = append(catalog, info)
		if count[ReaderTool] == 0 {
			count[ReaderTool] = 1 // the allow-list may name it
		}
	}
	for _, n := range c.srv.Tools {
		if n == ReaderTool && readers {
			continue
		}
		if count[n] == 0 {
			warnings = append(warnings, fmt.Sprintf("tools allow-list names %q, which the server does not offer (it offers: %s)", n, listOrNone(names)))
			continue
		}
		for _, ti := range catalog {
			if ti.Tool == n && !ti.Offered {
				warnings = append(warnings, fmt.Sprintf("tools allow-list names %q, which cannot be offered: %s", n, ti.Reason))
			}
		}
	}
	for _, n := range slices.Sorted(maps.Keys(c.srv.Classes)) {
		if count[n] == 0 {
			warnings = append(warnings, fmt.Sprintf("classes names %q, which the server does not offer (it offers: %s)", n, listOrNone(names)))
		}
	}
	return catalog, tools, warnings
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "no tools"
	}
	return strings.Join(names, ", ")
}

// checkToolName refuses a name the model could not call reliably.
func checkToolName(name string) error {
	if name == "" {
		return errors.New("the tool has no name")
	}
	if len(name) > 128 {
		return fmt.Errorf("tool name is %d characters long (at most 128)", len(name))
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return fmt.Errorf("tool name %q has the character %q (expected letters, digits, '_', '-', '.')", name, r)
		}
	}
	return nil
}

// checkSpec checks what agent.Registry.Add and the model client will do
// with the spec, so that a tool offered is never refused later for its
// schema.
func checkSpec(s agent.Spec) string {
	if _, err := agent.OllamaTool(s); err != nil {
		return "input schema cannot be shown to the model: " + err.Error()
	}
	r := agent.NewRegistry()
	if err := r.Add(&Tool{spec: s}); err != nil {
		return "input schema cannot be checked: " + err.Error()
	}
	return ""
}

// Info returns what was connected.
func (c *Conn) Info() Info { return c.info }

// Tools returns the offered tools, in the server's order.
func (c *Conn) Tools() []agent.Tool { return slices.Clone(c.tools) }

// Catalog returns every tool the server listed, offered or not.
func (c *Conn) Catalog() []ToolInfo { return slices.Clone(c.catalog) }

// Warnings returns the mismatches between the declaration and the server
// that Options.Lenient kept instead of failing Connect.
func (c *Conn) Warnings() []string { return slices.Clone(c.warnings) }

// Skipped returns the tools not offered because of a problem, with why.
func (c *Conn) Skipped() []Skipped {
	var out []Skipped
	for _, t := range c.catalog {
		if !t.Offered && !t.Excluded {
			out = append(out, Skipped{Tool: t.Tool, Reason: t.Reason})
		}
	}
	return out
}

// Close shuts the server down (for stdio: close stdin, then SIGTERM and
// SIGKILL after the grace period) and returns its captured stderr, with the
// harness's notes (lines starting "[bench]"). Close may be called more than
// once; later calls return the same text.
func (c *Conn) Close() (stderr string) {
	c.closeOnce.Do(c.shutdown)
	return c.log.String()
}

func (c *Conn) shutdown() {
	c.awaitCancels()
	if c.session != nil {
		done := make(chan struct{})
		go func() {
			_ = c.session.Close()
			close(done)
		}()
		if c.proc != nil {
			c.proc.stop(c.opts.ShutdownGrace)
		}
		t := time.NewTimer(c.opts.ShutdownGrace)
		defer t.Stop()
		select {
		case <-done:
		case <-t.C:
			c.log.note("the client session did not close within %s", c.opts.ShutdownGrace)
		}
		return
	}
	if c.proc != nil {
		c.proc.stop(c.opts.ShutdownGrace)
	}
}

// awaitCancels waits, at most the shutdown grace, until the
// notifications/cancelled of every call abandoned through the SDK has gone
// out: the SDK sends them in the background, and one still unsent when
// the session closes would never reach the server.
func (c *Conn) awaitCancels() {
	if c.httpTap == nil || c.cancels.Load() == 0 {
		return
	}
	deadline := time.Now().Add(c.opts.ShutdownGrace)
	for c.httpTap.cancels.Load() < c.cancels.Load() {
		if !time.Now().Before(deadline) {
			c.log.note("%d notifications/cancelled had not gone out within %s", c.cancels.Load()-c.httpTap.cancels.Load(), c.opts.ShutdownGrace)
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// markBroken records why the server cannot be called any more.
func (c *Conn) markBroken(why string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.broken == "" {
		c.broken = why
	}
}

// unavailable says why calls cannot reach the server, or "".
func (c *Conn) unavailable() string {
	c.mu.Lock()
	broken := c.broken
	c.mu.Unlock()
	if broken != "" {
		return broken
	}
	if c.proc != nil {
		if st := c.proc.exitStatus(); st != "" {
			return fmt.Sprintf("the server exited (%s)", st)
		}
	}
	return ""
}
