package issuetracker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	segjson "github.com/segmentio/encoding/json"
)

// The hot path: tools/call without the SDK's machinery. Through the SDK
// a call crosses goroutines (a new one per request, whose stack grows
// through the call) and is decoded and encoded several times over; the
// round trip was about five times the seed lesson's Python server's. A
// tools/call of one of the tracker's tools, once the session is
// initialized, is answered on the reading goroutine (lineConn.Read) with
// what the SDK would answer: the arguments checked against the same
// schema, decoded into the same input type, the same handler, the same
// result (text content, structured content) and, for revision 2026-07-28,
// the same resultType and server info in _meta. Anything else, including
// arguments the schema refuses and requests of a revision or session
// state not seen before, goes to the SDK as before (TestDirectAsTheSDK).

// direct answers the tracker's tool calls.
type direct struct {
	impl  *mcp.Implementation
	tools map[string]directTool

	hits atomic.Int64 // calls answered here
	// infoMeta is the _meta of a per-request result, as the SDK writes it.
	infoMeta json.RawMessage

	mu        sync.Mutex
	pending   jsonrpc.ID // the initialize or server/discover request in flight
	version   string     // the version initialize settled on: handshake calls
	supported []string   // the versions server/discover offered: per-request calls
}

// directTool answers a call of one tool from its arguments as written; ok
// false leaves the call to the SDK.
type directTool func(args json.RawMessage) (res *mcp.CallToolResult, ok bool)

// addTool adds a tool to the server, and its direct answer to d: as the
// SDK's mcp.AddTool does with h, for arguments the input schema accepts
// and a handler that returns no JSON-RPC error.
func addTool[In, Out any](s *mcp.Server, d *direct, tool *mcp.Tool, h func(In) (*mcp.CallToolResult, Out, error)) {
	mcp.AddTool(s, tool, func(_ context.Context, _ *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
		return h(in)
	})
	schema, ok := tool.InputSchema.(*jsonschema.Schema)
	if !ok {
		return // the SDK answers every call
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		return
	}
	d.tools[tool.Name] = func(args json.RawMessage) (*mcp.CallToolResult, bool) {
		v := map[string]any{}
		if len(args) > 0 && json.Unmarshal(args, &v) != nil {
			return nil, false
		}
		var inst any = v
		if resolved.ApplyDefaults(&inst) != nil || resolved.Validate(inst) != nil {
			return nil, false // the SDK words the refusal
		}
		b, err := json.Marshal(inst)
		if err != nil {
			return nil, false
		}
		var in In
		if json.Unmarshal(b, &in) != nil {
			return nil, false
		}
		res, out, err := h(in)
		if err != nil {
			if _, wire := err.(*jsonrpc.Error); wire {
				return nil, false
			}
			res = &mcp.CallToolResult{}
			res.SetError(err)
			return res, true
		}
		if res == nil {
			res = &mcp.CallToolResult{}
		}
		// The SDK writes the output through a generic value, which sorts
		// its keys; the output types' fields are in that order already.
		outJSON, err := json.Marshal(out)
		if err != nil {
			return nil, false
		}
		res.StructuredContent = json.RawMessage(outJSON)
		if res.Content == nil {
			res.Content = []mcp.Content{&mcp.TextContent{Text: string(outJSON)}}
		} else if len(outJSON) == 0 || outJSON[0] != '{' {
			res.Content = append(res.Content, &mcp.TextContent{Text: string(outJSON)})
		}
		return res, true
	}
}

// newProtocol is the first revision whose requests carry their own
// protocol version (SEP-2575), for which results carry a resultType.
const newProtocol = "2026-07-28"

// callParams is what the direct path reads of a tools/call's params.
type callParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Meta      map[string]any  `json:"_meta"`
}

// answer returns the response to req, or nil to leave req to the SDK.
func (d *direct) answer(req *jsonrpc.Request) *jsonrpc.Response {
	if d == nil || req.Method != "tools/call" || !req.ID.IsValid() {
		return nil
	}
	var p callParams
	if decode(req.Params, &p) != nil {
		return nil
	}
	tool := d.tools[p.Name]
	if tool == nil {
		return nil
	}
	// A call of the per-request protocol must name a version the server
	// offered and carry the client's capabilities, as the SDK checks; a
	// call of the handshake's comes after initialize was answered.
	d.mu.Lock()
	version, supported := d.version, d.supported
	d.mu.Unlock()
	perRequest := false
	if v, ok := p.Meta[mcp.MetaKeyProtocolVersion].(string); ok && v >= newProtocol {
		if _, caps := p.Meta[mcp.MetaKeyClientCapabilities].(map[string]any); !caps || !slices.Contains(supported, v) {
			return nil
		}
		perRequest = true
	} else if version == "" || version >= newProtocol {
		return nil
	}
	res, ok := tool(p.Arguments)
	if !ok {
		return nil
	}
	if perRequest {
		res = completed(res)
		m := res.GetMeta()
		if m == nil {
			m = map[string]any{}
		}
		if _, ok := m[mcp.MetaKeyServerInfo]; !ok {
			m[mcp.MetaKeyServerInfo] = d.impl
		}
		res.SetMeta(m)
	}
	b, ok := d.appendResult(nil, res, perRequest)
	if !ok {
		var err error
		if b, err = json.Marshal(res); err != nil {
			return nil
		}
	}
	d.hits.Add(1)
	return &jsonrpc.Response{ID: req.ID, Result: b}
}

