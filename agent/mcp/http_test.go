package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"

	"github.com/benchhq/bench/agent"
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

// Over Streamable HTTP (through the SDK) a call carries a progress token
// too, progress pushes its deadline back up to max_call_time, and the
// notifications/cancelled of an abandoned call has reached the server
// when Close returns.
func TestHTTPProgressAndCancel(t *testing.T) {
	server := sdk.NewServer(&sdk.Implementation{Name: "slow", Version: "1"}, nil)
	type args struct {
		Steps int `json:"steps"`
	}
	server.AddTool(&sdk.Tool{Name: "slow", InputSchema: map[string]any{"type": "object", "properties": map[string]any{"steps": map[string]any{"type": "integer"}}}},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var a args
			_ = json.Unmarshal(req.Params.Arguments, &a)
			for i := 0; a.Steps < 0 || i < a.Steps; i++ {
				select {
				case <-ctx.Done():
					return nil, ctx.Err()
				case <-time.After(200 * time.Millisecond):
				}
				_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: float64(i + 1), Message: "tick"})
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "done"}}}, nil
		})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, nil)
	var mu sync.Mutex
	cancels := 0
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			b, _ := io.ReadAll(r.Body)
			if strings.Contains(string(b), `"notifications/cancelled"`) {
				mu.Lock()
				cancels++
				mu.Unlock()
			}
			r.Body = io.NopCloser(bytes.NewReader(b))
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	srv := tasks.Server{Name: "web", URL: ts.URL, DefaultClass: "read",
		CallTimeout: tasks.Duration{Duration: 500 * time.Millisecond}, MaxCallTime: tasks.Duration{Duration: 1200 * time.Millisecond}}
	c := connect(t, srv, Vars{}, Options{})
	res := call(t, c, "web__slow", map[string]any{"steps": 4})
	if res.IsError || res.Text != "done" || !strings.Contains(string(res.Details), `"message":"tick"`) {
		t.Errorf("4 steps with max_call_time: %+v (%s)", res, res.Details)
	}
	res = call(t, c, "web__slow", map[string]any{"steps": -1})
	if !res.IsError || res.Kind != "timeout" || !strings.Contains(res.Text, "did not answer within 1.2s (it reported progress") {
		t.Errorf("endless progress: %+v", res)
	}
	c.Close()
	mu.Lock()
	defer mu.Unlock()
	if cancels != 1 {
		t.Errorf("the server got %d notifications/cancelled, want 1", cancels)
	}
}

// A message over the limit fails its body (the call gets an error
// observation), however the server sends it: one JSON body, or one event
// of a stream whose other events are small.
func TestLimitBody(t *testing.T) {
	event := func(n int) string { return "event: message\ndata: " + strings.Repeat("x", n) + "\n\n" }
	for _, tt := range []struct {
		name string
		sse  bool
		body string
		fail bool
	}{
		{"small JSON", false, strings.Repeat("x", 90), false},
		{"large JSON", false, strings.Repeat("x", 150), true},
		{"many small events", true, strings.Repeat(event(40), 20), false},
		{"one large event", true, event(40) + event(150) + event(40), true},
		{"CRLF events", true, strings.Repeat("data: "+strings.Repeat("y", 40)+"\r\n\r\n", 20), false},
	} {
		var over atomic.Int64
		b := &limitBody{rc: io.NopCloser(iotest.OneByteReader(strings.NewReader(tt.body))), sse: tt.sse, max: 100, over: &over}
		if tt.name == "many small events" {
			b.rc = io.NopCloser(strings.NewReader(tt.body))
		}
		_, err := io.ReadAll(b)
		if (err != nil) != tt.fail || (err != nil && !errors.Is(err, errTooLarge)) || (tt.fail && over.Load() != 1) {
			t.Errorf("%s: error %v, want failure %v", tt.name, err, tt.fail)
		}
	}
}

// Over Streamable HTTP a server's notifications outside any call come on
// the standalone stream, which bench opens: a tool added to the server
// after connect is announced there and offered before the next turn.
func TestHTTPToolListChangeOnTheStandaloneStream(t *testing.T) {
	server := sdk.NewServer(&sdk.Implementation{Name: "growing", Version: "1"}, nil)
	echo := func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ok"}}}, nil
	}
	server.AddTool(&sdk.Tool{Name: "first", InputSchema: map[string]any{"type": "object"}}, echo)
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, nil)
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	c := connect(t, tasks.Server{Name: "web", URL: ts.URL, DefaultClass: "read"}, Vars{}, Options{})
	reg := agent.NewRegistry()
	for _, tl := range c.Tools() {
		if err := reg.Add(tl); err != nil {
			t.Fatal(err)
		}
	}
	before := c.announced.Load()
	server.AddTool(&sdk.Tool{Name: "second", InputSchema: map[string]any{"type": "object"}}, echo)
	waitStale(t, c, before+1)
	changes := Refresher([]*Conn{c})(context.Background(), reg)
	if len(changes) != 1 || !slices.Equal(changes[0].Added, []string{"web__second"}) {
		t.Fatalf("changes %+v", changes)
	}
	if res := call(t, c, "web__second", nil); res.IsError || res.Text != "ok" {
		t.Errorf("the new tool: %+v", res)
	}
}

// A message past the limit is not read: the call is an error observation
// and the connection still serves the next call.
func TestHTTPMessageTooLarge(t *testing.T) {
	server := sdk.NewServer(&sdk.Implementation{Name: "big", Version: "1"}, nil)
	server.AddTool(&sdk.Tool{Name: "big", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Repeat("x", 1<<20)}}}, nil
	})
	server.AddTool(&sdk.Tool{Name: "small", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ok"}}}, nil
	})
	for _, jsonResponse := range []bool{false, true} {
		t.Run(fmt.Sprintf("json=%v", jsonResponse), func(t *testing.T) {
			h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, &sdk.StreamableHTTPOptions{JSONResponse: jsonResponse})
			ts := httptest.NewServer(h)
			t.Cleanup(ts.Close)
			c := connect(t, tasks.Server{Name: "web", URL: ts.URL, DefaultClass: "read", CallTimeout: tasks.Duration{Duration: 10 * time.Second}}, Vars{}, Options{maxMessage: 64 << 10})
			res := call(t, c, "web__big", nil)
			if want := `web__big: server "web" sent an answer over 64 KiB, which bench did not read`; !res.IsError || res.Text != want || res.Kind != "transport" {
				t.Errorf("a 1 MB answer over a 64 KB limit: %+v, want %q", clipResult(res), want)
			}
			if res := call(t, c, "web__small", nil); res.IsError || res.Text != "ok" {
				t.Errorf("the next call: %+v", res)
			}
		})
	}
}
