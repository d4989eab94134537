package agent_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/ollama/ollama/api"

	"github.com/benchhq/bench/agent"
)

func TestOllamaToolConvertsSchemas(t *testing.T) {
	tests := []struct {
		name    string
		schema  string
		want    []string // substrings of the definition's JSON
		wantErr string
	}{
		{"flat", `{"type":"object","required":["a"],"properties":{"a":{"type":"string","description":"the a"}}}`,
			[]string{`"required":["a"]`, `"a":{"type":"string","description":"the a"}`}, ""},
		{"enum and const", `{"type":"object","properties":{"e":{"type":"string","enum":["x","y"]},"c":{"type":"string","const":"k"}}}`,
			[]string{`"enum":["x","y"]`, `"c":{"type":"string","enum":["k"]}`}, ""},
		{"nested object", `{"type":"object","properties":{"o":{"type":"object","required":["n"],"properties":{"n":{"type":"integer"}}}}}`,
			[]string{`"o":{"type":"object","description":"(required: n)","properties":{"n":{"type":"integer"}}}`}, ""},
		{"array of objects", `{"type":"object","properties":{"l":{"type":"array","items":{"type":"object","properties":{"k":{"type":"string"}}}}}}`,
			[]string{`"items":{"type":"object","properties":{"k":{"type":"string"}}}`}, ""},
		{"$defs inlined", `{"type":"object","$defs":{"P":{"type":"string","enum":["lo","hi"]}},"properties":{"p":{"$ref":"#/$defs/P"}}}`,
			[]string{`"p":{"type":"string","enum":["lo","hi"]}`}, ""},
		{"pointer ref", `{"type":"object","properties":{"a":{"type":"array","items":{"type":"number"}},"b":{"$ref":"#/properties/a/items"}}}`,
			[]string{`"b":{"type":"number"}`}, ""},
		{"anyOf property", `{"type":"object","properties":{"v":{"anyOf":[{"type":"string"},{"type":"null"}]}}}`,
			[]string{`"anyOf":[{"type":"string"},{"type":"null"}]`}, ""},
		{"root anyOf", `{"anyOf":[{"type":"object"},{"type":"object"}]}`, nil, "root"},
		{"not an object", `{"type":"string"}`, nil, "must be an object"},
		{"root oneOf", `{"oneOf":[{"type":"object"}]}`, nil, "oneOf at its root"},
		{"recursive", `{"type":"object","$defs":{"N":{"type":"object","properties":{"next":{"$ref":"#/$defs/N"}}}},"properties":{"n":{"$ref":"#/$defs/N"}}}`, nil, "too deep"},
		{"remote ref", `{"type":"object","properties":{"r":{"$ref":"https://example.com/s.json"}}}`, nil, "not a pointer"},
		{"dangling ref", `{"type":"object","properties":{"r":{"$ref":"#/$defs/missing"}}}`, nil, "points to nothing"},
		{"allOf that conflicts", `{"type":"object","properties":{"r":{"allOf":[{"type":"string"},{"type":"integer"}]}}}`, nil, "allOf cannot be represented"},
		{"allOf merged", `{"type":"object","properties":{"r":{"allOf":[{"type":"string"},{"maxLength":3}]}}}`,
			[]string{`"r":{"type":"string"}`}, ""},
		{"const beside an enum", `{"type":"object","properties":{"c":{"type":"string","enum":["j","k"],"const":"k"}}}`,
			[]string{`"c":{"type":"string","enum":["k"]}`}, ""},
		{"description beside a ref", `{"type":"object","$defs":{"P":{"type":"string","description":"a place"}},"properties":{"p":{"$ref":"#/$defs/P","description":"where to"}}}`,
			[]string{`"p":{"type":"string","description":"where to"}`}, ""},
		{"empty schema", `true`, []string{`"parameters":{"type":"object","properties":{}}`}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A schema written as JSON is normalised, then converted.
			s, err := agent.ParseSchema([]byte(tt.schema))
			var def api.Tool
			if err == nil {
				def, err = agent.OllamaTool(agent.Spec{Name: "t", InputSchema: s})
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to say %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(def)
			if strings.Contains(string(b), "$ref") || strings.Contains(string(b), "const") {
				t.Errorf("definition %s still has a $ref or a const", b)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(b), w) {
					t.Errorf("definition %s\nlacks %s", b, w)
				}
			}
		})
	}
}

// A schema built in Go has no declared order: its properties are sorted,
// so that the prompt is deterministic.
func TestOllamaToolSortsPropertiesWithoutOrder(t *testing.T) {
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(`{"type":"object","properties":{"z":{"type":"string"},"a":{"type":"string"}}}`), &s); err != nil {
		t.Fatal(err)
	}
	def, err := agent.OllamaTool(agent.Spec{Name: "t", InputSchema: &s})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(def)
	if w := `"properties":{"a":{"type":"string"},"z":{"type":"string"}}`; !strings.Contains(string(b), w) {
		t.Errorf("definition %s\nlacks %s", b, w)
	}
}

