package mcp

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/benchhq/bench/agent"
)

func TestPrepareSchema(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		// valid and invalid are argument objects that must pass and fail.
		valid, invalid []string
		order          []string // root property order, when checked
	}{
		{name: "empty", schema: ``, valid: []string{`{}`, `{"a": 1}`}},
		{name: "draft-07 spelled without #", schema: `{"$schema": "http://json-schema.org/draft-07/schema", "type": "object",
			"properties": {"n": {"type": "integer"}}}`, valid: []string{`{"n": 1}`}, invalid: []string{`{"n": "1"}`}},
		{name: "2020-12 with #", schema: `{"$schema": "https://json-schema.org/draft/2020-12/schema#", "type": "object",
			"properties": {"n": {"type": "integer"}}}`, valid: []string{`{"n": 1}`}, invalid: []string{`{"n": 1.5}`}},
		{name: "draft-04 boolean exclusiveMinimum", schema: `{"$schema": "http://json-schema.org/draft-04/schema#", "type": "object",
			"properties": {"n": {"type": "number", "minimum": 0, "exclusiveMinimum": true}, "m": {"type": "number", "maximum": 9, "exclusiveMaximum": false}}}`,
			valid: []string{`{"n": 0.5, "m": 9}`}, invalid: []string{`{"n": 0}`, `{"m": 10}`}},
		{name: "2019-09 tuple items", schema: `{"$schema": "https://json-schema.org/draft/2019-09/schema", "type": "object",
			"properties": {"pair": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}], "additionalItems": false}}}`,
			valid: []string{`{"pair": ["a", 1]}`}, invalid: []string{`{"pair": [1, "a"]}`, `{"pair": ["a", 1, 2]}`}},
		{name: "draft-07 tuple items", schema: `{"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
			"properties": {"pair": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}]}}}`,
			valid: []string{`{"pair": ["a", 1]}`}, invalid: []string{`{"pair": [1, "a"]}`}},
		{name: "const next to type", schema: `{"type": "object", "properties": {"k": {"type": "string", "const": "v"}}}`,
			valid: []string{`{"k": "v"}`}, invalid: []string{`{"k": "w"}`}},
		{name: "definitions and nested refs", schema: `{"type": "object", "properties": {"a": {"$ref": "#/definitions/A"}},
			"definitions": {"A": {"type": "object", "properties": {"b": {"$ref": "#/definitions/B"}}, "required": ["b"]}, "B": {"type": "boolean"}}}`,
			valid: []string{`{"a": {"b": true}}`}, invalid: []string{`{"a": {}}`, `{"a": {"b": 1}}`}},
		{name: "pointer with escapes", schema: `{"type": "object", "properties": {"a/b": {"type": "string"}, "c": {"$ref": "#/properties/a~1b"}}}`,
			valid: []string{`{"c": "x"}`}, invalid: []string{`{"c": 1}`}},
		{name: "2020 ref siblings are merged", schema: `{"type": "object", "properties": {"a": {"$ref": "#/$defs/S", "maxLength": 3}},
			"$defs": {"S": {"type": "string"}}}`, valid: []string{`{"a": "abc"}`}, invalid: []string{`{"a": "abcd"}`, `{"a": 1}`}},
		{name: "draft-07 ref siblings are ignored", schema: `{"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
			"properties": {"a": {"$ref": "#/definitions/S", "maxLength": 3}}, "definitions": {"S": {"type": "string"}}}`,
			valid: []string{`{"a": "abcd"}`}, invalid: []string{`{"a": 1}`}},
		{name: "declared order kept", schema: `{"type": "object", "properties": {"zz": {"type": "string"}, "aa": {"type": "string"}, "mm": {"type": "string"}}}`,
			order: []string{"zz", "aa", "mm"}},
		{name: "allOf merged with order", schema: `{"type": "object", "properties": {"z": {"type": "string"}},
			"allOf": [{"properties": {"b": {"type": "string"}, "a": {"type": "string"}}, "required": ["a"]}]}`,
			valid: []string{`{"a": "x"}`}, invalid: []string{`{"b": "x"}`}, order: []string{"z", "b", "a"}},
		{name: "boolean property schemas", schema: `{"type": "object", "properties": {"any": true}, "additionalProperties": false}`,
			valid: []string{`{"any": [1]}`}, invalid: []string{`{"other": 1}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := prepareSchema([]byte(tt.schema))
			if err != nil {
				t.Fatalf("prepareSchema: %v", err)
			}
			spec := agent.Spec{Name: "t", InputSchema: s}
			if _, err := agent.OllamaTool(spec); err != nil {
				t.Errorf("OllamaTool: %v", err)
			}
			reg := agent.NewRegistry()
			if err := reg.Add(&Tool{spec: spec}); err != nil {
				t.Fatal(err)
			}
			check := func(args string, ok bool) {
				var m map[string]any
				if err := json.Unmarshal([]byte(args), &m); err != nil {
					t.Fatal(err)
				}
				if err := reg.Validate("t", m); (err == nil) != ok {
					t.Errorf("Validate(%s) = %v, want ok=%v", args, err, ok)
				}
			}
			for _, a := range tt.valid {
				check(a, true)
			}
			for _, a := range tt.invalid {
				check(a, false)
			}
			if tt.order != nil && !slices.Equal(s.PropertyOrder, tt.order) {
				t.Errorf("order = %v, want %v", s.PropertyOrder, tt.order)
			}
			b, _ := json.Marshal(s)
			for _, gone := range []string{`"$ref"`, `"$defs"`, `"definitions"`, orderKey} {
				if strings.Contains(string(b), gone) {
					t.Errorf("prepared schema still has %s: %s", gone, b)
				}
			}
		})
	}
}

func TestPrepareSchemaRefuses(t *testing.T) {
	tests := []struct{ name, schema, want string }{
		{"not JSON", `{"type": `, "input schema is not JSON"},
		{"trailing data", `{} {}`, "trailing data"},
		{"array", `[]`, "must be a JSON object, not an array"},
		{"not an object root", `{"type": "string"}`, `must describe an object, not type string`},
		{"unknown draft", `{"$schema": "http://json-schema.org/draft-03/schema#", "type": "object"}`, "only drafts"},
		{"recursive", `{"type": "object", "properties": {"n": {"$ref": "#/$defs/n"}}, "$defs": {"n": {"type": "array", "items": {"$ref": "#/$defs/n"}}}}`, "recursive"},
		{"ref to root", `{"type": "object", "properties": {"self": {"$ref": "#"}}}`, "recursive"},
		{"dangling", `{"type": "object", "properties": {"x": {"$ref": "#/$defs/nope"}}}`, "points to nothing"},
		{"anchor", `{"type": "object", "properties": {"x": {"$ref": "#foo"}}}`, "anchors cannot be resolved"},
		{"remote", `{"type": "object", "properties": {"x": {"$ref": "other.json#/a"}}}`, "not local"},
		{"root oneOf", `{"oneOf": [{"type": "object"}]}`, "oneOf at its root"},
		{"conflicting allOf at root", `{"type": "object", "allOf": [{"properties": {"a": {"type": "string"}}}, {"properties": {"a": {"maxLength": 2}}}]}`, "allOf at its root"},
		{"bad exclusive", `{"type": "object", "properties": {"n": {"exclusiveMinimum": true}}}`, "minimum is missing"},
		{"schema not an object", `{"type": "object", "properties": {"n": 5}}`, "#/properties/n: a schema must be an object or a boolean"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := prepareSchema([]byte(tt.schema))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("prepareSchema(%s) = %v, want an error with %q", tt.schema, err, tt.want)
			}
		})
	}
}

// A nested allOf that cannot be merged is left for agent.OllamaTool to
// refuse, so the tool is not offered.
func TestNestedAllOfConflict(t *testing.T) {
	s, err := prepareSchema([]byte(`{"type": "object", "properties": {"p": {"allOf": [{"type": "string"}, {"type": "integer"}]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if reason := checkSpec(agent.Spec{Name: "t", InputSchema: s}); !strings.Contains(reason, "allOf cannot be represented") {
		t.Errorf("checkSpec = %q", reason)
	}
}
