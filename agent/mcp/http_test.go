package mcp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/benchhq/bench/servers/issuetracker"
	"github.com/benchhq/bench/tasks"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// issuesHTTP serves the issue tracker over Streamable HTTP on loopback,
// answering only requests that carry the header X-Token: t0k.
func issuesHTTP(t *testing.T, jsonResponse bool) *httptest.Server {
	t.Helper()
	tr, err := issuetracker.Parse([]byte(testIssues))
	if err != nil {
		t.Fatal(err)
	}
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return issuetracker.NewServer(tr) },
		&sdk.StreamableHTTPOptions{JSONResponse: jsonResponse})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Token") != "t0k" {
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts
}

func TestStreamableHTTP(t *testing.T) {
	for _, tt := range []struct {
		name string
		json bool
	}{{"sse", false}, {"json", true}} {
		t.Run(tt.name, func(t *testing.T) {
			ts := issuesHTTP(t, tt.json)
			srv := tasks.Server{Name: "web", URL: ts.URL + "/mcp", Headers: map[string]string{"X-Token": "t0k"}, DefaultClass: "read"}
			c := connect(t, srv, Vars{}, Options{})
			info := c.Info()
			if info.Transport != "http" || info.ServerName != "bench-issuetracker" || info.ProtocolVersion == "" {
				t.Errorf("Info = %+v", info)
			}
			if got := names(c.Tools()); !slices.Equal(got, []string{"web__get_issue", "web__list_issues", "web__search_issues"}) {
				t.Errorf("tools = %v", got)
			}
			if order := toolNamed(t, c, "web__search_issues").Spec().InputSchema.PropertyOrder; !slices.Equal(order, []string{"query", "state"}) {
				t.Errorf("property order over HTTP = %v", order)
			}
			res := call(t, c, "web__search_issues", map[string]any{"query": "readme"})
			if res.IsError || !strings.Contains(res.Text, "#11 [open] Docs typo") {
				t.Errorf("search_issues: %+v", res)
			}
			if stderr := c.Close(); stderr != "" {
				t.Logf("notes: %s", stderr)
			}
		})
	}
}

func TestStreamableHTTPFailures(t *testing.T) {
	ts := issuesHTTP(t, true)
	_, err := Connect(context.Background(), tasks.Server{Name: "web", URL: ts.URL}, Vars{}, Options{StartTimeout: 10 * time.Second})
	if err == nil || !strings.Contains(err.Error(), `mcp server "web": connect:`) {
		t.Errorf("Connect without the header: %v", err)
	}

	c := connect(t, tasks.Server{Name: "web", URL: ts.URL, Headers: map[string]string{"X-Token": "t0k"}}, Vars{}, Options{CallTimeout: 5 * time.Second})
	ts.CloseClientConnections()
	ts.Close()
	res := call(t, c, "web__list_issues", nil)
	t.Logf("observation: %s", res.Text)
	if !res.IsError || !strings.Contains(res.Text, `web__list_issues: the call to server "web" failed`) {
		t.Errorf("call to a server that went away: %+v", res)
	}
}
