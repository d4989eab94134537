package mcp

import (
	"errors"
	"strings"
	"testing"
)

// Nesting is counted in objects and arrays, never inside strings, however
// their quotes are escaped.
func TestCheckDepth(t *testing.T) {
	nest := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	for _, tt := range []struct {
		name string
		data string
		deep bool
	}{
		{"at the limit", nest(maxDepth), false},
		{"past the limit", nest(maxDepth + 1), true},
		{"objects count", strings.Repeat(`{"a":`, maxDepth+1) + "1" + strings.Repeat("}", maxDepth+1), true},
		{"siblings do not add up", strings.Repeat("[]", 2*maxDepth), false},
		{"brackets in a string", `["` + strings.Repeat("[", 2*maxDepth) + `"]`, false},
		{"after an escaped quote", `["\"` + strings.Repeat("[", 2*maxDepth) + `"]`, false},
		{"after an escaped backslash", `["\\"` + strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth) + `]`, true},
		{"three backslashes", `["\\\"` + strings.Repeat("[", 2*maxDepth) + `"]`, false},
		{"an unterminated string", `["` + strings.Repeat("[", 2*maxDepth), false},
		{"not JSON", "\x00}}}]]]", false},
	} {
		err := checkDepth([]byte(tt.data))
		if (err != nil) != tt.deep || (err != nil && !errors.Is(err, errTooDeep)) {
			t.Errorf("%s: checkDepth = %v, want too deep %v", tt.name, err, tt.deep)
		}
	}
}

// unmarshal refuses what the SDK's decoder would recurse into too deeply
// and what follows the value; it matches field names case-sensitively.
func TestUnmarshal(t *testing.T) {
	type msg struct {
		Result string `json:"result"`
	}
	for _, tt := range []struct {
		data string
		want string
		ok   bool
	}{
		{`{"result":"a"}`, "a", true},
		{` {"result":"a"} `, "a", true},
		{`{"Result":"a"}`, "", true},
		{`{"result":"a"} {}`, "", false},
		{`{"result":"a"`, "", false},
		{`{"result":` + strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1) + `}`, "", false},
	} {
		var m msg
		err := unmarshal([]byte(tt.data), &m)
		if (err == nil) != tt.ok || (err == nil && m.Result != tt.want) {
			t.Errorf("unmarshal(%s) = %+v, %v; want %q, ok %v", tt.data, m, err, tt.want, tt.ok)
		}
	}
}

// A tools/list answer read from an HTTP body, which nothing checked
// before the sniff of raw schemas, is refused when it nests too deeply
// (segmentio's parser recurses: a deep enough body would overflow the
// stack); one within bounds gives its tools.
func TestRawToolSchemaRefusesDeepBodies(t *testing.T) {
	r := &rawToolSchema{byName: map[string]rawTool{}}
	deep := `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"deep","inputSchema":` +
		strings.Repeat("[", 2*maxDepth) + strings.Repeat("]", 2*maxDepth) + `}]}}`
	r.observe([]byte(deep))
	if _, ok := r.get("deep"); ok {
		t.Error("a tools/list answer nested deeper than maxDepth was taken")
	}
	r.observe([]byte(`{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"flat","inputSchema":{"type":"object"}}]}}`))
	if got, ok := r.get("flat"); !ok || string(got.InputSchema) != `{"type":"object"}` {
		t.Errorf("flat tool: %q, %v", got.InputSchema, ok)
	}
}
