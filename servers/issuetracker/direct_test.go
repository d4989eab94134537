package issuetracker

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// pipeServer runs the tracker over pipes and returns the client's ends.
func pipeServer(t *testing.T, withDirect bool) (io.WriteCloser, *bufio.Reader, *direct) {
	t.Helper()
	tr, err := Parse([]byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	srv, d := newServer(tr)
	if !withDirect {
		d = nil
	}
	go func() {
		defer close(done)
		_ = srv.Run(ctx, &lineTransport{in: sr, out: sw, direct: d})
	}()
	t.Cleanup(func() {
		cw.Close()
		cancel()
		<-done
	})
	return cw, bufio.NewReader(cr), d
}

// The direct answer to a tool call is, byte for byte, the SDK's: for
// every tool, results and handler errors alike, and the calls it leaves
// to the SDK (arguments the schema refuses, unknown tools) are answered
// by the SDK.
func TestDirectAsTheSDK(t *testing.T) {
	t.Run("handshake", func(t *testing.T) { directAsTheSDK(t, handshakeLines, 9) })
	t.Run("per-request", func(t *testing.T) { directAsTheSDK(t, perRequestLines(), 4) })
}

// perRequestLines are calls of revision 2026-07-28, each with its _meta.
func perRequestLines() []string {
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"x","version":"1"}}`
	old := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-01-01","io.modelcontextprotocol/clientCapabilities":{}}`
	return []string{
		`{"jsonrpc":"2.0","id":0,"method":"server/discover","params":{` + meta + `}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_issue","arguments":{"id":1},` + meta + `}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_issue","arguments":{"id":77},` + meta + `}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list_issues","arguments":{},` + meta + `}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"search_issues","arguments":{"query":"typo"},` + meta + `}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"get_issue","arguments":{"id":1},` + old + `}}`,
		`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"get_issue","arguments":{"id":1},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_issue","arguments":{"id":1}}}`,
	}
}

// handshakeLines are calls of revision 2025-06-18, after initialize.
var handshakeLines = []string{
	`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`,
	`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_issue","arguments":{"id":1}}}`,
	`{"jsonrpc":"2.0","id":"b-2","method":"tools/call","params":{"name":"get_issue","arguments":{"id":99}}}`,
	`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list_issues","arguments":{"state":"all","label":"parser"}}}`,
	`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"list_issues"}}`,
	`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"search_issues","arguments":{"query":"token"}}}`,
	`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"search_issues","arguments":{"query":"nothing like it"}}}`,
	`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"search_issues","arguments":{"query":""}}}`,
	`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"get_issue","arguments":{"id":"1"}}}`,
	`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"nope","arguments":{}}}`,
	`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"list_issues","arguments":{"state":"wip"}}}`,
	`{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"get_issue","arguments":{"id":2},"_meta":{"progressToken":"p1"}}}`,
	`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"Name":"get_issue","arguments":{"id":2}}}`,
	`{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"get_issue","arguments":{"ID":2}}}`,
	`{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"get_issue","arguments":{"id":2.0}}}`,
	`{"jsonrpc":"2.0","id":"x\u00e9<>","method":"tools/call","params":{"name":"search_issues","arguments":{"query":"<b> & \u2028"}}}`,
}

// directAsTheSDK sends lines to the server with and without the direct
// path and compares the answers, of which direct calls are answered
// directly.
func directAsTheSDK(t *testing.T, lines []string, direct int64) {
	var got [2][]string
	for i, withDirect := range []bool{true, false} {
		w, r, d := pipeServer(t, withDirect)
		defer func() {
			if withDirect && d.hits.Load() != direct {
				t.Errorf("%d calls answered directly, want %d", d.hits.Load(), direct)
			}
		}()
		for _, l := range lines {
			if _, err := io.WriteString(w, l+"\n"); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(l, `"method":"notifications/`) {
				continue
			}
			resp, err := r.ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			got[i] = append(got[i], resp)
		}
	}
	for i := range got[0] {
		if got[0][i] != got[1][i] {
			t.Errorf("request %s:\ndirect %s  the SDK %s", lines[i+1], got[0][i], got[1][i])
		}
	}
}

// Through the SDK's own client, which negotiates revision 2026-07-28 and
// sends its per-request _meta, calls are answered directly, with the
// SDK's results.
func TestDirectWithTheSDKClient(t *testing.T) {
	var results [2][]string
	var direct *direct
	for i, withDirect := range []bool{true, false} {
		tr, _ := Parse([]byte(sample))
		srv, d := newServer(tr)
		if withDirect {
			direct = d
		} else {
			d = nil
		}
		cr, sw := io.Pipe()
		sr, cw := io.Pipe()
		ctx, cancel := context.WithCancel(context.Background())
		go func() { _ = srv.Run(ctx, &lineTransport{in: sr, out: sw, direct: d}) }()
		client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
		cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: cr, Writer: cw}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			t.Logf("protocol %s", cs.InitializeResult().ProtocolVersion)
		}
		for _, c := range []struct {
			name string
			args map[string]any
		}{{"get_issue", map[string]any{"id": 1}}, {"get_issue", map[string]any{"id": 42}}, {"list_issues", map[string]any{"state": "all"}}, {"search_issues", map[string]any{"query": "docs"}}, {"get_issue", map[string]any{"id": 0}}} {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.name, Arguments: c.args})
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(res)
			results[i] = append(results[i], string(b))
		}
		cs.Close()
		cancel()
	}
	for i := range results[0] {
		if results[0][i] != results[1][i] {
			t.Errorf("call %d: direct %s\nthe SDK %s", i, results[0][i], results[1][i])
		}
	}
	if n := direct.hits.Load(); n != 4 {
		t.Errorf("%d calls answered directly, want 4 (the fifth breaks the schema: the SDK's)", n)
	}
}
