package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// Class is a tool's permission class: what a call may touch. The harness
// decides a call by its class, never by what the tool says of itself.
type Class string

// The built-in classes. Operators may assign any other class name to a
// foreign tool; a policy that does not know a class denies it.
const (
	ClassRead    Class = "read"
	ClassWrite   Class = "write"
	ClassExec    Class = "exec"
	ClassNetwork Class = "network"
)

// OriginBuiltin is the Origin of the harness's own tools.
const OriginBuiltin = "builtin"

// Spec describes a tool as the harness knows it: what the model is shown
// (name, description, input schema) and what the harness alone decides
// (class, origin).
type Spec struct {
	// Name is the name the model calls the tool by. Foreign tools are
	// namespaced ("server__tool") before they get here.
	Name string
	// Description is shown to the model. For a foreign tool it is untrusted text.
	Description string
	// InputSchema is the JSON Schema of the arguments; arguments are
	// validated against it before the tool runs.
	InputSchema *jsonschema.Schema
	// Class is the permission class the operator (or the harness, for its
	// own tools) gave the tool. Empty means no class: denied.
	Class Class
	// Origin says where the tool comes from: "builtin" or "mcp:<server>".
	Origin string
}

// Result is what a tool call gives back to the model.
type Result struct {
	// Text is the observation the model reads.
	Text string
	// IsError marks an observation that reports a failure.
	IsError bool
	// Kind classifies a failure for the store ("transport", "timeout",
	// "protocol"); empty means "tool_error" when IsError is set.
	Kind string
	// Details is what the tool recorded of the call beside the
	// observation, as JSON (an MCP call's structured content and
	// progress): stored with the call, never shown to the model.
	Details json.RawMessage
}

// Tool is something the model can call.
type Tool interface {
	Spec() Spec
	// Call runs the tool with arguments already validated against the
	// input schema. An error is turned into an error observation; a tool
	// should prefer returning a Result with IsError for failures the model
	// can act on.
	Call(ctx context.Context, args map[string]any) (Result, error)
}

// Registry is the set of tools offered in one attempt, by name, in the order
// they were added (the order the model sees them in). It takes each tool's
// Spec once, at Add: the class, origin and schema a call is decided and
// checked under are the ones the tool was registered with.
type Registry struct {
	order   []string
	entries map[string]*entry
	schemas *Schemas // nil: each schema resolved for this registry alone
}

// entry is one registered tool with its spec and resolved input schema.
type entry struct {
	tool Tool
	spec Spec
	// resolve gives the resolved input schema: resolved at Add for a
	// foreign tool (so that one whose schema cannot be checked is never
	// offered), at the first call for the harness's own without a
	// $schema, whose schemas are known good and which an attempt may
	// never call.
	resolve func() (*jsonschema.Resolved, error)
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{entries: map[string]*entry{}}
}

// Schemas resolves the input schemas of many registries (one per attempt
// of a run): a schema is resolved once, at its first use, and shared by
// every registry that has the same one, as JSON. Resolving is most of
// what checking a tool's first call costs. It keeps every distinct
// schema it saw (a run's: servers whose schemas change from attempt to
// attempt add one each). Safe for concurrent use; the zero value is ready.
type Schemas struct {
	mu     sync.Mutex
	byJSON map[string]*resolution
}

type resolution struct {
	once sync.Once
	res  *jsonschema.Resolved
	err  error
}

// NewRegistry returns an empty registry whose schemas c resolves (each
// for itself when c is nil).
func (c *Schemas) NewRegistry() *Registry {
	r := NewRegistry()
	r.schemas = c
	return r
}

// resolve resolves s, once for every schema of the same JSON.
func (c *Schemas) resolve(s *jsonschema.Schema) (*jsonschema.Resolved, error) {
	key, err := json.Marshal(s)
	if err != nil {
		return s.Resolve(resolveOptions()) // not shareable: resolved alone
	}
	c.mu.Lock()
	if c.byJSON == nil {
		c.byJSON = map[string]*resolution{}
	}
	r := c.byJSON[string(key)]
	if r == nil {
		r = &resolution{}
		c.byJSON[string(key)] = r
	}
	c.mu.Unlock()
	// The schema resolved is one of the key's own, decoded from it: what
	// every registry shares is what the JSON says, not the first caller's
	// value, which it may still change.
	r.once.Do(func() {
		var own jsonschema.Schema
		if err := json.Unmarshal(key, &own); err != nil {
			r.res, r.err = s.Resolve(resolveOptions())
			return
		}
		r.res, r.err = own.Resolve(resolveOptions())
	})
	return r.res, r.err
}

// resolveOptions are the options every input schema is resolved with.
func resolveOptions() *jsonschema.ResolveOptions {
	return &jsonschema.ResolveOptions{ValidateDefaults: false}
}

