package issuetracker

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Over Streamable HTTP the tracker answers an MCP client on loopback, and
// refuses a request that names another host (DNS rebinding) or comes from
// a web page's origin, with the reason.
func TestHTTP(t *testing.T) {
	tr, err := Parse([]byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(Handler(tr, HTTPOptions{Origins: []string{"http://localhost:3000"}}))
	defer ts.Close()

	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_issue", Arguments: map[string]any{"id": 1}})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "Tokenizer drops the last token") {
		t.Fatalf("get_issue over HTTP: %v %+v", err, res)
	}

	for _, tt := range []struct {
		name, host, origin string
		status             int
		want               string
	}{
		{"rebound host", "evil.example:80", "", http.StatusForbidden, `Host "evil.example:80" is not one this server answers to`},
		{"foreign origin", "", "https://evil.example", http.StatusForbidden, `Origin "https://evil.example" is not allowed`},
		{"allowed origin", "", "http://localhost:3000", http.StatusOK, ""},
		{"localhost", "localhost:1234", "", http.StatusOK, ""},
	} {
		body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
		req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if tt.host != "" {
			req.Host = tt.host
		}
		if tt.origin != "" {
			req.Header.Set("Origin", tt.origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		buf := make([]byte, 4096)
		n, _ := resp.Body.Read(buf)
		b.Write(buf[:n])
		resp.Body.Close()
		if resp.StatusCode != tt.status || !strings.Contains(b.String(), tt.want) {
			t.Errorf("%s: %d %q, want %d with %q", tt.name, resp.StatusCode, b.String(), tt.status, tt.want)
		}
	}
}
