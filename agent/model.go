package agent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/envconfig"
	"github.com/ollama/ollama/version"
)

// Model is a chat model: one request in, one complete reply out.
type Model interface {
	Chat(ctx context.Context, req *api.ChatRequest) (*api.ChatResponse, error)
}

// Ollama is the model client for an Ollama server's native /api/chat, built
// on the official api package: its request and response types, its
// errors, and its client for everything but the hot path.
//
// The hot path, one /api/chat request per turn, is a direct POST decoded
// into the same api types, read line by line as api.Client reads it and
// failing with the same errors. api.Client.Chat allocates an 8 MB line
// buffer for every request: measured with BenchmarkChat (agent) on a
// fifth-turn request of 16 KB, 8.1 MB and 3 to 4 ms of CPU per request
// through api.Client.Chat against 30 KB and 0.2 to 0.3 ms through the
// direct POST with the tool list encoded once (docs/performance.md). A server that wants requests signed
// (OLLAMA_AUTH, ollama.com) is still asked through api.Client.Chat,
// which signs them.
type Ollama struct {
	client  *api.Client
	hc      *http.Client
	chatURL string
	sign    bool // requests must be signed: go through api.Client
	host    string
}

// NewOllama returns a client for the Ollama server at base (for example
// "http://127.0.0.1:11434"). An empty base honours OLLAMA_HOST and falls back
// to Ollama's default address, as the ollama command does.
func NewOllama(base string, hc *http.Client) (*Ollama, error) {
	if hc == nil {
		// Keep a connection per attempt running at once: the default
		// transport keeps two per host and opens a new one for every
		// request beyond that.
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = 64
		hc = &http.Client{Transport: t}
	}
	u := envconfig.Host() // what api.ClientFromEnvironment uses, with our own *http.Client
	if base != "" {
		var err error
		if u, err = ParseHost(base); err != nil {
			return nil, err
		}
	}
	return &Ollama{
		client:  api.NewClient(u, hc),
		hc:      hc,
		chatURL: u.JoinPath("/api/chat").String(),
		// As api.Client decides to sign a request.
		sign: envconfig.UseAuth() || u.Hostname() == "ollama.com",
		host: u.String(),
	}, nil
}

// ParseHost reads an Ollama server address the way the ollama command
// reads OLLAMA_HOST: "http://host:port/path", "host:port", "host" or
// ":port", with http and port 11434 by default (80 or 443 when the scheme
// is given without a port). A port that is not a number from 0 to 65535 is
// an error (Ollama falls back to its default port with a log warning).
func ParseHost(s string) (*url.URL, error) {
	s = strings.TrimSpace(s)
	defaultPort := "11434"
	scheme, hostport, ok := strings.Cut(s, "://")
	switch {
	case !ok:
		scheme, hostport = "http", s
	case scheme == "http":
		defaultPort = "80"
	case scheme == "https":
		defaultPort = "443"
	default:
		return nil, fmt.Errorf("ollama host %q: scheme %q, expected http or https (for example http://127.0.0.1:11434)", s, scheme)
	}
	hostport, path, _ := strings.Cut(hostport, "/")
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = "127.0.0.1", defaultPort
		if ip := net.ParseIP(strings.Trim(hostport, "[]")); ip != nil {
			host = ip.String()
		} else if hostport != "" {
			host = hostport
		}
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return nil, fmt.Errorf("ollama host %q: port %q, expected a number from 0 to 65535 (for example 127.0.0.1:11434)", s, port)
	}
	if strings.ContainsAny(host, " /?#") {
		return nil, fmt.Errorf("ollama host %q: expected an address such as 127.0.0.1:11434 or http://localhost:11434", s)
	}
	return &url.URL{Scheme: scheme, Host: net.JoinHostPort(host, port), Path: path}, nil
}

// Chat sends one non-streaming chat request and returns the reply.
func (o *Ollama) Chat(ctx context.Context, req *api.ChatRequest) (*api.ChatResponse, error) {
	return o.ChatEncoded(ctx, req, Encoded{})
}

// ChatEncoded is Chat with parts of the request already encoded (enc),
// sent in place of req's own, so that an attempt encodes its tool list
// once and each message once rather than all of them every turn.
func (o *Ollama) ChatEncoded(ctx context.Context, req *api.ChatRequest, enc Encoded) (*api.ChatResponse, error) {
	var out *api.ChatResponse
	var err error
	if o.sign {
		out, err = o.chatSigned(ctx, req)
	} else {
		out, err = o.post(ctx, req, enc)
	}
	if err != nil {
		return nil, &ModelError{Host: o.host, Model: req.Model, Err: err}
	}
	if out == nil {
		return nil, &ModelError{Host: o.host, Model: req.Model, Err: errors.New("empty reply")}
	}
	return out, nil
}

