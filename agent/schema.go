package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/ollama/ollama/api"
)

// A tool's input schema reaches the model through OllamaTool and is checked
// against by the Registry (jsonschema-go). Ollama's tool format holds less
// than JSON Schema, so a schema written as JSON by a stranger (an MCP
// server) goes through ParseSchema first, which normalises it, without
// changing what it accepts, into one the format can show:
//
//   - every local $ref (to $defs, definitions, or any JSON pointer such as
//     "#/properties/a/items", which zod-to-json-schema emits) is inlined and
//     $defs/definitions dropped; a recursive or remote $ref is refused;
//   - "const" becomes a one-value "enum" (the format has no const);
//   - an allOf whose branches do not conflict is merged into its parent;
//   - "$schema" is mapped to a draft the validator accepts (it refuses to
//     validate any other spelling): draft-04/06/07 to draft-07, 2019-09 and
//     2020-12 to 2020-12, with draft-04's boolean exclusiveMinimum/Maximum
//     and 2019-09's array "items" rewritten;
//   - the declared order of properties is kept, so the model sees them in
//     that order.
//
// A schema left with something the format cannot show (a non-object root;
// anyOf, oneOf, allOf, not or if at the root; an allOf that cannot be
// merged) is an error, and such a tool must not be offered.
//
// The Registry then validates exactly the schema the model is shown. The
// built-in tools' schemas are written in Go already in that form.

// OllamaTool converts a tool's spec, whose input schema is normalised (see
// ParseSchema), to the definition Ollama's /api/chat takes: its properties
// as Ollama's format holds them (nested objects, arrays, enums, anyOf). It
// runs for every tool of every attempt, so it converts and does not
// normalise again; a schema it cannot show (a $ref left in it, a non-object
// root, alternatives at the root) is an error naming the tool and the path.
func OllamaTool(s Spec) (api.Tool, error) {
	params := api.ToolFunctionParameters{Type: "object", Properties: api.NewToolPropertiesMap()}
	if root := s.InputSchema; root != nil {
		switch {
		case root.Type != "" && root.Type != "object":
			return api.Tool{}, fmt.Errorf("tool %s: the input schema must be an object, not %q", s.Name, root.Type)
		case len(root.AnyOf) > 0 || len(root.OneOf) > 0 || len(root.AllOf) > 0 || root.Not != nil || root.If != nil:
			return api.Tool{}, fmt.Errorf("tool %s: anyOf, oneOf, allOf, not or if at the root of the input schema cannot be represented", s.Name)
		case root.Ref != "":
			return api.Tool{}, fmt.Errorf("tool %s: #: $ref %q left in the schema: normalise it with ParseSchema", s.Name, root.Ref)
		}
		params.Required = append(params.Required, root.Required...)
		for _, name := range PropertyNames(root) {
			p, err := property(root.Properties[name], "#/properties/"+escapePointer(name), 0)
			if err != nil {
				return api.Tool{}, fmt.Errorf("tool %s: %w", s.Name, err)
			}
			params.Properties.Set(name, p)
		}
	}
	return api.Tool{
		Type: "function",
		Function: api.ToolFunction{
			Name:        s.Name,
			Description: s.Description,
			Parameters:  params,
		},
	}, nil
}

// PropertyNames returns a schema's property names in declaration order
// (PropertyOrder) when known, the others after them sorted, so that the
// prompt is deterministic.
func PropertyNames(s *jsonschema.Schema) []string {
	if len(s.PropertyOrder) == 0 {
		return slices.Sorted(maps.Keys(s.Properties))
	}
	seen := map[string]bool{}
	var out []string
	for _, n := range s.PropertyOrder {
		if _, ok := s.Properties[n]; ok && !seen[n] {
			out = append(out, n)
			seen[n] = true
		}
	}
	for _, n := range slices.Sorted(maps.Keys(s.Properties)) {
		if !seen[n] {
			out = append(out, n)
		}
	}
	return out
}

