package mcp

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/benchhq/bench/agent"
	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// outputCheck is a tool's outputSchema, ready to check its results: a tool
// that declares one promises structured content that conforms to it, and
// the harness holds it to that rather than pass on what it cannot vouch
// for (the spec: clients SHOULD validate structured results).
type outputCheck struct {
	raw      json.RawMessage      // as the server sent it; nil: none declared
	resolved *jsonschema.Resolved // nil when raw is nil or err is set
	err      string               // why raw cannot check anything
}

// maxOutputSchema bounds the outputSchema bench will resolve: a larger one
// is refused (and its tool's results with it) rather than expanded.
const maxOutputSchema = 1 << 20

// outputChecker prepares the check of a tool's results from its
// outputSchema as written (sniffed) or, failing that, as the SDK decoded it.
func outputChecker(raw json.RawMessage, decoded any) outputCheck {
	if len(raw) == 0 && decoded != nil {
		raw, _ = json.Marshal(decoded)
	}
	if len(raw) == 0 || string(raw) == "null" {
		return outputCheck{}
	}
	oc := outputCheck{raw: raw}
	if len(raw) > maxOutputSchema {
		oc.err = fmt.Sprintf("it is %d bytes long (at most %d)", len(raw), maxOutputSchema)
		return oc
	}
	s, err := agent.ParseSchema(raw)
	if err != nil {
		oc.err = strings.Replace(err.Error(), "input schema", "outputSchema", 1)
		return oc
	}
	if s.Type != "object" {
		oc.err = fmt.Sprintf("it must describe an object, not %s", orDefault(s.Type, "an unspecified type"))
		return oc
	}
	res, err := s.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: false})
	if err != nil {
		oc.err = err.Error()
		return oc
	}
	oc.resolved = res
	return oc
}

// check returns why res breaks the tool's outputSchema, or "". Only a
// result that is not an error is held to it, as the spec says.
func (oc outputCheck) check(res *sdk.CallToolResult) string {
	if oc.raw == nil || res.IsError {
		return ""
	}
	if oc.err != "" {
		return "its outputSchema is not a JSON Schema bench can check (" + oc.err + ")"
	}
	if res.StructuredContent == nil {
		return "it declares an outputSchema but returned no structuredContent"
	}
	// The validator wants JSON values as encoding/json decodes them.
	v := res.StructuredContent
	if _, ok := v.(map[string]any); !ok {
		b, err := json.Marshal(v)
		if err != nil {
			return "its structuredContent cannot be encoded: " + err.Error()
		}
		if err := json.Unmarshal(b, &v); err != nil {
			return "its structuredContent cannot be decoded: " + err.Error()
		}
	}
	if err := oc.resolved.Validate(v); err != nil {
		return "its structuredContent does not match its outputSchema: " + strings.TrimPrefix(err.Error(), "validating root: ")
	}
	return ""
}
