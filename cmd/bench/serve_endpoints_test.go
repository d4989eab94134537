package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/benchhq/bench/internal/ollamatest"
)

// mentions reports whether a chat request's user messages hold s.
func mentions(req *api.ChatRequest, s string) bool {
	for _, m := range req.Messages {
		if m.Role == "user" && strings.Contains(m.Content, s) {
			return true
		}
	}
	return false
}

// drain reads a stream to its end and returns its last event, failing
// the test on an error event.
func drain(t *testing.T, name string, ch <-chan map[string]any) map[string]any {
	t.Helper()
	var last map[string]any
	for ev := range ch {
		if ev["event"] == "error" {
			t.Fatalf("request %s: %v", name, ev)
		}
		if ev["event"] == "group" {
			for _, a := range ev["attempts"].([]any) {
				if at := a.(map[string]any); at["status"] != "finished" {
					t.Errorf("request %s: attempt %v", name, at)
				}
			}
		}
		last = ev
	}
	return last
}

// TestServeRequestEndpoints: two requests, each restricted to one of the
// service's two endpoints, run at the same time, each sending its chats
// only to its own endpoint with its own sampling, and each requiring the
// digest its endpoint serves. A request on both endpoints is refused
// before running, since they serve different weights; one naming an
// endpoint the service does not have gets 400.
func TestServeRequestEndpoints(t *testing.T) {
	digestA, digestB := strings.Repeat("a", 64), strings.Repeat("b", 64)
	// A holds the phone book's chats open until the request on B is done:
	// the two requests run at the same time, whatever the machine's load.
	bDone := make(chan struct{})
	var once sync.Once
	releaseA := func() { once.Do(func() { close(bDone) }) }
	base := slowOnPhonebook(0)
	held := func(req *api.ChatRequest) ollamatest.Reply {
		if mentions(req, "phone book") {
			select {
			case <-bDone:
			case <-time.After(60 * time.Second):
			}
		}
		return base(req)
	}
	a := ollamatest.New(held, ollamatest.WithDigest("qwen", digestA))
	b := ollamatest.New(base, ollamatest.WithDigest("qwen", digestB))
	defer a.Close()
	defer b.Close()
	defer releaseA() // on a failure too, before the servers close
	db := t.TempDir() + "/serve.db"
	url := startServe(t, "--suite", examplesSuite, "--host", a.URL+"=2", "--host", b.URL+"=2", "--model", "qwen", "-j", "2", "--max-requests", "3", "--db", db)

	for _, tt := range []struct{ body, want string }{
		{`{"tasks": ["recipe-trailing-dot"], "endpoints": ["http://10.1.2.3:11434"]}`,
			fmt.Sprintf(`endpoints[0]: "http://10.1.2.3:11434" is not an endpoint of this service (its endpoints: %s, %s)`, a.URL, b.URL)},
		{`{"tasks": ["recipe-trailing-dot"], "endpoints": []}`, "endpoints: empty"},
		{fmt.Sprintf(`{"tasks": ["recipe-trailing-dot"], "endpoints": [%q, %q]}`, a.URL, a.URL+"/"), "given already"},
	} {
		resp := post(t, url, tt.body)
		var e struct{ Error string }
		json.NewDecoder(resp.Body).Decode(&e)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(e.Error, tt.want) {
			t.Errorf("%s: HTTP %d %q; want 400 saying %q", tt.body, resp.StatusCode, e.Error, tt.want)
		}
	}

	onA := make(chan map[string]any, 16)
	go events(post(t, url, fmt.Sprintf(`{"tasks": ["phonebook-sort"], "attempts": 2, "name": "on-a", "endpoints": [%q],
		"options": {"temperature": 0.25}, "model_digest": %q}`, a.URL, digestA)).Body, onA)
	for ev := range onA {
		if ev["event"] == "started" {
			break
		}
	}
	// B named by its address without the scheme, as --host takes it.
	onB := make(chan map[string]any, 16)
	go events(post(t, url, fmt.Sprintf(`{"tasks": ["recipe-trailing-dot"], "attempts": 2, "name": "on-b", "endpoints": [%q],
		"options": {"temperature": 0.75}, "model_digest": %q}`, strings.TrimPrefix(b.URL, "http://"), digestB)).Body, onB)
	if last := drain(t, "on-b", onB); last["event"] != "done" || last["stored"].(float64) != 2 || last["infra_errors"].(float64) != 0 {
		t.Fatalf("request on B ended with %v", last)
	}
	// The request on A is still running: they ran at the same time.
	var health map[string]any
	if resp, err := http.Get(url + "/v1/health"); err != nil {
		t.Fatal(err)
	} else {
		json.NewDecoder(resp.Body).Decode(&health)
		resp.Body.Close()
	}
	if health["running"].(float64) != 1 {
		t.Errorf("health %v once the request on B is done: want the one on A running", health)
	}
	if names := health["endpoint_names"].([]any); len(names) != 2 || names[0] != a.URL || names[1] != b.URL {
		t.Errorf("health endpoint_names %v", names)
	}
	releaseA()
	if last := drain(t, "on-a", onA); last["event"] != "done" || last["stored"].(float64) != 2 || last["infra_errors"].(float64) != 0 {
		t.Fatalf("request on A ended with %v", last)
	}

	for _, tt := range []struct {
		name        string
		srv         *ollamatest.Server
		task, other string
		temperature float64
	}{
		{"A", a, "phone book", "recipe.py", 0.25},
		{"B", b, "recipe.py", "phone book", 0.75},
	} {
		n := 0
		for _, req := range tt.srv.Requests() {
			if mentions(&req, tt.other) {
				t.Errorf("endpoint %s got a chat of the request restricted to the other endpoint", tt.name)
			}
			if mentions(&req, tt.task) {
				n++
				if req.Options["temperature"] != tt.temperature {
					t.Errorf("endpoint %s: a chat with temperature %v, want the request's %v", tt.name, req.Options["temperature"], tt.temperature)
				}
			}
		}
		if n < 4 {
			t.Errorf("endpoint %s got %d chats of its request's task, want 2 attempts × 2 turns", tt.name, n)
		}
	}

	// On both endpoints, a request would mix weights: refused before any
	// attempt, as bench run refuses it.
	both := make(chan map[string]any, 16)
	go events(post(t, url, `{"tasks": ["recipe-trailing-dot"], "attempts": 1, "name": "both"}`).Body, both)
	var last map[string]any
	for ev := range both {
		last = ev
	}
	if last["event"] != "error" || !strings.Contains(fmt.Sprint(last["error"]), "different models") {
		t.Errorf("a request on both endpoints ended with %v, want an error saying they serve different models", last)
	}
}

