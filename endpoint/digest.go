package endpoint

import (
	"context"
	"fmt"
)

// Identify asks the endpoint which weights it serves under the name model
// now: Ollama's digest, or the identity an OpenAI-compatible server gives
// in /v1/models (see Pool.Check); "" when it cannot tell (an endpoint
// made by Of). A trainer that updates a server's weights between steps
// is told apart by it, attempt by attempt.
func (e *Endpoint) Identify(ctx context.Context, model string) (string, error) {
	if e.identify == nil {
		return "", nil
	}
	id, err := e.identify(ctx, e, model)
	if err != nil {
		return "", fmt.Errorf("endpoint %s: %w", e.Name, err)
	}
	return id, nil
}

// Named returns the pool's endpoint of that name, or nil.
func (p *Pool) Named(name string) *Endpoint {
	for _, e := range p.eps {
		if e.Name == name {
			return e
		}
	}
	return nil
}
