// Package ollamatest is a fake Ollama server for tests: it speaks the
// native /api/chat over real HTTP, plays scripted turns (tool calls, text,
// token counts, HTTP errors, slow answers) and records what it received.
// It behaves like a real Ollama server (v0.17.4) where the harness cares:
// 404 for a model that is not pulled, 400 for tools sent to a model without
// tool support, silent truncation at num_ctx, and a num_ctx above the
// model's own context length (DefaultContextLength, or WithContextLength)
// lowered to it without a word to the client; /api/show gives that length
// in model_info, as llama.context_length. With WithPullable it has a
// registry that /api/pull fetches from, streaming progress as Ollama does
// (an unknown name, a failure midway included); NewAt serves it on a
// given address, as a stand-in for `ollama serve`.
//
// It lives under internal/ so that it can serve the tests of several
// packages while never being linked into the bench command.
package ollamatest

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/types/model"

	"github.com/benchhq/bench/internal/cputime"
)

// Reply is one scripted answer of the fake model.
type Reply struct {
	// Content is the assistant's text.
	Content string
	// Calls are the tool calls of the reply, in order.
	Calls []Call
	// PromptTokens and CompletionTokens are reported as prompt_eval_count
	// and eval_count. Zero PromptTokens means: count words of the prompt
	// (see CountWords); zero CompletionTokens means: words of Content plus
	// 10 per call.
	PromptTokens     int
	CompletionTokens int
	// DoneReason defaults to "stop".
	DoneReason string
	// Status, when non-zero, makes the server answer with this HTTP status
	// and {"error": Error} instead of a reply.
	Status int
	Error  string
	// Delay holds the answer back (a slow model).
	Delay time.Duration
	// Hangup closes the connection without an answer (a server that dies).
	Hangup bool
}

// Call is a scripted tool call.
type Call struct {
	Name string
	Args map[string]any
}

// Script chooses the reply to a request. It is called concurrently.
type Script func(req *api.ChatRequest) Reply

// Turns scripts a conversation by its turn number: the n-th reply answers
// the request that already holds n assistant messages. Past the end of the
// list it answers "done" with no tool call. Stateless, so any number of
// conversations can run at once.
func Turns(replies ...Reply) Script {
	return func(req *api.ChatRequest) Reply {
		n := 0
		for _, m := range req.Messages {
			if m.Role == "assistant" {
				n++
			}
		}
		if n < len(replies) {
			return replies[n]
		}
		return Reply{Content: "done"}
	}
}

// Server is a running fake Ollama server.
type Server struct {
	*httptest.Server

	script Script
	// Models lists the models that are "pulled"; any other name gets 404.
	// Empty means every model is pulled, unless strict (a server with a
	// registry to pull from, WithPullable, starts with what it lists).
	// Guarded by catalog: a pull adds to it while chats read it.
	models  map[string]bool
	strict  bool
	catalog sync.RWMutex
	// registry is what /api/pull can fetch (WithPullable); pulls counts
	// the pull requests received per name.
	registry map[string]Pullable
	pulls    map[string]int
	// noTools lists pulled models whose template has no tool support.
	noTools map[string]bool
	// noCapabilities leaves the capabilities out of /api/show, as Ollama
	// before 0.6 did: only a chat with tools tells they are not supported.
	noCapabilities bool
	// digests are the models' digests in /api/tags (default: one derived
	// from the name).
	digests map[string]string
	// slots, when set, bounds the chats answered at once, as
	// OLLAMA_NUM_PARALLEL does: the others wait their turn.
	slots chan struct{}
	// contextLength is every model's own context length.
	contextLength int

	mux *http.ServeMux

	mu       sync.Mutex
	requests []api.ChatRequest
	noRecord bool // WithoutRecording: count requests, keep none
	sketch   bool // WithSketchedRequests: decode only what Turns reads

	stats    Stats
	inFlight int64
	since    time.Time // when inFlight last changed
}

