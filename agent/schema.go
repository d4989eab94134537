package agent

import (
	"fmt"
	"maps"
	"slices"
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
		var target *jsonschema.Schema
		switch {
		case strings.HasPrefix(ref, "#/$defs/"):
			target = c.root.Defs[strings.TrimPrefix(ref, "#/$defs/")]
		case strings.HasPrefix(ref, "#/definitions/"):
			target = c.root.Definitions[strings.TrimPrefix(ref, "#/definitions/")]
		case ref == "#":
			return nil, fmt.Errorf("%s: recursive $ref to the root cannot be represented", path)
		default:
			return nil, fmt.Errorf("%s: $ref %q is not a local definition", path, ref)
		}
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
	case s.Const != nil:
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