// Endpoint returns the server's URL, which the loop records with each turn.
func (o *Ollama) Endpoint() string { return o.host }

// chatSigned sends the request through api.Client.Chat, which signs it.
func (o *Ollama) chatSigned(ctx context.Context, req *api.ChatRequest) (*api.ChatResponse, error) {
	stream := false
	r := *req
	r.Stream = &stream
	var out *api.ChatResponse
	err := o.client.Chat(ctx, &r, func(resp api.ChatResponse) error {
		out = accumulate(out, &resp)
		return nil
	})
	return out, err
}

// accumulate adds one line of a reply to what came before it (nil for the
// first): a server that ignores stream=false streams its reply.
func accumulate(out, resp *api.ChatResponse) *api.ChatResponse {
	if out == nil {
		return resp
	}
	out.Message.Content += resp.Message.Content
	out.Message.Thinking += resp.Message.Thinking
	out.Message.ToolCalls = append(out.Message.ToolCalls, resp.Message.ToolCalls...)
	out.Logprobs = append(out.Logprobs, resp.Logprobs...)
	if resp.Done {
		out.Done, out.DoneReason, out.Metrics = true, resp.DoneReason, resp.Metrics
	}
	return out
}

// maxLine is api.Client's bound on one line of a reply.
const maxLine = 8 << 20

// post sends a non-streaming chat request as api.Client.Chat does, and
// reads the reply as it does, line by line, with the same errors: an
// api.StatusError for a status of 400 or more, an api.AuthorizationError
// for 401, the server's text for an error line. It differs in what it
// costs: the line buffer is the reply's size (or grows from 16 KB) instead of being 8 MB
// from the start, each line is decoded once, and tools may come encoded.
func (o *Ollama) post(ctx context.Context, req *api.ChatRequest, enc Encoded) (*api.ChatResponse, error) {
	body, err := chatBody(req, enc)
	if err != nil {
		return nil, err
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, o.chatURL, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/x-ndjson")
	hreq.Header.Set("User-Agent", userAgent)
	resp, err := o.hc.Do(hreq)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	size := 16 << 10
	if resp.ContentLength > 0 {
		size = int(min(resp.ContentLength+1, maxLine))
	}
	sc.Buffer(make([]byte, 0, size), maxLine)
	var out *api.ChatResponse
	for sc.Scan() {
		line := sc.Bytes()
		var l struct {
			api.ChatResponse
			Error     string `json:"error,omitempty"`
			SigninURL string `json:"signin_url,omitempty"`
		}
		if err := json.Unmarshal(line, &l); err != nil {
			// Not a reply line: what api.Client makes of it.
			return nil, lineError(resp, line)
		}
		switch {
		case resp.StatusCode == http.StatusUnauthorized:
			return nil, api.AuthorizationError{StatusCode: resp.StatusCode, Status: resp.Status, SigninURL: l.SigninURL}
		case resp.StatusCode >= http.StatusBadRequest:
			return nil, api.StatusError{StatusCode: resp.StatusCode, Status: resp.Status, ErrorMessage: l.Error}
		case l.Error != "":
			return nil, errors.New(l.Error)
		}
		out = accumulate(out, &l.ChatResponse)
	}
	// Unlike api.Client, a reply cut short (a read error, or no line with
	// done) is an error: taken for whole, it would be scored as the
	// model's answer.
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read the reply of %s: %w", o.host, err)
	}
	if out != nil && !out.Done {
		return nil, fmt.Errorf("the reply of %s ended before its last line (no \"done\": true)", o.host)
	}
	return out, nil
}

// userAgent is the User-Agent api.Client sends.
var userAgent = fmt.Sprintf("ollama/%s (%s %s) Go/%s", version.Version, runtime.GOARCH, runtime.GOOS, runtime.Version())

// lineError is api.Client's error for a reply line that does not decode as
// a reply: the line read for its error fields, in api.Client's order.
func lineError(resp *http.Response, line []byte) error {
	var e struct {
		Error     string `json:"error,omitempty"`
		SigninURL string `json:"signin_url,omitempty"`
	}
	if err := json.Unmarshal(line, &e); err != nil {
		if resp.StatusCode >= http.StatusBadRequest {
			return api.StatusError{StatusCode: resp.StatusCode, Status: resp.Status, ErrorMessage: string(line)}
		}
		return errors.New(string(line))
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		return api.AuthorizationError{StatusCode: resp.StatusCode, Status: resp.Status, SigninURL: e.SigninURL}
	case resp.StatusCode >= http.StatusBadRequest:
		return api.StatusError{StatusCode: resp.StatusCode, Status: resp.Status, ErrorMessage: e.Error}
	case e.Error != "":
		return errors.New(e.Error)
	}
	// The line holds no error but does not decode as a reply either: the
	// decoding error, as api.Client's callback returns it.
	var r api.ChatResponse
	return json.Unmarshal(line, &r)
}