func TestOllamaToolRefusesAnUnnormalisedRef(t *testing.T) {
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(`{"type":"object","$defs":{"P":{"type":"string"}},"properties":{"p":{"$ref":"#/$defs/P"}}}`), &s); err != nil {
		t.Fatal(err)
	}
	if _, err := agent.OllamaTool(agent.Spec{Name: "t", InputSchema: &s}); err == nil || !strings.Contains(err.Error(), "ParseSchema") {
		t.Errorf("err = %v, want a refusal pointing to ParseSchema", err)
	}
}

func TestRegistryRefusesSchemasItCannotCheck(t *testing.T) {
	s := &jsonschema.Schema{Schema: "http://json-schema.org/draft-04/schema#", Type: "object"}
	tool := echoTool("x", agent.ClassRead, nil)
	tool.spec.InputSchema = s
	if err := agent.NewRegistry().Add(tool); err == nil || !strings.Contains(err.Error(), "cannot be checked") {
		t.Errorf("err = %v, want a refusal", err)
	}
}

// TestOllamaToolKeepsPropertyOrder: a schema built in Go with a
// PropertyOrder reaches the model in that order.
func TestOllamaToolKeepsPropertyOrder(t *testing.T) {
	s := &jsonschema.Schema{Type: "object", PropertyOrder: []string{"z", "a"},
		Properties: map[string]*jsonschema.Schema{"a": {Type: "string"}, "z": {Type: "string"}}}
	def, err := agent.OllamaTool(agent.Spec{Name: "t", InputSchema: s})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(def)
	if !strings.Contains(string(b), `"properties":{"z":{"type":"string"},"a":{"type":"string"}}`) {
		t.Errorf("definition %s does not list z before a", b)
	}
}

// TestParseSchema parses foreign schemas and checks that the Registry
// validates them as written, that the model can be shown them, and that
// nothing is left that only one of the two would understand.
func TestParseSchema(t *testing.T) {
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
		{name: "const outside its enum", schema: `{"type": "object", "properties": {"k": {"type": "string", "enum": ["a"], "const": "v"}}}`,
			valid: []string{`{}`}, invalid: []string{`{"k": "v"}`, `{"k": "a"}`}},
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
			s, err := agent.ParseSchema([]byte(tt.schema))
			if err != nil {
				t.Fatalf("ParseSchema: %v", err)
			}
			tool := echoTool("t", agent.ClassRead, nil)
			tool.spec.InputSchema = s
			if _, err := agent.OllamaTool(tool.spec); err != nil {
				t.Errorf("OllamaTool: %v", err)
			}
			reg := agent.NewRegistry()
			if err := reg.Add(tool); err != nil {
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
			// The order record is a NUL-prefixed key, which JSON escapes.
			for _, gone := range []string{`"$ref"`, `"$defs"`, `"definitions"`, `"const"`, `\u0000order`} {
				if strings.Contains(string(b), gone) {
					t.Errorf("parsed schema still has %s: %s", gone, b)
				}
			}
		})
	}
}

func TestParseSchemaRefuses(t *testing.T) {
	tests := []struct{ name, schema, want string }{
		{"not JSON", `{"type": `, "input schema is not JSON"},
		{"trailing data", `{} {}`, "trailing data"},
		{"array", `[]`, "must be a JSON object, not an array"},
		{"false", `false`, "must be a JSON object, not a boolean"},
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
		{"fan-out", fanOutSchema(12), "too many $ref expansions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := agent.ParseSchema([]byte(tt.schema))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ParseSchema(%s) = %v, want an error with %q", clipSchema(tt.schema), err, tt.want)
			}
		})
	}
}

// fanOutSchema returns a schema whose references double at each of n
// levels: small as written, 2^n schemas once inlined.
func fanOutSchema(n int) string {
	defs := []string{`"d0": {"type": "string"}`}
	for i := 1; i <= n; i++ {
		defs = append(defs, fmt.Sprintf(`"d%d": {"type": "object", "properties": {"a": {"$ref": "#/$defs/d%d"}, "b": {"$ref": "#/$defs/d%d"}}}`, i, i-1, i-1))
	}
	return fmt.Sprintf(`{"type": "object", "properties": {"x": {"$ref": "#/$defs/d%d"}}, "$defs": {%s}}`, n, strings.Join(defs, ", "))
}

func clipSchema(s string) string {
	if len(s) > 120 {
		return s[:120] + "..."
	}
	return s
}

// BenchmarkOllamaTool converts the built-in tools, as every attempt does.
func BenchmarkOllamaTool(b *testing.B) {
	tools := agent.Builtins(nil, agent.BuiltinOptions{})
	for b.Loop() {
		for _, t := range tools {
			if _, err := agent.OllamaTool(t.Spec()); err != nil {
				b.Fatal(err)
			}
		}
	}
}