// maxSchemaDepth bounds the nesting shown to the model.
const maxSchemaDepth = 16

// property converts a normalised schema: it has no $ref and no const left.
func property(s *jsonschema.Schema, path string, depth int) (api.ToolProperty, error) {
	if depth > maxSchemaDepth {
		return api.ToolProperty{}, fmt.Errorf("%s: nested too deep (more than %d levels)", path, maxSchemaDepth)
	}
	if s == nil {
		return api.ToolProperty{}, fmt.Errorf("%s: empty schema", path)
	}
	if s.Ref != "" {
		return api.ToolProperty{}, fmt.Errorf("%s: $ref %q left in the schema: normalise it with ParseSchema", path, s.Ref)
	}
	p := api.ToolProperty{Description: s.Description, Enum: s.Enum}
	if s.Const != nil {
		p.Enum = []any{*s.Const} // the format has no const
	}
	switch {
	case s.Type != "":
		p.Type = api.PropertyType{s.Type}
	case len(s.Types) > 0:
		p.Type = api.PropertyType(slices.Clone(s.Types))
	}
	alts, kind := s.AnyOf, "anyOf"
	if len(alts) == 0 {
		alts, kind = s.OneOf, "oneOf"
	}
	for i, a := range alts {
		ap, err := property(a, fmt.Sprintf("%s/%s/%d", path, kind, i), depth+1)
		if err != nil {
			return api.ToolProperty{}, err
		}
		p.AnyOf = append(p.AnyOf, ap)
	}
	if len(s.AllOf) > 0 {
		return api.ToolProperty{}, fmt.Errorf("%s: allOf cannot be represented (its branches conflict, so they cannot be merged)", path)
	}
	if s.Items != nil {
		ip, err := property(s.Items, path+"/items", depth+1)
		if err != nil {
			return api.ToolProperty{}, err
		}
		p.Items = ip
	}
	if len(s.Properties) > 0 {
		p.Properties = api.NewToolPropertiesMap()
		for _, name := range PropertyNames(s) {
			np, err := property(s.Properties[name], path+"/properties/"+escapePointer(name), depth+1)
			if err != nil {
				return api.ToolProperty{}, err
			}
			p.Properties.Set(name, np)
		}
		if len(s.Required) > 0 && !strings.Contains(p.Description, "required:") {
			// Ollama's tool format has no nested "required"; say it in words
			// so the model still sees it. Validation uses the real schema.
			sep := ""
			if p.Description != "" {
				sep = " "
			}
			p.Description += sep + "(required: " + strings.Join(s.Required, ", ") + ")"
		}
	}
	return p, nil
}

// Canonical $schema values, as jsonschema-go spells them.
const (
	draft07   = "http://json-schema.org/draft-07/schema#"
	draft2020 = "https://json-schema.org/draft/2020-12/schema"
)

// orderKey carries a properties object's declared key order through the
// generic tree; it never reaches the model or the validator.
const orderKey = "\x00order"

// maxRefExpansions bounds inlining, so that a schema whose references fan
// out exponentially is refused rather than expanded without end.
const maxRefExpansions = 2000

// ParseSchema reads a tool's input schema written as JSON, for any of the
// drafts above, and normalises it the way OllamaTool shows it to the model
// (see above). raw may be empty, null or true: any object. The result
// keeps the declared order of properties in PropertyOrder.
func ParseSchema(raw []byte) (*jsonschema.Schema, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return &jsonschema.Schema{Type: "object"}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	tree, err := decodeOrdered(dec)
	if err != nil {
		return nil, fmt.Errorf("input schema is not JSON: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("input schema is not JSON: trailing data")
	}
	if tree == true {
		// The empty schema, as jsonschema-go writes it: any object.
		return &jsonschema.Schema{Type: "object"}, nil
	}
	root, ok := tree.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("input schema must be a JSON object, not %s", decodedKind(tree))
	}
	n := &normaliser{root: root}
	if n.draft, err = draftOf(root["$schema"]); err != nil {
		return nil, err
	}
	out, err := n.schemaOf(root, "#")
	if err != nil {
		return nil, err
	}
	m := out.(map[string]any)
	m["$schema"] = n.draft
	if err := checkRoot(m); err != nil {
		return nil, err
	}
	b, err := json.Marshal(stripOrder(m))
	if err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	s := new(jsonschema.Schema)
	if err := json.Unmarshal(b, s); err != nil {
		return nil, fmt.Errorf("input schema cannot be read: %w", err)
	}
	applyOrder(s, m)
	return s, nil
}

