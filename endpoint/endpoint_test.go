package endpoint_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/endpoint"
	"github.com/benchhq/bench/internal/ollamatest"
	"github.com/benchhq/bench/internal/openaitest"
)

func TestParseHost(t *testing.T) {
	tests := []struct {
		in      string
		want    endpoint.Spec
		wantErr string
	}{
		{"http://a:11434", endpoint.Spec{URL: "http://a:11434"}, ""},
		{"http://a:11434=4", endpoint.Spec{URL: "http://a:11434", Slots: 4}, ""},
		{"http://a:8000/v1=16", endpoint.Spec{URL: "http://a:8000/v1", Slots: 16}, ""},
		{"http://a:11434=0", endpoint.Spec{}, "positive"},
		{"http://a:11434=four", endpoint.Spec{}, "URL=SLOTS"},
		{"=3", endpoint.Spec{}, "URL is missing"},
	}
	for _, tt := range tests {
		got, err := endpoint.ParseHost(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseHost(%q) error %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseHost(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
		if got.String() != tt.in {
			t.Errorf("Spec.String() = %q, want %q", got.String(), tt.in)
		}
	}
	if _, err := endpoint.ParseAPI("grpc"); err == nil {
		t.Error("ParseAPI accepted grpc")
	}
}

func newPool(t *testing.T, eps ...*endpoint.Endpoint) *endpoint.Pool {
	t.Helper()
	p, err := endpoint.NewPool(eps...)
	if err != nil {
		t.Fatal(err)
	}
	p.Cooldown = func(int) time.Duration { return 20 * time.Millisecond }
	t.Cleanup(p.Close)
	return p
}

func ollamaEndpoint(t *testing.T, srv *ollamatest.Server, slots int) *endpoint.Endpoint {
	t.Helper()
	e, err := endpoint.New(endpoint.Ollama, endpoint.Spec{URL: srv.URL, Slots: slots}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestAcquireFillsFreeSlots: attempts spread over the endpoints by their
// share of free slots, and wait when every slot is taken.
func TestAcquireFillsFreeSlots(t *testing.T) {
	a := endpoint.Of("a", nil, 2)
	b := endpoint.Of("b", nil, 4)
	p := newPool(t, a, b)
	if p.Slots() != 6 {
		t.Errorf("slots %d, want 6", p.Slots())
	}
	count := map[string]int{}
	var leases []*endpoint.Lease
	for range 6 {
		l, err := p.Acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		count[l.Endpoint()]++
		leases = append(leases, l)
	}
	if count["a"] != 2 || count["b"] != 4 {
		t.Fatalf("leases %v, want a:2 b:4", count)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := p.Acquire(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a seventh lease with every slot taken: %v, want to wait", err)
	}
	got := make(chan string)
	go func() {
		l, err := p.Acquire(context.Background())
		if err != nil {
			got <- err.Error()
			return
		}
		got <- l.Endpoint()
	}()
	var onA *endpoint.Lease
	for _, l := range leases {
		if l.Endpoint() == "a" {
			onA = l
		}
	}
	onA.Release()
	onA.Release() // twice is harmless
	if e := <-got; e != "a" {
		t.Errorf("the waiting attempt got %q, want the slot freed on a", e)
	}
}

func TestFault(t *testing.T) {
	timedOut, cancel := context.WithTimeoutCause(context.Background(), time.Nanosecond, agent.ErrRequestTimeout)
	defer cancel()
	wallTime, cancel2 := context.WithTimeoutCause(context.Background(), time.Nanosecond, errors.New("wall time"))
	defer cancel2()
	<-timedOut.Done()
	<-wallTime.Done()
	bg := context.Background()
	refused := &url.Error{Op: "Post", URL: "http://x", Err: &net.OpError{Op: "dial", Err: errors.New("connection refused")}}
	tests := []struct {
		name string
		ctx  context.Context
		err  error
		want bool
	}{
		{"refused", bg, refused, true},
		{"cut mid-reply", bg, io.ErrUnexpectedEOF, true},
		{"ollama 500", bg, api.StatusError{StatusCode: 500, ErrorMessage: "llama runner process has terminated"}, true},
		{"ollama 503", bg, &agent.ModelError{Err: api.StatusError{StatusCode: 503}}, true},
		{"ollama not pulled", bg, &agent.ModelError{Err: api.StatusError{StatusCode: 404, ErrorMessage: "model 'x' not found"}}, false},
		{"ollama no tools", bg, api.StatusError{StatusCode: 400, ErrorMessage: "does not support tools"}, false},
		{"openai 502", bg, &agent.ModelError{Err: agent.ParseOpenAIError(502, []byte("bad gateway"))}, true},
		{"openai 429", bg, agent.ParseOpenAIError(429, []byte(`{"error":{"message":"queue full"}}`)), true},
		{"llama.cpp no tools is a 500 but not a fault", bg, agent.ParseOpenAIError(500, []byte(`{"error":{"code":500,"message":"tools param requires --jinja flag","type":"server_error"}}`)), false},
		{"openai context", bg, agent.ParseOpenAIError(400, []byte(`{"error":{"message":"maximum context length is 8192 tokens"}}`)), false},
		{"request timeout", timedOut, context.DeadlineExceeded, true},
		{"attempt's wall time", wallTime, context.DeadlineExceeded, false},
	}
	for _, tt := range tests {
		if got := endpoint.Fault(tt.ctx, tt.err); got != tt.want {
			t.Errorf("%s: Fault = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func hello(m agent.Model) error {
	_, err := m.Chat(context.Background(), &api.ChatRequest{Model: "fake", Messages: []api.Message{{Role: "user", Content: "hi"}}})
	return err
}

// TestFailedEndpointIsTakenOutAndProbedBack: a server that dies takes
// its endpoint out of service, attempts go to the other one, and the
// endpoint comes back once its probe answers.
func TestFailedEndpointIsTakenOutAndProbedBack(t *testing.T) {
	sa := ollamatest.New(ollamatest.Turns())
	sb := ollamatest.New(ollamatest.Turns())
	defer sa.Close()
	defer sb.Close()
	a, b := ollamaEndpoint(t, sa, 1), ollamaEndpoint(t, sb, 1)
	p := newPool(t, a, b)
	var mu sync.Mutex
	var logs []string
	p.Log = func(f string, args ...any) { mu.Lock(); logs = append(logs, fmt.Sprintf(f, args...)); mu.Unlock() }
	p.Cooldown = func(int) time.Duration { return 30 * time.Millisecond }

	la, _ := p.Acquire(context.Background())
	if la.Endpoint() != a.Name {
		t.Fatalf("first lease on %s, want %s", la.Endpoint(), a.Name)
	}
	if em, ok := la.Model().(agent.EndpointModel); !ok || em.Endpoint() != a.Name {
		t.Errorf("the lease's model does not name its endpoint")
	}
	if err := hello(la.Model()); err != nil {
		t.Fatal(err)
	}
	sa.Stop()
	if err := hello(la.Model()); err == nil {
		t.Fatal("a request to a stopped server succeeded")
	}
	if !la.Failed() || p.InService() != 1 {
		t.Fatalf("failed %v, in service %d; want the lease failed and one endpoint left", la.Failed(), p.InService())
	}
	la.Release()
	// While a is out, every lease goes to b, even with a's slot free.
	for range 3 {
		l, _ := p.Acquire(context.Background())
		if l.Endpoint() != b.Name {
			t.Fatalf("lease on %s while it is out of service", l.Endpoint())
		}
		l.Release()
	}
	time.Sleep(100 * time.Millisecond) // probes fail: a stays out
	if p.InService() != 1 {
		t.Fatalf("a stopped server came back into service")
	}
	if err := sa.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for p.InService() != 2 {
		if time.Now().After(deadline) {
			t.Fatal("the restarted server was not probed back into service")
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(logs) != 2 || !strings.Contains(logs[0], "out of service") || !strings.Contains(logs[1], "back in service") {
		t.Errorf("log %q: want one line out, one back", logs)
	}
}

// TestAllOutStillHandsOut: with every endpoint out of service, attempts
// still get one (and their own retry bound ends them), and an answer puts
// it back at once.
func TestAllOutStillHandsOut(t *testing.T) {
	s := ollamatest.New(ollamatest.Turns())
	defer s.Close()
	e := ollamaEndpoint(t, s, 0)
	p := newPool(t, e)
	p.Cooldown = func(int) time.Duration { return time.Hour }
	s.Stop()
	l, _ := p.Acquire(context.Background())
	_ = hello(l.Model())
	l.Release()
	if p.InService() != 0 {
		t.Fatal("the stopped server is still in service")
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	l, err := p.Acquire(context.Background())
	if err != nil || l.Endpoint() != e.Name {
		t.Fatalf("lease %v, %v: want the only endpoint", l, err)
	}
	if err := hello(l.Model()); err != nil {
		t.Fatal(err)
	}
	if p.InService() != 1 {
		t.Error("an endpoint that answered was not put back in service")
	}
}

func TestCheckDigests(t *testing.T) {
	same1 := ollamatest.New(ollamatest.Turns(), ollamatest.WithDigest("qwen3:0.6b", "aaaa"))
	same2 := ollamatest.New(ollamatest.Turns(), ollamatest.WithDigest("qwen3:0.6b", "aaaa"))
	other := ollamatest.New(ollamatest.Turns(), ollamatest.WithDigest("qwen3:0.6b", "bbbb"))
	missing := ollamatest.New(ollamatest.Turns(), ollamatest.WithModels("llama3.1:8b"))
	anyModel := ollamatest.New(ollamatest.Turns()) // every model pulled, none listed
	latest := ollamatest.New(ollamatest.Turns(), ollamatest.WithDigest("qwen3:latest", "cccc"))
	for _, s := range []*ollamatest.Server{same1, same2, other, missing, anyModel, latest} {
		defer s.Close()
	}
	check := func(model string, mixed bool, srvs ...*ollamatest.Server) (string, []string, error) {
		var eps []*endpoint.Endpoint
		for _, s := range srvs {
			eps = append(eps, ollamaEndpoint(t, s, 1))
		}
		return newPool(t, eps...).Check(context.Background(), model, mixed)
	}
	id, warn, err := check("qwen3:0.6b", false, same1, same2)
	if err != nil || id != "aaaa" || len(warn) != 0 {
		t.Errorf("same digest: %q %v %v; want aaaa and no warning", id, warn, err)
	}
	_, _, err = check("qwen3:0.6b", false, same1, other)
	if err == nil || !strings.Contains(err.Error(), "different models") || !strings.Contains(err.Error(), other.URL) || !strings.Contains(err.Error(), "--allow-mixed-models") {
		t.Errorf("different digests: %v; want a refusal naming the endpoints and the flag", err)
	}
	id, warn, err = check("qwen3:0.6b", true, same1, other)
	if err != nil || id != "aaaa | bbbb" || len(warn) != 1 {
		t.Errorf("different digests allowed: %q %v %v; want both digests and a warning", id, warn, err)
	}
	_, _, err = check("qwen3:0.6b", false, same1, missing)
	if err == nil || !strings.Contains(err.Error(), missing.URL) || !strings.Contains(err.Error(), "ollama pull qwen3:0.6b") {
		t.Errorf("model missing on one: %v; want the endpoint and what to do", err)
	}
	id, warn, err = check("qwen3:0.6b", false, same1, anyModel)
	if err != nil || id != "aaaa" || len(warn) != 1 || !strings.Contains(warn[0], anyModel.URL) {
		t.Errorf("one endpoint unknown: %q %v %v; want a warning naming it", id, warn, err)
	}
	if id, _, err = check("qwen3", false, latest); err != nil || id != "cccc" {
		t.Errorf("a name without tag: %q %v; want the digest of name:latest", id, err)
	}
	dead := ollamatest.New(ollamatest.Turns())
	dead.Close()
	if _, _, err = check("qwen3:0.6b", false, same1, dead); err == nil || !strings.Contains(err.Error(), dead.URL) {
		t.Errorf("a dead endpoint: %v; want an error naming it", err)
	}
}

func TestCheckOpenAIServers(t *testing.T) {
	a := openaitest.New(ollamatest.Turns(), openaitest.WithRoot("qwen", "Qwen/Qwen3-8B"), openaitest.WithContext(32768))
	b := openaitest.New(ollamatest.Turns(), openaitest.WithRoot("qwen", "Qwen/Qwen3-8B"), openaitest.WithContext(32768))
	c := openaitest.New(ollamatest.Turns(), openaitest.WithRoot("qwen", "Qwen/Qwen3-8B-AWQ"), openaitest.WithContext(32768))
	d := openaitest.New(ollamatest.Turns(), openaitest.WithRoot("qwen", "")) // LM Studio, Ollama /v1: nothing to compare
	for _, s := range []*openaitest.Server{a, b, c, d} {
		defer s.Close()
	}
	check := func(model string, srvs ...*openaitest.Server) (string, []string, error) {
		var eps []*endpoint.Endpoint
		for _, s := range srvs {
			e, err := endpoint.New(endpoint.OpenAI, endpoint.Spec{URL: s.URL + "/v1", Slots: 2}, nil)
			if err != nil {
				t.Fatal(err)
			}
			eps = append(eps, e)
		}
		return newPool(t, eps...).Check(context.Background(), model, false)
	}
	id, warn, err := check("qwen", a, b)
	if err != nil || id != "root=Qwen/Qwen3-8B max_model_len=32768" || len(warn) != 0 {
		t.Errorf("same weights: %q %v %v", id, warn, err)
	}
	if _, _, err = check("qwen", a, c); err == nil || !strings.Contains(err.Error(), "Qwen3-8B-AWQ") {
		t.Errorf("other weights: %v; want a refusal naming them", err)
	}
	if _, warn, err = check("qwen", a, d); err != nil || len(warn) != 1 {
		t.Errorf("one without a root: %v %v; want a warning", warn, err)
	}
	if _, _, err = check("llama", a); err == nil || !strings.Contains(err.Error(), "lists: qwen") {
		t.Errorf("a model the server does not serve: %v; want what it serves", err)
	}
	if _, err := endpoint.New(endpoint.OpenAI, endpoint.Spec{}, nil); err == nil {
		t.Error("an OpenAI endpoint without a URL was accepted")
	}
}

// encodedModel is a model that takes the tool list already encoded, and
// counts how it was asked.
type encodedModel struct{ plain, encoded int }

func (m *encodedModel) Chat(context.Context, *api.ChatRequest) (*api.ChatResponse, error) {
	m.plain++
	return &api.ChatResponse{Done: true}, nil
}

func (m *encodedModel) ChatEncoded(_ context.Context, _ *api.ChatRequest, enc agent.Encoded) (*api.ChatResponse, error) {
	if string(enc.Tools) == `[{"type":"function"}]` {
		m.encoded++
	}
	return &api.ChatResponse{Done: true}, nil
}

// TestLeasePassesTheEncodedToolsOn: the agent loop encodes the tool list
// once per attempt and sends it so to a model that takes it; a lease's
// model must take it too, or every turn encodes it again.
func TestLeasePassesTheEncodedToolsOn(t *testing.T) {
	m := &encodedModel{}
	p := newPool(t, endpoint.Of("a", m, 1))
	l, err := p.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	em, ok := l.Model().(interface {
		ChatEncoded(context.Context, *api.ChatRequest, agent.Encoded) (*api.ChatResponse, error)
	})
	if !ok {
		t.Fatal("a lease's model does not take an encoded tool list")
	}
	if _, err := em.ChatEncoded(context.Background(), &api.ChatRequest{}, agent.Encoded{Tools: json.RawMessage(`[{"type":"function"}]`)}); err != nil {
		t.Fatal(err)
	}
	if m.encoded != 1 || m.plain != 0 {
		t.Errorf("the endpoint's model was asked plain %d, encoded %d times; want the encoded list passed on", m.plain, m.encoded)
	}
}

// plainModel takes requests only whole (an OpenAI endpoint).
type plainModel struct{}

func (plainModel) Chat(context.Context, *api.ChatRequest) (*api.ChatResponse, error) {
	return &api.ChatResponse{Done: true}, nil
}

// TestLeaseOfAPlainModelTakesNothingEncoded: the lease of an endpoint
// whose model takes requests only whole offers no ChatEncoded, so that
// the loop does not encode its messages for nothing.
func TestLeaseOfAPlainModelTakesNothingEncoded(t *testing.T) {
	p := newPool(t, endpoint.Of("a", plainModel{}, 1))
	l, err := p.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if _, ok := l.Model().(agent.EncodedModel); ok {
		t.Error("the lease of a plain model takes encoded requests")
	}
}
