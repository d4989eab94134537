package mcp

import (
	"context"
	"encoding/json"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/benchhq/bench/agent"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// viaSDK calls a tool as Tool.Call does, through the SDK's CallTool.
func viaSDK(ctx context.Context, t *Tool, args map[string]any) agent.Result {
	w := t.conn.watches.start(t.conn, t.spec.Name)
	defer t.conn.watches.stop(w)
	p := &sdk.CallToolParams{Name: t.info.Tool, Arguments: args}
	p.SetProgressToken(w.token)
	res, err := t.conn.session.CallTool(ctx, p)
	if err != nil {
		text, kind := t.failure(err, 0, w)
		return agent.Result{Text: text, IsError: true, Kind: kind}
	}
	return agent.Result{Text: formatResult(res, resultLimit), IsError: res.IsError, Details: callDetails(res, w)}
}

// A call on a stdio server goes straight to the server (stdioConn.callTool)
// and must come back as it would through the SDK: the same observation,
// error or not, for every kind of answer.
func TestDirectCallAnswersAsTheSDK(t *testing.T) {
	raw := connect(t, testServer("raw", "raw", nil), Vars{Workspace: t.TempDir()}, Options{})
	issues := connect(t, issuesServer(t, "issues"), Vars{Workspace: t.TempDir()}, Options{})
	ctx := context.Background()
	type call struct {
		conn *Conn
		tool string
		args map[string]any
	}
	// The seed lesson's server checks the _meta of every request of
	// revision 2026-07-28.
	seed := connect(t, seedServer(t), Vars{Workspace: t.TempDir()}, Options{})
	if v := seed.Info().ProtocolVersion; v != "2026-07-28" {
		t.Errorf("the seed server negotiated %q, want 2026-07-28", v)
	}
	seedCalls := []call{{seed, "incidencias", map[string]any{"estado": "abierta"}}, {seed, "incidencias", map[string]any{"estado": "pendiente"}}}
	for _, tt := range append([]call{
		{raw, "echo", map[string]any{"text": "hé <b> & \u2028"}},
		{raw, "fail", nil},
		{raw, "error_no_text", nil},
		{raw, "rpc_error", nil},
		{raw, "media", nil},
		{raw, "structured", nil},
		{raw, "garbage", nil},
		{raw, "refs", map[string]any{"where": map[string]any{"city": "Delft"}}},
		{issues, "list_issues", map[string]any{"state": "all"}},
		{issues, "get_issue", map[string]any{"id": 11}},
		{issues, "get_issue", map[string]any{"id": 999}},
		{issues, "search_issues", map[string]any{"query": "crash"}},
	}, seedCalls...) {
		name := tt.conn.srv.Name + Separator + tt.tool
		t.Run(name, func(t *testing.T) {
			tool := toolNamed(t, tt.conn, name).(*Tool)
			want := viaSDK(ctx, tool, tt.args)
			got, err := tool.Call(ctx, tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if got.Text != want.Text || got.IsError != want.IsError || got.Kind != want.Kind || !sameJSON(got.Details, want.Details) {
				t.Errorf("direct call: %+v\nthrough the SDK: %+v", got, want)
			}
		})
	}
	if tt := raw.stdio.conn; tt.seq == 0 {
		t.Error("no call went straight to the server")
	}
}

// The direct call sends what the SDK sends: its _meta (revision
// 2026-07-28), the tool's name and its arguments, in one line written as
// the SDK writes a request.
func TestCallRequestAsTheSDK(t *testing.T) {
	meta := json.RawMessage(`{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`)
	for _, tt := range []struct {
		name string
		meta json.RawMessage
		tool string
		args map[string]any
	}{
		{"meta", meta, "get_issue", map[string]any{"id": 11}},
		{"no meta", nil, "get_issue", map[string]any{"id": 11}},
		{"no arguments", nil, "x", nil},
		{"escapes", meta, "é\"<b>\u2028", map[string]any{"text": "hé <b> & \u2028 \"q\"", "n": []any{1.5, nil, true}, "o": map[string]any{"z": 1, "a": "b"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := appendCallRequest([]byte("left alone"), "bench-7", tt.meta, "bench-progress-3", tt.tool, tt.args)
			if err != nil {
				t.Fatal(err)
			}
			p := &sdk.CallToolParams{Name: tt.tool, Arguments: tt.args}
			if tt.args == nil {
				p.Arguments = map[string]any{}
			}
			if tt.meta != nil {
				if err := json.Unmarshal(tt.meta, &p.Meta); err != nil {
					t.Fatal(err)
				}
			}
			p.SetProgressToken("bench-progress-3")
			params, err := json.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			id, _ := jsonrpc.MakeID("bench-7")
			want, err := jsonrpc.EncodeMessage(&jsonrpc.Request{ID: id, Method: "tools/call", Params: params})
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != "left alone"+string(want)+"\n" {
				t.Errorf("request\n%s\nthe SDK's\n%s", got, want)
			}
		})
	}
}

// A tool call costs the client what the messages carry: each line the
// server writes is decoded once (the decoding that checks it is the
// message), with no 32 KB decoder buffer per decoding as in the SDK.
func TestCallAllocatesLittle(t *testing.T) {
	c := connect(t, issuesServer(t, "issues"), Vars{Workspace: t.TempDir()}, Options{})
	tool := toolNamed(t, c, "issues__get_issue")
	ctx := context.Background()
	args := map[string]any{"id": 11}
	if _, err := tool.Call(ctx, args); err != nil {
		t.Fatal(err)
	}
	const n = 50
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		if res, err := tool.Call(ctx, args); err != nil || res.IsError {
			t.Fatalf("call: %v %+v", err, res)
		}
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / n; per > 24<<10 {
		t.Errorf("%d bytes allocated per call, want under 24 KB", per)
	}
}

// A line that answers a direct call is decoded once (directAnswer) into
// what decodeMessage and decodeResult make of it; any other line is left
// to decodeMessage.
func TestDirectAnswerAsDecodeMessage(t *testing.T) {
	for _, tt := range []struct {
		line  string
		taken bool
	}{
		{`{"jsonrpc":"2.0","id":"bench-1","result":{"content":[{"type":"text","text":"a\nb"}],"structuredContent":{"x":1}}}`, true},
		{`{"result":{"isError":true,"content":[{"type":"text","text":"no"}]},"id":"bench-1","jsonrpc":"2.0"}`, true},
		{`{"jsonrpc":"2.0","id":"bench-1","result":{"content":[{"type":"image","mimeType":"image/png","data":"aGk="}]},"error":null}`, true},
		{`{"jsonrpc":"2.0","id":"bench-1","result":{"content":[{"type":"weird","x":1}]}}`, true},
		{`{"jsonrpc":"2.0","id":"bench-1","result":{"content":[],"structuredContent":{"b":[1,2]}}}`, true},
		{`{"jsonrpc":"2.0","id":"bench-1","error":{"code":-32602,"message":"bad"}}`, false},
		{`{"jsonrpc":"2.0","id":"bench-1","result":null}`, false},
		{`{"jsonrpc":"2.0","id":"bench-1"}`, false},
		{`{"jsonrpc":"2.0","id":"bench-1","result":{"content":"not a list"}}`, false},
		{`{"jsonrpc":"1.0","id":"bench-1","result":{"content":[]}}`, false},
		{`{"jsonrpc":"2.0","id":"bench-\u0031","result":{"content":[]}}`, false},
		{`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"\"bench-1"}]}}`, false},
		{`{"jsonrpc":"2.0","id":"bench-1","method":"ping","result":{"content":[]}}`, false},
		{`{"jsonrpc":"2.0","id":"bench-1","result":{"content":[]}`, false},
		// Field names match as the SDK matches them: case-sensitively.
		{`{"jsonrpc":"2.0","id":"bench-1","Result":{"content":[]}}`, false},
		{`{"JSONRPC":"2.0","id":"bench-1","result":{"content":[]}}`, false},
		{`{"jsonrpc":"2.0","id":"bench-1","result":{"Content":[{"type":"text","text":"x"}],"content":[]}}`, true},
		// Bytes after the message, and nesting past maxDepth, are refused.
		{`{"jsonrpc":"2.0","id":"bench-1","result":{"content":[]}} x`, false},
		{`{"jsonrpc":"2.0","id":"bench-1","result":{"content":[],"structuredContent":` + strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth) + `}}`, false},
		{`{"jsonrpc":"2.0","id":"bench-1","result":{"content":[{"type":"text","text":"` + strings.Repeat("[", 2*maxDepth) + `"}]}}`, true},
	} {
		c := &stdioConn{pending: map[string]chan answer{}}
		ch := make(chan answer, 1)
		c.pending["bench-1"] = ch
		if got := c.directAnswer([]byte(tt.line)); got != tt.taken {
			t.Errorf("directAnswer(%s) = %v, want %v", tt.line, got, tt.taken)
			continue
		}
		if !tt.taken {
			continue
		}
		a := <-ch
		got, gotErr := a.result()
		m, err := decodeMessage([]byte(tt.line))
		if err != nil {
			t.Fatalf("decodeMessage(%s): %v", tt.line, err)
		}
		want, wantErr := answer{resp: m.(*jsonrpc.Response)}.result()
		switch {
		case (gotErr == nil) != (wantErr == nil):
			t.Errorf("%s: taken: error %v; decoded: error %v", tt.line, gotErr, wantErr)
		case gotErr != nil:
		case formatResult(got, resultLimit) != formatResult(want, resultLimit) || got.IsError != want.IsError:
			t.Errorf("%s: taken %+v; decoded %+v", tt.line, got, want)
		}
	}
}

// decodeMessage decodes what a server writes as the SDK's own
// jsonrpc.DecodeMessage does, except that it refuses bytes after the
// message, which the SDK's decoder leaves unread.
func TestDecodeMessageAsTheSDK(t *testing.T) {
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`,
		`{"jsonrpc":"2.0","id":"bench-1","result":{"content":[{"type":"text","text":"a\u00e9\ud83d\ude00"}]}}`,
		`{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"no such method","data":{"x":1}}}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hi"}}`,
		`{"jsonrpc":"2.0","id":3,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":4,"Result":{"tools":[]}}`,
		`{"jsonrpc":"2.0","ID":5,"method":"ping"}`,
		`{"Jsonrpc":"2.0","id":6,"result":{}}`,
		`{"jsonrpc":"1.0","id":7,"result":{}}`,
		`{"jsonrpc":"2.0","id":1.5,"result":{}}`,
		`{"jsonrpc":"2.0","id":true,"result":{}}`,
		`{"jsonrpc":"2.0","result":{}}`,
		`{"jsonrpc":"2.0","id":8,"method":7}`,
		`{"jsonrpc":"2.0","id":9,"result":{"a":` + strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1) + `}}`,
		`{"jsonrpc":"2.0","id":10,"result":{"a":"\xff"}}`,
		`{"jsonrpc":"2.0","id":11,"result":{"a":1,"a":2}}`,
		`{"jsonrpc":"2.0",`,
	} {
		got, gotErr := decodeMessage([]byte(line))
		want, wantErr := jsonrpc.DecodeMessage([]byte(line))
		if (gotErr == nil) != (wantErr == nil) {
			t.Errorf("%s: error %v; the SDK's %v", line, gotErr, wantErr)
			continue
		}
		if gotErr != nil {
			continue
		}
		gotJSON, err1 := jsonrpc.EncodeMessage(got)
		wantJSON, err2 := jsonrpc.EncodeMessage(want)
		if err1 != nil || err2 != nil || string(gotJSON) != string(wantJSON) {
			t.Errorf("%s: decoded as %s (%v); the SDK's %s (%v)", line, gotJSON, err1, wantJSON, err2)
		}
	}
	if _, err := decodeMessage([]byte(`{"jsonrpc":"2.0","id":1,"result":{}} x`)); err == nil {
		t.Error("bytes after the message were accepted")
	}
}

// sameJSON reports whether two JSON texts hold the same value (nil: none).
func sameJSON(a, b json.RawMessage) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	var va, vb any
	return json.Unmarshal(a, &va) == nil && json.Unmarshal(b, &vb) == nil && reflect.DeepEqual(va, vb)
}