// appendResult appends res as json.Marshal writes it, for the common
// result of a handshake-protocol call (one text, structured content, no
// error, no _meta), and reports whether it did: json.Marshal writes a
// CallToolResult through two MarshalJSON methods and compacts each of
// their outputs again, most of what a direct call cost.
func (d *direct) appendResult(b []byte, res *mcp.CallToolResult, perRequest bool) ([]byte, bool) {
	if res.IsError || len(res.Content) != 1 {
		return nil, false
	}
	if perRequest {
		// _meta is the server's info alone, and resultType comes last.
		info, ok := res.Meta[mcp.MetaKeyServerInfo]
		if len(res.Meta) != 1 || !ok || info != any(d.impl) || d.infoMeta == nil {
			return nil, false
		}
	} else if res.Meta != nil {
		return nil, false
	}
	t, ok := res.Content[0].(*mcp.TextContent)
	sc, raw := res.StructuredContent.(json.RawMessage)
	if !ok || t.Meta != nil || t.Annotations != nil || !raw || len(sc) == 0 {
		return nil, false
	}
	text, err := json.Marshal(t.Text)
	if err != nil {
		return nil, false
	}
	b = append(b, '{')
	if perRequest {
		b = append(b, `"_meta":`...)
		b = append(b, d.infoMeta...)
		b = append(b, ',')
	}
	b = append(b, `"content":[{"type":"text","text":`...)
	b = append(b, text...)
	b = append(b, `}],"structuredContent":`...)
	b = append(b, sc...)
	if perRequest {
		b = append(b, `,"resultType":"complete"`...)
	}
	return append(b, '}'), true
}

// appendResponse appends resp as jsonrpc.EncodeMessage writes it, with
// its result as it is: the direct path's is json.Marshal's, compact
// already, which EncodeMessage would compact again at the cost of the
// whole answer. The rest (the id) is EncodeMessage's own, of a response
// whose result is 0.
func appendResponse(b []byte, resp *jsonrpc.Response) ([]byte, error) {
	head, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: resp.ID, Result: json.RawMessage("0")})
	if err != nil {
		return nil, err
	}
	cut, ok := bytes.CutSuffix(head, []byte(`"result":0}`))
	if !ok {
		return nil, errors.New("unexpected encoding of a response")
	}
	b = append(b, cut...)
	b = append(b, `"result":`...)
	b = append(b, resp.Result...)
	return append(b, "}\n"...), nil
}

// decode decodes one JSON value, all of data, as the SDK decodes what a
// client writes: segmentio's decoder, field names matched
// case-sensitively.
func decode(data []byte, v any) error {
	rest, err := segjson.Parse(data, v, segjson.DontMatchCaseInsensitiveStructFields)
	if err == nil && len(bytes.TrimSpace(rest)) > 0 {
		err = errors.New("bytes after the value")
	}
	return err
}

// callLine is a line that may be a tools/call request, decoded without
// the SDK's decoder (which takes a 32 KB buffer for every message).
type callLine struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      any             `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

// request returns line as a tools/call request, or nil when it is not one
// the direct path may take (then the SDK decodes it).
func (d *direct) request(line []byte) *jsonrpc.Request {
	if d == nil || !bytes.Contains(line, []byte(`"tools/call"`)) {
		return nil
	}
	var l callLine
	if decode(line, &l) != nil || l.JSONRPC != "2.0" || l.Method != "tools/call" || l.ID == nil {
		return nil
	}
	id, err := jsonrpc.MakeID(l.ID)
	if err != nil || !id.IsValid() {
		return nil
	}
	return &jsonrpc.Request{ID: id, Method: l.Method, Params: l.Params}
}

// completed returns res marked, as the SDK marks results of revision
// 2026-07-28, "resultType": "complete" (the field is the SDK's own, set
// by its decoding).
func completed(res *mcp.CallToolResult) *mcp.CallToolResult {
	var out mcp.CallToolResult
	_ = json.Unmarshal([]byte(`{"content":[],"resultType":"complete"}`), &out)
	out.Meta, out.Content, out.StructuredContent, out.IsError = res.Meta, res.Content, res.StructuredContent, res.IsError
	return &out
}

// sawRequest notes a request going to the SDK: the handshake's.
func (d *direct) sawRequest(req *jsonrpc.Request) {
	if d == nil || (req.Method != "initialize" && req.Method != "server/discover") {
		return
	}
	d.mu.Lock()
	d.pending = req.ID
	d.mu.Unlock()
}

// sawResponse notes a response the SDK writes: the handshake's answer
// makes the session ready, with its protocol version.
func (d *direct) sawResponse(resp *jsonrpc.Response) {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.pending.IsValid() || resp.ID != d.pending || resp.Error != nil {
		return
	}
	var r struct {
		ProtocolVersion   string   `json:"protocolVersion"`
		SupportedVersions []string `json:"supportedVersions"`
	}
	if json.Unmarshal(resp.Result, &r) == nil {
		if r.ProtocolVersion != "" {
			d.version = r.ProtocolVersion
		}
		if len(r.SupportedVersions) > 0 {
			d.supported = r.SupportedVersions
		}
	}
	d.pending = jsonrpc.ID{}
}