// Add registers a tool. A name already taken is refused with an error that
// names both origins: a foreign tool must never shadow another tool.
func (r *Registry) Add(t Tool) error {
	s := t.Spec()
	if s.Name == "" {
		return fmt.Errorf("add tool from %s: empty name", s.Origin)
	}
	if old, ok := r.entries[s.Name]; ok {
		return fmt.Errorf("tool %q from %s collides with the tool of the same name from %s", s.Name, s.Origin, old.spec.Origin)
	}
	schema := s.InputSchema
	if schema == nil {
		schema = &jsonschema.Schema{Type: "object"}
	}
	resolve := sync.OnceValues(func() (*jsonschema.Resolved, error) {
		if r.schemas != nil {
			return r.schemas.resolve(schema)
		}
		return schema.Resolve(resolveOptions())
	})
	if s.Origin != OriginBuiltin || schema.Schema != "" {
		res, err := resolve()
		if err != nil {
			return fmt.Errorf("tool %q from %s: input schema cannot be checked: %w", s.Name, s.Origin, err)
		}
		// The validator refuses, at every call, a $schema it does not
		// know; find out now, so that such a tool is never offered.
		if schema.Schema != "" {
			if err := res.Validate(map[string]any{}); err != nil && strings.Contains(err.Error(), "cannot validate version") {
				return fmt.Errorf("tool %q from %s: input schema cannot be checked: %w", s.Name, s.Origin, err)
			}
		}
	}
	r.order = append(r.order, s.Name)
	r.entries[s.Name] = &entry{tool: t, spec: s, resolve: resolve}
	return nil
}

// Replace puts tools in place of every tool of the given origin (an MCP
// server whose tool list changed), where the first of them stood (at the
// end when there was none), in tools' order. A tool that would take the
// name of a tool of another origin, or whose schema cannot be checked, is
// refused as Add refuses it, and its error returned; the others are
// registered.
func (r *Registry) Replace(origin string, tools []Tool) []error {
	at := -1
	var kept []string
	for _, n := range r.order {
		if r.entries[n].spec.Origin == origin {
			if at < 0 {
				at = len(kept)
			}
			delete(r.entries, n)
			continue
		}
		kept = append(kept, n)
	}
	if at < 0 {
		at = len(kept)
	}
	tail := slices.Clone(kept[at:])
	r.order = kept[:at]
	var errs []error
	for _, t := range tools {
		if err := r.Add(t); err != nil {
			errs = append(errs, err)
		}
	}
	r.order = append(r.order, tail...)
	return errs
}

// Lookup returns the tool of a name.
func (r *Registry) Lookup(name string) (Tool, bool) {
	e, ok := r.entries[name]
	if !ok {
		return nil, false
	}
	return e.tool, true
}

// Spec returns the spec of a tool as it was taken at Add, without asking
// the tool again.
func (r *Registry) Spec(name string) (Spec, bool) {
	e, ok := r.entries[name]
	if !ok {
		return Spec{}, false
	}
	return e.spec, true
}

// Tools returns the tools in the order they were added.
func (r *Registry) Tools() []Tool {
	out := make([]Tool, 0, len(r.order))
	for _, n := range r.order {
		out = append(out, r.entries[n].tool)
	}
	return out
}

// Specs returns the specs taken at Add, in the order the tools were added.
func (r *Registry) Specs() []Spec {
	out := make([]Spec, 0, len(r.order))
	for _, n := range r.order {
		out = append(out, r.entries[n].spec)
	}
	return out
}

// Names returns the tool names, sorted.
func (r *Registry) Names() []string {
	out := append([]string(nil), r.order...)
	sort.Strings(out)
	return out
}

// Validate checks arguments against the tool's input schema. The error text
// is written for the model to read and correct its call.
func (r *Registry) Validate(name string, args map[string]any) error {
	if _, ok := r.entries[name]; !ok {
		return fmt.Errorf("unknown tool %q", name)
	}
	// The validator walks JSON values; round-trip so that numbers and nested
	// values have the types it expects.
	b := []byte("{}")
	if args != nil {
		var err error
		if b, err = json.Marshal(args); err != nil {
			return fmt.Errorf("arguments are not JSON: %w", err)
		}
	}
	_, err := r.ValidateJSON(name, b)
	return err
}

// ValidateJSON checks arguments written as a JSON object (as a model sends
// them) against the tool's input schema and returns them decoded, ready for
// Tool.Call: one decoding serves the check and the call. null stands for
// no arguments. The error text is written for the model to read and
// correct its call.
func (r *Registry) ValidateJSON(name string, args []byte) (map[string]any, error) {
	e, ok := r.entries[name]
	if !ok {
		return nil, fmt.Errorf("unknown tool %q", name)
	}
	var inst any
	if err := json.Unmarshal(args, &inst); err != nil {
		return nil, fmt.Errorf("arguments are not JSON: %w", err)
	}
	if inst == nil {
		inst = map[string]any{}
	}
	m, ok := inst.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("arguments are not a JSON object: got %s", argsKind(inst))
	}
	res, err := e.resolve()
	if err != nil {
		return nil, fmt.Errorf("the input schema of %s cannot be checked: %w", name, err)
	}
	if err := res.Validate(inst); err != nil {
		msg := err.Error()
		msg = strings.TrimPrefix(msg, "validating root: ")
		return nil, fmt.Errorf("arguments do not match the schema of %s: %s", name, msg)
	}
	return m, nil
}

// argsKind names the kind of a decoded JSON value.
func argsKind(v any) string {
	switch v.(type) {
	case []any:
		return "an array"
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	}
	return fmt.Sprintf("%T", v)
}
