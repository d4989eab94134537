// Package endpoint is the set of model servers a run talks to: several
// Ollama or OpenAI-compatible servers, each with its number of parallel
// slots. A Pool hands each attempt an endpoint with a free slot, takes an
// endpoint that fails out of service for a while (its attempts are then
// retried on the others, as infrastructure failures), probes it until it
// answers again, and checks before a run that every endpoint serves the
// same model under the run's model name.
package endpoint

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/benchhq/bench/agent"
)

// API is the protocol an endpoint speaks.
type API string

// The APIs bench speaks.
const (
	// Ollama is Ollama's native /api/chat (the default).
	Ollama API = "ollama"
	// OpenAI is /v1/chat/completions of an OpenAI-compatible server.
	OpenAI API = "openai"
)

// ParseAPI reads --api: "ollama" (or "") and "openai".
func ParseAPI(s string) (API, error) {
	switch s {
	case "", string(Ollama):
		return Ollama, nil
	case string(OpenAI):
		return OpenAI, nil
	}
	return "", fmt.Errorf("unknown API %q (expected ollama or openai)", s)
}

// Spec is one endpoint as the operator gives it: --host URL=SLOTS, or a
// run file's [[endpoints]] entry.
type Spec struct {
	// URL is the server's address; "" (Ollama only) is $OLLAMA_HOST or
	// Ollama's default address.
	URL string `toml:"url"`
	// Slots is how many attempts the endpoint serves at once; 0 sets no
	// bound of its own (the run's concurrency bounds it).
	Slots int `toml:"slots"`
}

// ParseHost reads one --host value: "URL" or "URL=SLOTS", e.g.
// "http://gpu1:11434=4".
func ParseHost(v string) (Spec, error) {
	s := Spec{URL: v}
	if i := strings.LastIndex(v, "="); i >= 0 {
		n, err := strconv.Atoi(v[i+1:])
		if err != nil || n < 1 {
			return Spec{}, fmt.Errorf("%q: expected URL or URL=SLOTS with SLOTS a positive number, e.g. http://gpu1:11434=4", v)
		}
		s = Spec{URL: v[:i], Slots: n}
	}
	if s.URL == "" {
		return Spec{}, fmt.Errorf("%q: the URL is missing, e.g. http://gpu1:11434=4", v)
	}
	return s, nil
}

// String is the spec as --host takes it.
func (s Spec) String() string {
	if s.Slots > 0 {
		return fmt.Sprintf("%s=%d", s.URL, s.Slots)
	}
	return s.URL
}

// Endpoint is one model server: its client, its slots, and how to check
// its health and the model it serves. Its state belongs to its Pool.
type Endpoint struct {
	// Name is the server's URL, as stored with each turn.
	Name string
	// API is the protocol it speaks.
	API API
	// Slots bounds the attempts it serves at once; 0 means no bound.
	Slots int
	// Model is its chat client.
	Model agent.Model

	hc *http.Client
	// probe checks that the server answers; identify says which weights
	// it serves under a name. Both nil for an endpoint made by Of.
	probe    func(context.Context, *Endpoint) error
	identify func(context.Context, *Endpoint, string) (string, error)

	// Guarded by the pool's lock.
	busy     int
	failures int
	down     bool
	probing  bool
}

// New makes the endpoint of spec for api, with its client. A nil hc is
// a client that keeps a connection open per slot (Go's default keeps 2
// per host, and opens a new one for every request beyond them).
func New(api API, spec Spec, hc *http.Client) (*Endpoint, error) {
	if hc == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = max(spec.Slots, 8)
		hc = &http.Client{Transport: t}
	}
	if spec.Slots < 0 {
		return nil, fmt.Errorf("endpoint %s: slots: expected 0 or more, got %d", spec.URL, spec.Slots)
	}
	switch api {
	case Ollama, "":
		m, err := agent.NewOllama(spec.URL, hc)
		if err != nil {
			return nil, err
		}
		return &Endpoint{Name: m.Endpoint(), API: Ollama, Slots: spec.Slots, Model: m, hc: hc, probe: ollamaProbe, identify: ollamaIdentify}, nil
	case OpenAI:
		if spec.URL == "" {
			return nil, fmt.Errorf("an OpenAI-compatible server has no default address: give its URL, e.g. --host http://127.0.0.1:8000")
		}
		m, err := agent.NewOpenAI(spec.URL, hc)
		if err != nil {
			return nil, err
		}
		return &Endpoint{Name: m.Endpoint(), API: OpenAI, Slots: spec.Slots, Model: m, hc: hc, probe: openAIProbe, identify: openAIIdentify}, nil
	}
	return nil, fmt.Errorf("endpoint %s: unknown API %q", spec.URL, api)
}

// Of makes an endpoint of a Model that is not a server bench knows how to
// probe or ask about its models (a library user's own Model): it is never
// checked, and comes back by itself after its time out of service.
func Of(name string, m agent.Model, slots int) *Endpoint {
	return &Endpoint{Name: name, Model: m, Slots: slots}
}
