package agent

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// Registries made by one Schemas share the resolution of a schema they
// have in common, and check arguments against it as a registry alone does.
func TestSchemasShared(t *testing.T) {
	schema := func() *jsonschema.Schema {
		return &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"n": {Type: "integer", Minimum: jsonschema.Ptr(1.0)}}, Required: []string{"n"}}
	}
	tool := func() Tool {
		return stubSpecTool{Spec{Name: "count", InputSchema: schema(), Origin: OriginBuiltin, Class: ClassRead}}
	}
	var shared Schemas
	alone := NewRegistry()
	if err := alone.Add(tool()); err != nil {
		t.Fatal(err)
	}
	var regs []*Registry
	for range 3 {
		r := shared.NewRegistry()
		if err := r.Add(tool()); err != nil {
			t.Fatal(err)
		}
		regs = append(regs, r)
	}
	for _, args := range []string{`{"n": 2}`, `{"n": 0}`, `{}`, `{"n": "x"}`, `[1]`} {
		_, want := alone.ValidateJSON("count", []byte(args))
		for i, r := range regs {
			if _, err := r.ValidateJSON("count", []byte(args)); fmt.Sprint(err) != fmt.Sprint(want) {
				t.Errorf("registry %d, %s: %v, want %v", i, args, err, want)
			}
		}
	}
	if n := len(shared.byJSON); n != 1 {
		t.Errorf("%d resolutions kept for one schema", n)
	}
	first, _ := regs[0].entries["count"].resolve()
	for i, r := range regs[1:] {
		if res, _ := r.entries["count"].resolve(); res != first {
			t.Errorf("registry %d resolved the schema again", i+1)
		}
	}
}

type stubSpecTool struct{ spec Spec }

func (s stubSpecTool) Spec() Spec { return s.spec }
func (s stubSpecTool) Call(context.Context, map[string]any) (Result, error) {
	return Result{Text: "ok"}, nil
}