// Stats is what the server counted of the chat requests it received.
type Stats struct {
	// Requests counts the chat requests received.
	Requests int64 `json:"requests"`
	// MaxInFlight is the most requests that were being answered at once.
	MaxInFlight int64 `json:"max_in_flight"`
	// BusySeconds is the integral of the requests in flight over time, in
	// request-seconds: with every request held for L, it is Requests × L.
	BusySeconds float64 `json:"busy_seconds"`
	// FirstArrival is when the first chat request since the previous
	// Stats arrived (zero if none did), and LastDone when the last answer
	// so far was written: how long a run took to send its first request
	// and to end after its last one.
	FirstArrival time.Time `json:"first_arrival"`
	LastDone     time.Time `json:"last_done"`
	// CPUSeconds is the CPU time (user and system, every thread) used so
	// far by the process the server runs in: a spawned child's own, so
	// that a benchmark can tell how much of the cores it shares with the
	// harness the fake model took (for a server in the test's own
	// process, the whole process's, harness included).
	CPUSeconds float64 `json:"cpu_seconds"`
}

// Option configures a Server.
type Option func(*Server)

// WithModels makes only these models pulled.
func WithModels(names ...string) Option {
	return func(s *Server) {
		for _, n := range names {
			s.models[n] = true
		}
	}
}

// WithoutTools makes these models pulled but unable to take tools.
func WithoutTools(names ...string) Option {
	return func(s *Server) {
		for _, n := range names {
			s.models[n] = true
			s.noTools[n] = true
		}
	}
}

// WithoutCapabilities leaves the models' capabilities out of /api/show, as
// servers older than Ollama 0.6 do.
func WithoutCapabilities() Option {
	return func(s *Server) { s.noCapabilities = true }
}

// DefaultContextLength is the models' own context length unless
// WithContextLength says otherwise (qwen3:0.6b's).
const DefaultContextLength = 40960

// WithContextLength gives every model this context length: /api/show
// reports it, and a request whose num_ctx is above it is cut at it, as
// Ollama does, silently.
func WithContextLength(n int) Option {
	return func(s *Server) { s.contextLength = n }
}

// WithoutRecording makes the server count requests (Stats) without keeping
// them (Requests returns none): for long benchmarks.
func WithoutRecording() Option {
	return func(s *Server) { s.noRecord = true }
}

// WithSketchedRequests makes the server, which keeps no requests, decode
// only the part of each that the server and Turns read: the model, the
// options, each message's role and how many tools there are. The rest is
// decoded only when the reply gives no prompt count (CountWords reads it
// all). A benchmark's fake then spends less CPU on the cores of the
// harness it measures: decoding whole requests was half of its CPU.
func WithSketchedRequests() Option {
	return func(s *Server) { s.noRecord, s.sketch = true, true }
}

// sketchedRequest is the part of a chat request WithSketchedRequests
// decodes.
type sketchedRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role string `json:"role"`
	} `json:"messages"`
	Tools   []json.RawMessage `json:"tools"`
	Options map[string]any    `json:"options"`
}

// New starts a fake server playing script. Close it when done.
func New(script Script, opts ...Option) *Server {
	s := newServer(script, opts...)
	s.Server = httptest.NewServer(s.mux)
	return s
}

// NewAt starts a fake server playing script on addr (host:port), as
// `ollama serve` listens on OLLAMA_HOST: for a stand-in of the ollama
// command. Close it when done.
func NewAt(addr string, script Script, opts ...Option) (*Server, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("fake ollama: listen on %s: %w", addr, err)
	}
	s := newServer(script, opts...)
	s.Server = httptest.NewUnstartedServer(s.mux)
	s.Server.Listener.Close()
	s.Server.Listener = l
	s.Server.Start()
	return s, nil
}