// TestServeRequestsShareAnEndpointsSlots: two requests restricted to the
// same endpoint, of one slot, take turns at it: never two chats in
// flight there, by the fake server's own count, although both requests
// run at once (the first holds the slot, its chat held open, until the
// second has started and had time to send a chat of its own were the
// slot counted twice). The other endpoint gets nothing.
func TestServeRequestsShareAnEndpointsSlots(t *testing.T) {
	secondStarted := make(chan struct{})
	var hold sync.Once
	base := slowOnPhonebook(0)
	script := func(req *api.ChatRequest) ollamatest.Reply {
		if mentions(req, "phone book") {
			hold.Do(func() {
				select {
				case <-secondStarted:
				case <-time.After(30 * time.Second):
				}
				time.Sleep(2 * time.Second) // the window in which a double-counted slot would show
			})
		}
		return base(req)
	}
	a := ollamatest.New(script)
	b := ollamatest.New(script)
	defer a.Close()
	defer b.Close()
	db := t.TempDir() + "/serve.db"
	url := startServe(t, "--suite", examplesSuite, "--host", a.URL+"=1", "--host", b.URL+"=1", "--model", "qwen", "-j", "2", "--max-requests", "2", "--db", db)

	first := make(chan map[string]any, 16)
	go events(post(t, url, fmt.Sprintf(`{"tasks": ["phonebook-sort"], "attempts": 2, "name": "first", "endpoints": [%q]}`, a.URL)).Body, first)
	for ev := range first {
		if ev["event"] == "started" {
			break
		}
	}
	// The first request's attempt is in its loop on A's only slot before
	// the second arrives.
	deadline := time.Now().Add(60 * time.Second)
	for a.Stats().Requests == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	second := make(chan map[string]any, 16)
	go events(post(t, url, fmt.Sprintf(`{"tasks": ["recipe-trailing-dot"], "attempts": 2, "name": "second", "endpoints": [%q]}`, a.URL)).Body, second)
	for ev := range second {
		if ev["event"] == "started" {
			close(secondStarted)
			break
		}
	}
	for name, ch := range map[string]chan map[string]any{"first": first, "second": second} {
		if last := drain(t, name, ch); last["event"] != "done" || last["stored"].(float64) != 2 {
			t.Errorf("request %s ended with %v", name, last)
		}
	}
	st := a.Stats()
	if st.MaxInFlight != 1 {
		t.Errorf("endpoint A had %d chats in flight at once, want 1: its one slot was counted twice", st.MaxInFlight)
	}
	if st.Requests < 8 {
		t.Errorf("endpoint A got %d chats, want those of both requests (2 × 2 attempts × 2 turns)", st.Requests)
	}
	if n := b.Stats().Requests; n != 0 {
		t.Errorf("endpoint B, named by neither request, got %d chats", n)
	}
}
