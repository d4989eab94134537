package agent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"

	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/envconfig"
)

// Model is a chat model: one request in, one complete reply out.
type Model interface {
	Chat(ctx context.Context, req *api.ChatRequest) (*api.ChatResponse, error)
}

// Ollama is the model client for an Ollama server's native /api/chat, built
// on the official api package.
type Ollama struct {
	client *api.Client
	host   string
}

// NewOllama returns a client for the Ollama server at base (for example
// "http://127.0.0.1:11434"). An empty base honours OLLAMA_HOST and falls back
// to Ollama's default address, as the ollama command does.
func NewOllama(base string, hc *http.Client) (*Ollama, error) {
	if hc == nil {
		hc = &http.Client{}
	}
	if base == "" {
		// envconfig.Host is what api.ClientFromEnvironment uses; taking it
		// here keeps our own *http.Client.
		u := envconfig.Host()
		return &Ollama{client: api.NewClient(u, hc), host: u.String()}, nil
	}
	u, err := ParseHost(base)
	if err != nil {
		return nil, err
	}
	return &Ollama{client: api.NewClient(u, hc), host: u.String()}, nil
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
	stream := false
	r := *req
	r.Stream = &stream
	var out *api.ChatResponse
	err := o.client.Chat(ctx, &r, func(resp api.ChatResponse) error {
		if out == nil {
			out = &resp
			return nil
		}
		// A streamed reply (a server that ignores stream=false): accumulate.
		out.Message.Content += resp.Message.Content
		out.Message.Thinking += resp.Message.Thinking
		out.Message.ToolCalls = append(out.Message.ToolCalls, resp.Message.ToolCalls...)
		if resp.Done {
			out.Done, out.DoneReason, out.Metrics = true, resp.DoneReason, resp.Metrics
		}
		return nil
	})
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
	var se api.StatusError
	if errors.As(e.Err, &se) {
		msg := strings.ToLower(se.ErrorMessage)
		switch {
		case se.StatusCode == http.StatusNotFound && strings.Contains(msg, "not found"):
			return fmt.Sprintf("the model %s is not pulled: run `ollama pull %s`", e.Model, e.Model)
		case se.StatusCode == http.StatusBadRequest && strings.Contains(msg, "does not support tools"):
			return fmt.Sprintf("the model %s cannot take tools: pick a model with tool support (for example qwen3:0.6b or llama3.1:8b; `ollama show MODEL` lists its capabilities)", e.Model)
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