// chatBody is the JSON of a non-streaming request, with enc's parts in
// place of req's own.
func chatBody(req *api.ChatRequest, enc Encoded) ([]byte, error) {
	stream := false
	r := *req
	r.Stream = &stream
	if enc.Tools != nil {
		r.Tools = nil
	}
	if enc.Messages != nil {
		r.Messages = nil
	}
	b, err := json.Marshal(&r)
	if err != nil {
		return nil, err
	}
	if enc.Messages != nil {
		// b starts {"model":...,"messages":null: the messages go there.
		model, err := json.Marshal(r.Model)
		if err != nil {
			return nil, err
		}
		head := append(append([]byte(`{"model":`), model...), `,"messages":`...)
		if !bytes.HasPrefix(b, head) || !bytes.HasPrefix(b[len(head):], []byte("null")) {
			return chatBody(req, Encoded{Tools: enc.Tools}) // another field order: encoded whole
		}
		out := make([]byte, 0, len(b)+len(enc.Messages)+len(enc.Tools)+10)
		out = append(out, head...)
		out = append(out, enc.Messages...)
		b = append(out, b[len(head)+len("null"):]...)
	}
	if t := enc.Tools; len(t) == 0 || string(t) == "null" || string(t) == "[]" {
		return b, nil // omitted, as omitempty omits an empty list
	}
	// b is a JSON object: {"model":...}; add the tools before its end.
	b = append(b[:len(b)-1], `,"tools":`...)
	b = append(b, enc.Tools...)
	return append(b, '}'), nil
}

// ModelError is a failure to get a reply from the model server.
type ModelError struct {
	Host  string
	Model string
	Err   error
	// API names the kind of server in messages; "" is Ollama.
	API string
}

func (e *ModelError) Error() string {
	kind := "ollama"
	if e.API != "" {
		kind = e.API
	}
	return fmt.Sprintf("%s at %s, model %s: %v", kind, e.Host, e.Model, e.Err)
}

func (e *ModelError) Unwrap() error { return e.Err }

// Hint says what the operator should do about a model error, or "" if
// nothing specific applies.
func (e *ModelError) Hint() string {
	var h interface{ hint(*ModelError) string }
	if errors.As(e.Err, &h) {
		return h.hint(e) // another backend's errors (OpenAIError)
	}
	if errors.Is(e.Err, ErrNoTools) {
		return e.noToolsHint()
	}
	var se api.StatusError
	if errors.As(e.Err, &se) {
		msg := strings.ToLower(se.ErrorMessage)
		switch {
		case se.StatusCode == http.StatusNotFound && strings.Contains(msg, "not found"):
			return fmt.Sprintf("the model %s is not pulled: run `ollama pull %s`", e.Model, e.Model)
		case se.StatusCode == http.StatusBadRequest && strings.Contains(msg, "does not support tools"):
			return e.noToolsHint()
		}
		return ""
	}
	if Unreachable(e.Err) && e.API != "" {
		return fmt.Sprintf("no %s answers at %s: start it, or give --host where it runs", e.API, e.Host)
	}
	if Unreachable(e.Err) {
		return fmt.Sprintf("no Ollama server answers at %s: start it with `ollama serve`, or set OLLAMA_HOST to where it runs", e.Host)
	}
	return ""
}

func (e *ModelError) noToolsHint() string {
	return fmt.Sprintf("the model %s cannot take tools: pick a model with tool support (for example qwen3:0.6b or llama3.1:8b; `ollama show MODEL` lists its capabilities)", e.Model)
}

// WithHint returns err followed, on a line of its own, by what to do
// about the *ModelError it wraps (Hint), when something specific applies;
// otherwise err itself.
func WithHint(err error) error {
	var me *ModelError
	if errors.As(err, &me) {
		if hint := me.Hint(); hint != "" {
			return fmt.Errorf("%w\n  → %s", err, hint)
		}
	}
	return err
}

// Unreachable reports whether err means that no server answered: connection
// refused or reset, unknown host, or a dial timeout.
func Unreachable(err error) bool {
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EHOSTUNREACH) {
		return true
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return true
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	return false
}