// decodeOrdered decodes one JSON value into map[string]any, []any and
// scalars (numbers as json.Number), recording each object's key order
// under orderKey.
func decodeOrdered(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return tok, nil
	}
	switch d {
	case '{':
		m := map[string]any{}
		var keys []string
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			k := kt.(string)
			if k == orderKey {
				return nil, errors.New("object key with a NUL character")
			}
			v, err := decodeOrdered(dec)
			if err != nil {
				return nil, err
			}
			if _, dup := m[k]; !dup {
				keys = append(keys, k)
			}
			m[k] = v
		}
		if _, err := dec.Token(); err != nil {
			return nil, err
		}
		m[orderKey] = keys
		return m, nil
	case '[':
		a := []any{}
		for dec.More() {
			v, err := decodeOrdered(dec)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		if _, err := dec.Token(); err != nil {
			return nil, err
		}
		return a, nil
	}
	return nil, fmt.Errorf("unexpected %v", d)
}

// decodedKind names the kind of a JSON value decodeOrdered returns.
func decodedKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	}
	return "an object"
}

// draftOf maps a $schema value to the canonical draft the validator knows.
func draftOf(v any) (string, error) {
	if v == nil {
		return draft2020, nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("$schema must be a string, not %s", decodedKind(v))
	}
	u := strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(s, "http://"), "https://"), "#")
	switch u {
	case "json-schema.org/draft-04/schema", "json-schema.org/draft-06/schema", "json-schema.org/draft-07/schema",
		"json-schema.org/schema": // "latest", as most generators meant it: draft-07
		return draft07, nil
	case "json-schema.org/draft/2019-09/schema", "json-schema.org/draft/2020-12/schema":
		return draft2020, nil
	}
	return "", fmt.Errorf("$schema %q: only drafts 04, 06, 07, 2019-09 and 2020-12 can be checked", s)
}

type normaliser struct {
	root      map[string]any
	draft     string
	expanded  int
	refsStack []string
}

// schemaMapKeys are keywords whose value is an object of subschemas.
var schemaMapKeys = []string{"properties", "patternProperties", "dependentSchemas"}

// schemaKeys are keywords whose value is one subschema.
var schemaKeys = []string{"additionalProperties", "additionalItems", "items", "contains", "propertyNames",
	"not", "if", "then", "else", "unevaluatedItems", "unevaluatedProperties", "contentSchema"}

// schemaListKeys are keywords whose value is a list of subschemas.
var schemaListKeys = []string{"allOf", "anyOf", "oneOf", "prefixItems"}

// annotationKeys may sit beside a $ref and describe it.
var annotationKeys = []string{"description", "title", "default", "examples", "deprecated", "readOnly", "writeOnly", "$comment"}

// schemaOf returns the normalised copy of the schema node v at path.
func (n *normaliser) schemaOf(v any, path string) (any, error) {
	switch s := v.(type) {
	case bool:
		return s, nil
	case map[string]any:
		return n.object(s, path)
	}
	return nil, fmt.Errorf("%s: a schema must be an object or a boolean, not %s", path, decodedKind(v))
}

