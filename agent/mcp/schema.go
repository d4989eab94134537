package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// A foreign tool's inputSchema comes as JSON written for some draft of JSON
// Schema by some generator (zod-to-json-schema, pydantic, jsonschema-go...).
// prepareSchema turns it into one the harness can both show the model
// (agent.OllamaTool) and check arguments with (jsonschema-go), without
// changing what it accepts:
//
//   - local $ref (to $defs, definitions, or any JSON pointer such as
//     "#/properties/a/items", which zod-to-json-schema emits) are inlined,
//     and $defs/definitions dropped; a recursive or remote $ref is refused;
//   - "const" becomes a one-value "enum" (agent.OllamaTool drops const next
//     to a type);
//   - an allOf whose branches do not conflict is merged into its parent;
//   - "$schema" is mapped to a draft the validator accepts (it refuses to
//     validate any other spelling): draft-04/06/07 to draft-07, 2019-09 and
//     2020-12 to 2020-12, with draft-04's boolean exclusiveMinimum/Maximum
//     and 2019-09's array "items" rewritten;
//   - the order in which the server declared properties is kept, so the
//     model sees them in that order.
//
// A schema left with something that cannot be represented (a root-level
// anyOf, an allOf that cannot be merged, a non-object root) is an error.

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

// prepareSchema parses and normalises a foreign input schema. raw may be
// empty (no schema: any object).
func prepareSchema(raw []byte) (*jsonschema.Schema, error) {
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
	root, ok := tree.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("input schema must be a JSON object, not %s", jsonKind(tree))
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

func jsonKind(v any) string {
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
		return "", fmt.Errorf("$schema must be a string, not %s", jsonKind(v))
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
	return nil, fmt.Errorf("%s: a schema must be an object or a boolean, not %s", path, jsonKind(v))
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
		if _, hasEnum := out["enum"]; !hasEnum {
			out["enum"] = []any{c}
			delete(out, "const")
		}
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
		return nil, fmt.Errorf("%s: $ref %q is not local to the schema and cannot be checked", path, ref)
	}
	if slices.Contains(n.refsStack, ref) {
		return nil, fmt.Errorf("%s: $ref %q is recursive and cannot be represented", path, ref)
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
	m = shallowCopy(m)
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

func shallowCopy(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// mergeAllOf merges the branches of an allOf into s when that changes
// nothing about what s accepts: branches whose keywords do not conflict
// with s or with each other. It reports whether it merged; if not, s is
// left as it was.
func mergeAllOf(s map[string]any, branches []any, path string) (bool, error) {
	merged := shallowCopy(s)
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
	out := shallowCopy(pa)
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
		return fmt.Errorf("input schema must describe an object, not type %v", t)
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
