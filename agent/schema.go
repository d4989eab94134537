package agent

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/ollama/ollama/api"
)

// OllamaTool converts a tool's spec to the definition Ollama's /api/chat
// takes. The conversion is faithful where Ollama's format can hold the
// schema: nested objects, arrays, enums, anyOf, and local $ref into $defs
// (inlined). A schema it cannot represent is an error naming the path, and
// such a tool must not be offered.
func OllamaTool(s Spec) (api.Tool, error) {
	params := api.ToolFunctionParameters{Type: "object", Properties: api.NewToolPropertiesMap()}
	root := s.InputSchema
	if root != nil {
		c := converter{root: root}
		r, err := c.deref(root, "#")
		if err != nil {
			return api.Tool{}, err
		}
		if r.Type != "" && r.Type != "object" {
			return api.Tool{}, fmt.Errorf("tool %s: input schema must be an object, not %q", s.Name, r.Type)
		}
		if len(r.AnyOf) > 0 || len(r.OneOf) > 0 || len(r.AllOf) > 0 {
			// Ollama's parameters are one object: alternatives at the root
			// would reach the model as no parameters at all.
			return api.Tool{}, fmt.Errorf("tool %s: anyOf/oneOf/allOf at the root of the input schema cannot be represented", s.Name)
		}
		params.Required = append(params.Required, r.Required...)
		for _, name := range propertyNames(r) {
			p, err := c.property(r.Properties[name], "#/properties/"+name, 0)
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

// propertyNames returns a schema's property names in declaration order when
// known, sorted otherwise, so that the prompt is deterministic.
func propertyNames(s *jsonschema.Schema) []string {
	if len(s.PropertyOrder) > 0 {
		seen := map[string]bool{}
		var out []string
		for _, n := range s.PropertyOrder {
			if _, ok := s.Properties[n]; ok && !seen[n] {
				out = append(out, n)
				seen[n] = true
			}
		}
		for _, n := range sortedKeys(s.Properties) {
			if !seen[n] {
				out = append(out, n)
			}
		}
		return out
	}
	return sortedKeys(s.Properties)
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// maxSchemaDepth bounds nesting and $ref chains, so a recursive schema is
// refused rather than expanded forever.
const maxSchemaDepth = 16

type converter struct {
	root *jsonschema.Schema
}

// deref follows local $ref pointers ("#/$defs/x", "#/definitions/x").
func (c converter) deref(s *jsonschema.Schema, path string) (*jsonschema.Schema, error) {
	for i := 0; s != nil && s.Ref != ""; i++ {
		if i > maxSchemaDepth {
			return nil, fmt.Errorf("%s: $ref chain too long or recursive", path)
		}
		ref := s.Ref
		if ref == "#" {
			return nil, fmt.Errorf("%s: recursive $ref to the root cannot be represented", path)
		}
		if !strings.HasPrefix(ref, "#/") {
			return nil, fmt.Errorf("%s: $ref %q is not a pointer into this schema", path, ref)
		}
		target := pointer(c.root, ref)
		if target == nil {
			return nil, fmt.Errorf("%s: $ref %q points to nothing", path, ref)
		}
		s = target
	}
	if s == nil {
		return nil, fmt.Errorf("%s: empty schema", path)
	}
	return s, nil
}

func (c converter) property(s *jsonschema.Schema, path string, depth int) (api.ToolProperty, error) {
	if depth > maxSchemaDepth {
		return api.ToolProperty{}, fmt.Errorf("%s: nested too deep (recursive schema?)", path)
	}
	s, err := c.deref(s, path)
	if err != nil {
		return api.ToolProperty{}, err
	}
	p := api.ToolProperty{Description: s.Description, Enum: s.Enum}
	switch {
	case s.Type != "":
		p.Type = api.PropertyType{s.Type}
	case len(s.Types) > 0:
		p.Type = api.PropertyType(append([]string(nil), s.Types...))
	}
	if s.Const != nil {
		p.Enum = []any{*s.Const}
	}
	alts := s.AnyOf
	if len(alts) == 0 {
		alts = s.OneOf
	}
	for i, a := range alts {
		ap, err := c.property(a, fmt.Sprintf("%s/anyOf/%d", path, i), depth+1)
		if err != nil {
			return api.ToolProperty{}, err
		}
		p.AnyOf = append(p.AnyOf, ap)
	}
	if len(s.AllOf) > 0 {
		return api.ToolProperty{}, fmt.Errorf("%s: allOf cannot be represented", path)
	}
	if s.Items != nil {
		ip, err := c.property(s.Items, path+"/items", depth+1)
		if err != nil {
			return api.ToolProperty{}, err
		}
		p.Items = ip
	}
	if len(s.Properties) > 0 {
		p.Properties = api.NewToolPropertiesMap()
		for _, name := range propertyNames(s) {
			np, err := c.property(s.Properties[name], path+"/properties/"+name, depth+1)
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

// pointer follows a local JSON pointer ("#/properties/a/items",
// "#/$defs/x") through a schema, or returns nil.
func pointer(root *jsonschema.Schema, ref string) *jsonschema.Schema {
	parts := strings.Split(strings.TrimPrefix(ref, "#/"), "/")
	for i := range parts {
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(parts[i], "~1", "/"), "~0", "~")
	}
	s := root
	for i := 0; s != nil && i < len(parts); i++ {
		next := func(m map[string]*jsonschema.Schema) *jsonschema.Schema {
			if i+1 >= len(parts) {
				return nil
			}
			i++
			return m[parts[i]]
		}
		index := func(list []*jsonschema.Schema) *jsonschema.Schema {
			if i+1 >= len(parts) {
				return nil
			}
			i++
			n, err := strconv.Atoi(parts[i])
			if err != nil || n < 0 || n >= len(list) {
				return nil
			}
			return list[n]
		}
		switch parts[i] {
		case "properties":
			s = next(s.Properties)
		case "$defs":
			s = next(s.Defs)
		case "definitions":
			s = next(s.Definitions)
		case "items":
			s = s.Items
		case "additionalProperties":
			s = s.AdditionalProperties
		case "anyOf":
			s = index(s.AnyOf)
		case "oneOf":
			s = index(s.OneOf)
		case "allOf":
			s = index(s.AllOf)
		case "prefixItems":
			s = index(s.PrefixItems)
		default:
			return nil
		}
	}
	return s
}