// newServer makes a server's state and routes, not yet listening.
func newServer(script Script, opts ...Option) *Server {
	s := &Server{script: script, models: map[string]bool{}, noTools: map[string]bool{}, digests: map[string]string{},
		contextLength: DefaultContextLength, registry: map[string]Pullable{}, pulls: map[string]int{}}
	for _, o := range opts {
		o(s)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/pull", s.pull)
	mux.HandleFunc("POST /api/chat", s.chat)
	mux.HandleFunc("GET /api/tags", s.tags)
	mux.HandleFunc("POST /api/show", s.show)
	mux.HandleFunc("GET /", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" {
			fmt.Fprint(w, "Ollama is running")
			return
		}
		http.NotFound(w, r)
	})
	mux.HandleFunc("GET /api/version", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"version":"0.17.4"}`)
	})
	mux.HandleFunc("GET "+statsPath, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(s.Stats())
	})
	s.mux = mux
	return s
}

// Stop kills the server as a crash would: open connections are cut and
// new ones refused, until Start.
func (s *Server) Stop() {
	s.Server.CloseClientConnections()
	s.Server.Close()
}

// Start brings a stopped server back on the same address, as a restarted
// Ollama would come back on its port.
func (s *Server) Start() error {
	addr := s.Server.Listener.Addr().String()
	var l net.Listener
	var err error
	for i := 0; i < 50; i++ {
		if l, err = net.Listen("tcp", addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("restart fake ollama on %s: %w", addr, err)
	}
	srv := httptest.NewUnstartedServer(s.mux)
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	s.Server = srv
	return nil
}

// statsPath is where the server answers its Stats, for a parent process
// (see Spawn). No Ollama endpoint has this path.
const statsPath = "/ollamatest/stats"

// Stats returns what the server has counted so far; the next Stats's
// FirstArrival is that of the requests after this call.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.account(time.Now())
	st := s.stats
	st.CPUSeconds = cputime.Self().Seconds()
	s.stats.FirstArrival = time.Time{}
	return st
}

// account adds the time since the last change of inFlight to BusySeconds.
// s.mu is held.
func (s *Server) account(now time.Time) {
	if !s.since.IsZero() {
		s.stats.BusySeconds += float64(s.inFlight) * now.Sub(s.since).Seconds()
	}
	s.since = now
}

// enter and leave count a request in flight.
func (s *Server) enter() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.account(time.Now())
	s.inFlight++
	if s.stats.FirstArrival.IsZero() {
		s.stats.FirstArrival = s.since
	}
	s.stats.Requests++
	s.stats.MaxInFlight = max(s.stats.MaxInFlight, s.inFlight)
}

func (s *Server) leave() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.account(time.Now())
	s.inFlight--
	s.stats.LastDone = s.since
}

// Requests returns a copy of every chat request received, in arrival order.
func (s *Server) Requests() []api.ChatRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]api.ChatRequest(nil), s.requests...)
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	arrived := time.Now()
	s.enter()
	defer s.leave()
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	var req api.ChatRequest
	tools := 0
	if s.sketch {
		var sk sketchedRequest
		err = json.Unmarshal(body, &sk)
		req.Model, req.Options, tools = sk.Model, sk.Options, len(sk.Tools)
		for _, m := range sk.Messages {
			req.Messages = append(req.Messages, api.Message{Role: m.Role})
		}
	} else {
		err = json.Unmarshal(body, &req)
		tools = len(req.Tools)
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if !s.noRecord {
		s.mu.Lock()
		s.requests = append(s.requests, req)
		s.mu.Unlock()
	}

	if !s.has(req.Model) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("model '%s' not found", req.Model))
		return
	}
	if s.noTools[req.Model] && tools > 0 {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("registry.ollama.ai/library/%s:latest does not support tools", req.Model))
		return
	}
	if s.slots != nil {
		select {
		case s.slots <- struct{}{}:
			defer func() { <-s.slots }()
			arrived = time.Now() // the latency runs from here, as a model's does once it has a slot
		case <-r.Context().Done():
			return
		}
	}
	rep := s.script(&req)
	if !Wait(r, arrived, rep.Delay) {
		return
	}
	if rep.Hangup {
		Hangup(w)
		return
	}
	if rep.Status != 0 {
		writeError(w, rep.Status, rep.Error)
		return
	}
	resp := api.ChatResponse{
		Model:      req.Model,
		CreatedAt:  time.Now().UTC(),
		Message:    api.Message{Role: "assistant", Content: rep.Content},
		Done:       true,
		DoneReason: rep.DoneReason,
	}
	if resp.DoneReason == "" {
		resp.DoneReason = "stop"
	}
	if req.Logprobs {
		// As Ollama gives them: each sampled token as text with its
		// logprob, no ids (here a token is a word of the content, or a
		// call's name).
		for i, w := range strings.Fields(rep.Content) {
			resp.Logprobs = append(resp.Logprobs, api.Logprob{TokenLogprob: api.TokenLogprob{Token: w, Logprob: -float64(i%4+1) / 4}})
		}
		for _, c := range rep.Calls {
			resp.Logprobs = append(resp.Logprobs, api.Logprob{TokenLogprob: api.TokenLogprob{Token: c.Name, Logprob: -0.5}})
		}
	}
	for i, c := range rep.Calls {
		args := api.NewToolCallFunctionArguments()
		for _, k := range slices.Sorted(maps.Keys(c.Args)) {
			args.Set(k, c.Args[k])
		}
		resp.Message.ToolCalls = append(resp.Message.ToolCalls, api.ToolCall{
			ID:       fmt.Sprintf("call_%d", i),
			Function: api.ToolCallFunction{Index: i, Name: c.Name, Arguments: args},
		})
	}
	prompt := rep.PromptTokens
	if prompt == 0 {
		if s.sketch {
			req = api.ChatRequest{}
			_ = json.Unmarshal(body, &req) // it decoded as a sketch
		}
		prompt = CountWords(&req)
	}
	if n := s.context(req.Options); n > 0 && prompt > n {
		prompt = n // Ollama truncates silently and reports the context it used
	}
	completion := rep.CompletionTokens
	if completion == 0 {
		completion = len(strings.Fields(rep.Content)) + 10*len(rep.Calls)
	}
	resp.PromptEvalCount = prompt
	resp.EvalCount = completion
	resp.TotalDuration = time.Millisecond
	resp.PromptEvalDuration = 300 * time.Microsecond
	resp.EvalDuration = 600 * time.Microsecond
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}

// CountWords is the fake model's tokenizer: one token per whitespace-separated
// word of every message's content, plus one per word of the JSON of the
// tool definitions, plus 4 per message for the template around it. Fixed and
// simple, so tests can compute expected counts exactly.
func CountWords(req *api.ChatRequest) int {
	n := 0
	for _, m := range req.Messages {
		n += 4 + len(strings.Fields(m.Content))
		for _, tc := range m.ToolCalls {
			n += 2 + len(strings.Fields(tc.Function.Arguments.String()))
		}
	}
	for _, t := range req.Tools {
		n += ToolWords(t)
	}
	return n
}

// ToolWords is the number of tokens a tool definition adds to a prompt under
// CountWords: its JSON with punctuation turned to spaces, counted in words.
func ToolWords(t api.Tool) int {
	b, _ := json.Marshal(t)
	s := strings.Map(func(r rune) rune {
		switch r {
		case '{', '}', '[', ']', ',', ':', '"':
			return ' '
		}
		return r
	}, string(b))
	return len(strings.Fields(s))
}

// show answers /api/show: the model's architecture, its context length
// and its capabilities, or 404 for a model that is not pulled.
func (s *Server) show(w http.ResponseWriter, r *http.Request) {
	var req api.ShowRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	name := req.Model
	if name == "" {
		name = req.Name
	}
	if n := model.ParseName(name); !n.IsValid() {
		// What Ollama v0.17.4 answers: its check fails as an internal error.
		writeError(w, http.StatusInternalServerError, fmt.Sprintf("unqualified name: %s", n))
		return
	}
	if !s.has(name) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("model '%s' not found", name))
		return
	}
	caps := []string{"completion", "tools"}
	if s.noTools[name] {
		caps = caps[:1]
	}
	show := map[string]any{
		"details":      map[string]any{"family": "llama", "format": "gguf"},
		"capabilities": caps,
		"model_info": map[string]any{
			"general.architecture":   "llama",
			"llama.context_length":   s.contextLength,
			"llama.embedding_length": 1024,
		},
	}
	if s.noCapabilities {
		delete(show, "capabilities")
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(show)
}

// context is the context a request gets: its num_ctx, lowered to the
// model's context length when above it (0 when num_ctx is not sent).
func (s *Server) context(opts map[string]any) int {
	n := numCtx(opts)
	if n > 0 && s.contextLength > 0 && n > s.contextLength {
		return s.contextLength // Ollama logs a warning; the client hears nothing
	}
	return n
}

func numCtx(opts map[string]any) int {
	switch v := opts["num_ctx"].(type) {
	case float64:
		return int(v)
	case int:
		return v
	}
	return 0
}

// Wait holds an answer back until d has passed since arrived (when the
// request came in), as a model of latency d does; false when the client
// went away first. The runtime's timers can fire up to a millisecond
// late (its poller sleeps in whole milliseconds on Linux), which would
// make every answer of the fake that much slower than d: the last
// millisecond is slept by the system instead (sleepPrecisely).
func Wait(r *http.Request, arrived time.Time, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	until := arrived.Add(d)
	if coarse := time.Until(until) - time.Millisecond; coarse > 0 {
		t := time.NewTimer(coarse)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			return false
		}
	}
	sleepPrecisely(time.Until(until))
	return r.Context().Err() == nil
}

// Hangup closes the connection without an answer, as a server that dies
// mid-request does.
func Hangup(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		conn, _, err := hj.Hijack()
		if err == nil {
			conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}