func (n *normaliser) object(s map[string]any, path string) (any, error) {
	if ref, ok := s["$ref"]; ok {
		return n.inlineRef(s, ref, path)
	}
	if _, ok := s["$dynamicRef"]; ok {
		return nil, fmt.Errorf("%s: $dynamicRef cannot be represented", path)
	}
	if _, ok := s["$recursiveRef"]; ok {
		return nil, fmt.Errorf("%s: $recursiveRef cannot be represented", path)
	}
	out := map[string]any{}
	for k, v := range s {
		switch k {
		case "$defs", "definitions":
			// inlined where used
		case "$schema":
			if path != "#" {
				if d, err := draftOf(v); err != nil || d != n.draft {
					return nil, fmt.Errorf("%s: a nested $schema of another draft cannot be checked", path)
				}
			}
		case "id":
			// draft-04's $id: only affects references, which are inlined.
			if _, isString := v.(string); !isString {
				out[k] = v
			}
		default:
			out[k] = v
		}
	}
	for _, k := range schemaMapKeys {
		m, ok := out[k].(map[string]any)
		if !ok {
			continue
		}
		nm := map[string]any{}
		for name, sub := range m {
			if name == orderKey {
				nm[name] = sub
				continue
			}
			c, err := n.schemaOf(sub, path+"/"+k+"/"+escapePointer(name))
			if err != nil {
				return nil, err
			}
			nm[name] = c
		}
		out[k] = nm
	}
	for _, k := range schemaKeys {
		sub, ok := out[k]
		if !ok {
			continue
		}
		if a, isArray := sub.([]any); isArray && k == "items" {
			if n.draft == draft2020 {
				// 2019-09 tuple form: items[] is prefixItems, additionalItems is items.
				out["prefixItems"] = a
				delete(out, "items")
				if ai, ok := out["additionalItems"]; ok {
					out["items"] = ai
					delete(out, "additionalItems")
				}
				continue
			}
			items := make([]any, len(a))
			for i, e := range a {
				c, err := n.schemaOf(e, fmt.Sprintf("%s/items/%d", path, i))
				if err != nil {
					return nil, err
				}
				items[i] = c
			}
			out[k] = items
			continue
		}
		c, err := n.schemaOf(sub, path+"/"+k)
		if err != nil {
			return nil, err
		}
		out[k] = c
	}
	// items may have moved to prefixItems above; normalise the lists after.
	for _, k := range schemaListKeys {
		a, ok := out[k].([]any)
		if !ok {
			if _, present := out[k]; present {
				return nil, fmt.Errorf("%s/%s: expected a list of schemas", path, k)
			}
			continue
		}
		na := make([]any, len(a))
		for i, e := range a {
			c, err := n.schemaOf(e, fmt.Sprintf("%s/%s/%d", path, k, i))
			if err != nil {
				return nil, err
			}
			na[i] = c
		}
		out[k] = na
	}
	if err := fixExclusive(out, "exclusiveMinimum", "minimum", path); err != nil {
		return nil, err
	}
	if err := fixExclusive(out, "exclusiveMaximum", "maximum", path); err != nil {
		return nil, err
	}
	if c, ok := out["const"]; ok {
		// enum [c] accepts what const c accepts; beside an enum, what
		// both accept: c if the enum has it, nothing otherwise.
		out["enum"] = []any{c}
		if enum, hasEnum := s["enum"].([]any); hasEnum &&
			!slices.ContainsFunc(enum, func(e any) bool { return reflect.DeepEqual(stripOrder(e), stripOrder(c)) }) {
			out["enum"] = []any{}
		}
		delete(out, "const")
	}
	if all, ok := out["allOf"].([]any); ok {
		if _, err := mergeAllOf(out, all, path); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// fixExclusive rewrites draft-04's boolean exclusiveMinimum (with minimum)
// into the numeric form of later drafts.
func fixExclusive(s map[string]any, key, bound, path string) error {
	b, ok := s[key].(bool)
	if !ok {
		return nil
	}
	delete(s, key)
	if !b {
		return nil
	}
	v, ok := s[bound]
	if !ok {
		return fmt.Errorf("%s: %s is true but %s is missing", path, key, bound)
	}
	s[key] = v
	delete(s, bound)
	return nil
}

func (n *normaliser) inlineRef(s map[string]any, refv any, path string) (any, error) {
	ref, ok := refv.(string)
	if !ok {
		return nil, fmt.Errorf("%s: $ref must be a string", path)
	}
	if !strings.HasPrefix(ref, "#") {
		return nil, fmt.Errorf("%s: $ref %q is not local to the schema (not a pointer into it) and cannot be checked", path, ref)
	}
	if slices.Contains(n.refsStack, ref) {
		return nil, fmt.Errorf("%s: $ref %q is recursive and cannot be represented (it would nest too deep)", path, ref)
	}
	n.expanded++
	if n.expanded > maxRefExpansions {
		return nil, fmt.Errorf("%s: too many $ref expansions (more than %d)", path, maxRefExpansions)
	}
	target, err := n.resolvePointer(ref)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	n.refsStack = append(n.refsStack, ref)
	inl, err := n.schemaOf(target, path)
	n.refsStack = n.refsStack[:len(n.refsStack)-1]
	if err != nil {
		return nil, err
	}
	var siblings []string
	for k := range s {
		if k != "$ref" && k != orderKey {
			siblings = append(siblings, k)
		}
	}
	if len(siblings) == 0 {
		return inl, nil
	}
	m, ok := inl.(map[string]any)
	if !ok {
		if inl == true {
			m = map[string]any{}
		} else {
			return nil, fmt.Errorf("%s: $ref %q points to a false schema", path, ref)
		}
	}
	m = maps.Clone(m)
	rest := map[string]any{}
	for _, k := range siblings {
		switch {
		case slices.Contains(annotationKeys, k):
			m[k] = s[k] // the referring site's words win
		case n.draft == draft07:
			// draft-07 ignores keywords beside $ref
		default:
			rest[k] = s[k]
		}
	}
	if len(rest) == 0 {
		return m, nil
	}
	rest[orderKey] = s[orderKey]
	other, err := n.object(rest, path)
	if err != nil {
		return nil, err
	}
	ok, err = mergeAllOf(m, []any{other}, path)
	if err != nil {
		return nil, err
	}
	if !ok {
		// keep both; the caller refuses an allOf it cannot show
		return map[string]any{"allOf": []any{m, other}}, nil
	}
	return m, nil
}

// resolvePointer finds the schema a local $ref ("#", "#/a/b") points to.
func (n *normaliser) resolvePointer(ref string) (any, error) {
	frag, err := url.PathUnescape(strings.TrimPrefix(ref, "#"))
	if err != nil {
		return nil, fmt.Errorf("$ref %q: %w", ref, err)
	}
	if frag == "" {
		return n.root, nil
	}
	if !strings.HasPrefix(frag, "/") {
		return nil, fmt.Errorf("$ref %q: anchors cannot be resolved; use a JSON pointer", ref)
	}
	var cur any = n.root
	for _, tok := range strings.Split(frag[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[tok]
			if !ok || tok == orderKey {
				return nil, fmt.Errorf("$ref %q points to nothing", ref)
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil, fmt.Errorf("$ref %q points to nothing", ref)
			}
			cur = c[i]
		default:
			return nil, fmt.Errorf("$ref %q points to nothing", ref)
		}
	}
	return cur, nil
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// mergeAllOf merges the branches of an allOf into s when that changes
// nothing about what s accepts: branches whose keywords do not conflict
// with s or with each other. It reports whether it merged; if not, s is
// left as it was.
func mergeAllOf(s map[string]any, branches []any, path string) (bool, error) {
	merged := maps.Clone(s)
	delete(merged, "allOf")
	for i, b := range branches {
		bm, ok := b.(map[string]any)
		if !ok {
			if b == true {
				continue
			}
			return false, fmt.Errorf("%s/allOf/%d: a false schema accepts nothing", path, i)
		}
		for k, v := range bm {
			if k == orderKey {
				continue
			}
			old, exists := merged[k]
			switch {
			case !exists:
				merged[k] = v
			case k == "properties":
				np, ok := mergeProperties(old, v)
				if !ok {
					return false, nil
				}
				merged[k] = np
			case k == "required":
				r1, ok1 := old.([]any)
				r2, ok2 := v.([]any)
				if !ok1 || !ok2 {
					return false, nil
				}
				r := slices.Clone(r1)
				for _, x := range r2 {
					if !slices.Contains(r, x) {
						r = append(r, x)
					}
				}
				merged[k] = r
			case slices.Contains(annotationKeys, k):
				// the outer schema's words stay
			case reflect.DeepEqual(stripOrder(old), stripOrder(v)):
			default:
				return false, nil // a real conflict
			}
		}
	}
	clear(s)
	for k, v := range merged {
		s[k] = v
	}
	return true, nil
}

// mergeProperties joins two properties objects that share no name.
func mergeProperties(a, b any) (map[string]any, bool) {
	pa, ok1 := a.(map[string]any)
	pb, ok2 := b.(map[string]any)
	if !ok1 || !ok2 {
		return nil, false
	}
	out := maps.Clone(pa)
	order := slices.Clone(keysInOrder(pa))
	for _, k := range keysInOrder(pb) {
		if _, dup := out[k]; dup {
			return nil, false // the same property constrained twice
		}
		out[k] = pb[k]
		order = append(order, k)
	}
	out[orderKey] = order
	return out, true
}

// keysInOrder returns an object's keys in declared order when recorded,
// sorted otherwise.
func keysInOrder(m map[string]any) []string {
	if o, ok := m[orderKey].([]string); ok {
		return o
	}
	var keys []string
	for k := range m {
		if k != orderKey {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// checkRoot refuses what the model's tool format cannot show at the root.
func checkRoot(m map[string]any) error {
	if t, ok := m["type"]; ok && t != "object" {
		return fmt.Errorf("input schema must describe an object, not type %v (a tool's parameters must be an object)", t)
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf", "not", "if", "$dynamicRef"} {
		if _, ok := m[k]; ok {
			return fmt.Errorf("input schema has %s at its root, which the model's tool format cannot show", k)
		}
	}
	return nil
}

// stripOrder returns a copy of the tree without order records.
func stripOrder(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if k != orderKey {
				out[k] = stripOrder(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = stripOrder(e)
		}
		return out
	}
	return v
}

// applyOrder copies the recorded property order of the tree m onto the
// parsed schema s, which has the same shape.
func applyOrder(s *jsonschema.Schema, m map[string]any) {
	if s == nil || m == nil {
		return
	}
	if props, ok := m["properties"].(map[string]any); ok {
		if order, ok := props[orderKey].([]string); ok {
			s.PropertyOrder = slices.Clone(order)
		}
		for name, sub := range s.Properties {
			sm, _ := props[name].(map[string]any)
			applyOrder(sub, sm)
		}
	}
	sub := func(key string, target *jsonschema.Schema) {
		if sm, ok := m[key].(map[string]any); ok {
			applyOrder(target, sm)
		}
	}
	sub("items", s.Items)
	sub("additionalProperties", s.AdditionalProperties)
	sub("not", s.Not)
	list := func(key string, targets []*jsonschema.Schema) {
		a, _ := m[key].([]any)
		for i, t := range targets {
			if i < len(a) {
				sm, _ := a[i].(map[string]any)
				applyOrder(t, sm)
			}
		}
	}
	list("anyOf", s.AnyOf)
	list("oneOf", s.OneOf)
	list("allOf", s.AllOf)
	list("prefixItems", s.PrefixItems)
	if a, ok := m["items"].([]any); ok {
		for i, t := range s.ItemsArray {
			if i < len(a) {
				sm, _ := a[i].(map[string]any)
				applyOrder(t, sm)
			}
		}
	}
}
