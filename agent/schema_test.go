package agent_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

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
		{"recursive", `{"type":"object","$defs":{"N":{"type":"object","properties":{"next":{"$ref":"#/$defs/N"}}}},"properties":{"n":{"$ref":"#/$defs/N"}}}`, nil, "too deep"},
		{"remote ref", `{"type":"object","properties":{"r":{"$ref":"https://example.com/s.json"}}}`, nil, "not a pointer"},
		{"dangling ref", `{"type":"object","properties":{"r":{"$ref":"#/$defs/missing"}}}`, nil, "points to nothing"},
		{"allOf", `{"type":"object","properties":{"r":{"allOf":[{"type":"string"}]}}}`, nil, "allOf"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s jsonschema.Schema
			if err := json.Unmarshal([]byte(tt.schema), &s); err != nil {
				t.Fatal(err)
			}
			def, err := agent.OllamaTool(agent.Spec{Name: "t", InputSchema: &s})
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
			for _, w := range tt.want {
				if !strings.Contains(string(b), w) {
					t.Errorf("definition %s\nlacks %s", b, w)
				}
			}
		})
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
