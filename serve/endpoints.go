package serve

import (
	"net/url"
	"strings"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/endpoint"
)

// pool is the endpoint pool a request's attempts run on: the service's
// whole pool, or, when the request names endpoints, a view of it over
// those (endpoint.Pool.Subset), which shares their slots and health with
// every other request. A request only ever chooses among the endpoints
// the operator gave: a name or URL that is not one of them is refused,
// never dialled.
func (s *Service) pool(req *Request) (*endpoint.Pool, error) {
	if req.Endpoints == nil {
		return s.cfg.Pool, nil
	}
	if len(req.Endpoints) == 0 {
		return nil, badf("endpoints: empty (leave it out to run on every endpoint of the service: %s)", s.endpointNames())
	}
	var eps []*endpoint.Endpoint
	given := map[*endpoint.Endpoint]string{}
	for i, v := range req.Endpoints {
		e := s.endpointOf(v)
		if e == nil {
			return nil, badf("endpoints[%d]: %q is not an endpoint of this service (its endpoints: %s); a request chooses among the endpoints the service was started with, never a new address", i, v, s.endpointNames())
		}
		if was, ok := given[e]; ok {
			return nil, badf("endpoints[%d]: %q is the endpoint %s, given already as %q", i, v, e.Name, was)
		}
		given[e] = v
		eps = append(eps, e)
	}
	view, err := s.cfg.Pool.Subset(eps...)
	if err != nil {
		return nil, badf("endpoints: %v", err) // cannot happen: they are the pool's own
	}
	return view, nil
}

// endpointOf is the service's endpoint that v names: by its name (the
// URL bench stores with each turn), or by its URL written another way
// ("gpu1:11434" for Ollama's http://gpu1:11434, a trailing "/" or "/v1"
// for an OpenAI-compatible server), read as --host reads it.
func (s *Service) endpointOf(v string) *endpoint.Endpoint {
	if e := s.cfg.Pool.Named(v); e != nil {
		return e
	}
	for _, e := range s.cfg.Pool.Endpoints() {
		if sameURL(e, v) {
			return e
		}
	}
	return nil
}

// sameURL reports whether v, read as e's API reads a server address,
// is e's address.
func sameURL(e *endpoint.Endpoint, v string) bool {
	if strings.TrimSpace(v) == "" {
		return false // Ollama's "" is $OLLAMA_HOST: never a request's to choose
	}
	switch e.API {
	case endpoint.Ollama:
		u, err := agent.ParseHost(v)
		return err == nil && u.String() == e.Name
	case endpoint.OpenAI:
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return false
		}
		// As agent.NewOpenAI names a server: its root, without "/v1".
		return strings.TrimSuffix(strings.TrimSuffix(u.String(), "/"), "/v1") == e.Name
	}
	return false // an endpoint made by endpoint.Of has only its name
}

// endpointNames lists the service's endpoints, for messages.
func (s *Service) endpointNames() string {
	var names []string
	for _, e := range s.cfg.Pool.Endpoints() {
		names = append(names, e.Name)
	}
	return strings.Join(names, ", ")
}
