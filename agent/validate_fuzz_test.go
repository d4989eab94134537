package agent_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/benchhq/bench/agent"
)

// FuzzValidate feeds arbitrary JSON arguments to the schema validation of
// every built-in tool. Whatever the input, validation must not panic, and
// arguments it accepts must carry every required field with the declared
// JSON type: the tool can then trust them.
func FuzzValidate(f *testing.F) {
	f.Add("read_file", `{"path":"a.txt"}`)
	f.Add("read_file", `{"path":"a.txt","start_line":2,"end_line":1.5}`)
	f.Add("write_file", `{"path":"a","content":null}`)
	f.Add("edit_file", `{"path":"a","old_string":"x","new_string":"y","replace_all":"yes"}`)
	f.Add("run_command", `{"command":["ls"]}`)
	f.Add("run_command", `{"command":"ls","timeout_seconds":-1e308}`)
	f.Add("search", `{"pattern":"(","extra":{}}`)
	f.Add("list_dir", `[]`)
	f.Add("nope", `{}`)
	ws, err := agent.NewWorkspace(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	reg := agent.NewRegistry()
	for _, t := range agent.Builtins(ws, agent.BuiltinOptions{}) {
		if err := reg.Add(t); err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, tool, raw string) {
		var args map[string]any
		if json.Unmarshal([]byte(raw), &args) != nil {
			return
		}
		if err := reg.Validate(tool, args); err != nil {
			return
		}
		tl, ok := reg.Lookup(tool)
		if !ok {
			t.Fatalf("validated arguments for unknown tool %q", tool)
		}
		schema := tl.Spec().InputSchema
		for _, req := range schema.Required {
			v, ok := args[req]
			if !ok {
				t.Fatalf("%s: accepted %s without required %q", tool, raw, req)
			}
			want := schema.Properties[req].Type
			if !hasJSONType(v, want) {
				t.Fatalf("%s: accepted %s with %q of the wrong type (want %s)", tool, raw, req, want)
			}
		}
		for name := range args {
			if _, ok := schema.Properties[name]; !ok {
				t.Fatalf("%s: accepted unknown argument %q", tool, name)
			}
		}
		// Read-only tools may run on anything validated, without panicking.
		if tl.Spec().Class == agent.ClassRead {
			_, _ = tl.Call(context.Background(), args)
		}
	})
}

func hasJSONType(v any, typ string) bool {
	switch typ {
	case "string":
		_, ok := v.(string)
		return ok
	case "integer":
		f, ok := v.(float64)
		return ok && f == float64(int64(f))
	case "number":
		_, ok := v.(float64)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "object":
		_, ok := v.(map[string]any)
		return ok
	}
	return true
}
