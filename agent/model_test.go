package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"runtime"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/internal/ollamatest"
)

// rawServer answers /api/chat with a fixed status and body.
func rawServer(t *testing.T, status int, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// closedPort is an address where nothing listens.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

// The model client posts /api/chat itself (api.Client.Chat costs 8 MB a
// request) but must answer exactly as api.Client.Chat did: the same reply,
// and the same error inside the ModelError, so that its Hint and the
// runner's retry decisions do not change.
func TestChatAnswersAsTheOfficialClient(t *testing.T) {
	tool := func() api.Tool {
		var tl api.Tool
		if err := json.Unmarshal([]byte(`{"type":"function","function":{"name":"read_file","description":"Read.","parameters":{"type":"object","required":["path"],"properties":{"path":{"type":"string"}}}}}`), &tl); err != nil {
			t.Fatal(err)
		}
		return tl
	}()
	fake := func(opts ...ollamatest.Option) string {
		srv := ollamatest.New(ollamatest.Turns(ollamatest.Reply{Content: "hi", Calls: []ollamatest.Call{{Name: "read_file", Args: map[string]any{"path": "a"}}}}), opts...)
		t.Cleanup(srv.Close)
		return srv.URL
	}
	busy := ollamatest.New(ollamatest.Turns(ollamatest.Reply{Status: 503, Error: "server busy"}))
	t.Cleanup(busy.Close)
	tests := []struct {
		name  string
		url   string
		model string
	}{
		{"reply", fake(), "m"},
		{"model not pulled (404)", fake(ollamatest.WithModels("other")), "m"},
		{"no tool support (400)", fake(ollamatest.WithoutTools("m")), "m"},
		{"server busy (503)", busy.URL, "m"},
		{"5xx, not JSON", rawServer(t, 502, "<html>bad gateway</html>"), "m"},
		{"401 with sign-in URL", rawServer(t, 401, `{"error":"unauthorized","signin_url":"https://ollama.com/connect"}`), "m"},
		{"error line", rawServer(t, 200, `{"error":"boom"}`+"\n"), "m"},
		{"not JSON", rawServer(t, 200, "oops\n"), "m"},
		{"JSON, not a reply", rawServer(t, 200, `{"done":"yes"}`), "m"},
		{"empty reply", rawServer(t, 200, ""), "m"},
		{"streamed reply", rawServer(t, 200, `{"message":{"role":"assistant","content":"Hel"}}`+"\n"+
			`{"message":{"role":"assistant","content":"lo","tool_calls":[{"function":{"name":"read_file","arguments":{"path":"a"}}}]}}`+"\n"+
			`{"message":{"role":"assistant","content":"!"},"done":true,"done_reason":"stop","prompt_eval_count":7,"eval_count":3}`+"\n"), "m"},
		{"streamed, then an error", rawServer(t, 200, `{"message":{"content":"Hel"}}`+"\n"+`{"error":"model crashed"}`+"\n"), "m"},
		{"unreachable", closedPort(t), "m"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := &api.ChatRequest{Model: tt.model, Messages: []api.Message{{Role: "user", Content: "hello"}},
				Tools: api.Tools{tool}, Options: map[string]any{"num_ctx": 2048}}
			u, _ := url.Parse(tt.url)
			wantResp, wantErr := apiClient{api.NewClient(u, &http.Client{})}.Chat(context.Background(), req)
			ours, err := agent.NewOllama(tt.url, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, send := range []struct {
				name string
				chat func() (*api.ChatResponse, error)
			}{
				{"Chat", func() (*api.ChatResponse, error) { return ours.Chat(context.Background(), req) }},
				{"ChatEncoded", func() (*api.ChatResponse, error) {
					b, _ := json.Marshal(req.Tools)
					return ours.ChatEncoded(context.Background(), req, agent.Encoded{Tools: b})
				}},
				{"ChatEncoded with messages", func() (*api.ChatResponse, error) {
					b, _ := json.Marshal(req.Tools)
					m, _ := json.Marshal(req.Messages)
					return ours.ChatEncoded(context.Background(), req, agent.Encoded{Tools: b, Messages: m})
				}},
			} {
				resp, err := send.chat()
				if wantErr != nil || wantResp == nil {
					var me *agent.ModelError
					if !errors.As(err, &me) {
						t.Fatalf("%s: error %v (%T), want a *agent.ModelError", send.name, err, err)
					}
					if wantErr == nil { // api.Client said nothing and gave no reply
						if me.Err.Error() != "empty reply" {
							t.Errorf("%s: error %v, want empty reply", send.name, me.Err)
						}
						continue
					}
					sameError(t, send.name, me.Err, wantErr)
					want := &agent.ModelError{Host: me.Host, Model: tt.model, Err: wantErr}
					if me.Hint() != want.Hint() || agent.Unreachable(me.Err) != agent.Unreachable(wantErr) {
						t.Errorf("%s: hint %q, unreachable %v; want %q, %v", send.name, me.Hint(), agent.Unreachable(me.Err), want.Hint(), agent.Unreachable(wantErr))
					}
					continue
				}
				if err != nil {
					t.Fatalf("%s: %v, want the reply %+v", send.name, err, wantResp)
				}
				resp.CreatedAt = wantResp.CreatedAt
				if !reflect.DeepEqual(resp, wantResp) {
					t.Errorf("%s: reply\n%+v\nwant\n%+v", send.name, resp, wantResp)
				}
			}
		})
	}
}

// sameError compares an error with api.Client's: the same type and fields
// for the api package's errors, the same text for the others.
func sameError(t *testing.T, what string, got, want error) {
	t.Helper()
	var gs, ws api.StatusError
	var ga, wa api.AuthorizationError
	switch {
	case errors.As(want, &ws):
		if !errors.As(got, &gs) || gs != ws {
			t.Errorf("%s: error %#v, want %#v", what, got, want)
		}
	case errors.As(want, &wa):
		if !errors.As(got, &ga) || ga != wa {
			t.Errorf("%s: error %#v, want %#v", what, got, want)
		}
	case agent.Unreachable(want):
		if !agent.Unreachable(got) {
			t.Errorf("%s: error %v, want one that says no server answers, like %v", what, got, want)
		}
	default:
		if got.Error() != want.Error() {
			t.Errorf("%s: error %q, want %q", what, got, want)
		}
	}
}

// The request the server receives is the one api.Client sent, with the
// tools whether they were given as values or already encoded.
func TestChatSendsTheSameRequest(t *testing.T) {
	srv := ollamatest.New(ollamatest.Turns())
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	req := fifthTurn(t)
	think := api.ThinkValue{Value: true}
	req.Think = &think
	if _, err := (apiClient{api.NewClient(u, &http.Client{})}).Chat(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	ours, _ := agent.NewOllama(srv.URL, nil)
	if _, err := ours.Chat(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(req.Tools)
	if _, err := ours.ChatEncoded(context.Background(), req, agent.Encoded{Tools: b}); err != nil {
		t.Fatal(err)
	}
	m, _ := json.Marshal(req.Messages)
	if _, err := ours.ChatEncoded(context.Background(), req, agent.Encoded{Tools: b, Messages: m}); err != nil {
		t.Fatal(err)
	}
	got := srv.Requests()
	if len(got) != 4 {
		t.Fatalf("%d requests, want 4", len(got))
	}
	for i, name := range []string{"Chat", "ChatEncoded", "ChatEncoded with messages"} {
		if !reflect.DeepEqual(got[i+1], got[0]) {
			a, _ := json.Marshal(got[i+1])
			w, _ := json.Marshal(got[0])
			t.Errorf("%s sent\n%s\nwant (api.Client)\n%s", name, a, w)
		}
	}
}

// A request costs what it carries, not api.Client's 8 MB line buffer.
func TestChatAllocatesLittle(t *testing.T) {
	srv := ollamatest.New(ollamatest.Turns(), ollamatest.WithoutRecording())
	defer srv.Close()
	ours, _ := agent.NewOllama(srv.URL, nil)
	req := fifthTurn(t)
	b, _ := json.Marshal(req.Tools)
	const n = 20
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		if _, err := ours.ChatEncoded(context.Background(), req, agent.Encoded{Tools: b}); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	// The fake server runs in this process and its allocations count too.
	if per := (after.TotalAlloc - before.TotalAlloc) / n; per > 1<<20 {
		t.Errorf("%d bytes allocated per request (client and fake server), want under 1 MB", per)
	}
}

// TestChatRefusesAReplyCutShort: a reply whose lines end before the one
// with "done": true (a server that streamed and dropped the connection)
// is an error, never the model's answer.
func TestChatRefusesAReplyCutShort(t *testing.T) {
	tests := []struct {
		name, body string
		wantErr    bool
	}{
		{"whole", `{"message":{"role":"assistant","content":"hel"},"done":false}` + "\n" + `{"message":{"role":"assistant","content":"lo"},"done":true}` + "\n", false},
		{"cut after its first line", `{"message":{"role":"assistant","content":"hel"},"done":false}` + "\n", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := agent.NewOllama(rawServer(t, http.StatusOK, tt.body), nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := m.Chat(context.Background(), &api.ChatRequest{Model: "m"})
			if (err != nil) != tt.wantErr {
				t.Fatalf("reply %+v, error %v; want an error: %v", resp, err, tt.wantErr)
			}
			if err == nil && resp.Message.Content != "hello" {
				t.Errorf("content %q, want the lines joined", resp.Message.Content)
			}
		})
	}
}
