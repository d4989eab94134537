package endpoint

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/benchhq/bench/agent"
)

// checkTimeout bounds one probe or one question about a server's models.
const checkTimeout = 10 * time.Second

// get sends one small request to the endpoint and decodes its JSON reply
// into out (when not nil); the error says what went wrong in words.
func (e *Endpoint) get(parent context.Context, method, path string, body, out any) (int, error) {
	ctx, cancel := context.WithTimeout(parent, checkTimeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(e.Name, "/")+path, rd)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := e.hc.Do(req)
	if err != nil {
		if agent.Unreachable(err) {
			return 0, fmt.Errorf("no server answers at %s: %w", e.Name, err)
		}
		return 0, e.silent(ctx, parent, method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return resp.StatusCode, e.silent(ctx, parent, method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		return resp.StatusCode, fmt.Errorf("%s %s: HTTP %d: %s", method, path, resp.StatusCode, strings.TrimSpace(string(data)))
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return resp.StatusCode, fmt.Errorf("%s %s: %w", method, path, err)
		}
	}
	return resp.StatusCode, nil
}

// silent words err, of a check whose own bound (checkTimeout) ran out
// while parent did not: a server that accepts the connection and never
// answers.
func (e *Endpoint) silent(ctx, parent context.Context, method, path string, err error) error {
	if ctx.Err() != nil && parent.Err() == nil {
		return fmt.Errorf("the model server at %s accepted %s %s but gave no reply within %s: it may be stuck or overloaded (restart it, e.g. `ollama serve`, or point --host at one that answers)",
			e.Name, method, path, checkTimeout)
	}
	return err
}

func ollamaProbe(ctx context.Context, e *Endpoint) error {
	_, err := e.get(ctx, http.MethodGet, "/api/version", nil, nil)
	return err
}

func openAIProbe(ctx context.Context, e *Endpoint) error {
	_, err := e.get(ctx, http.MethodGet, "/v1/models", nil, nil)
	return err
}

// ollamaIdentify is the digest Ollama lists for model in /api/tags. A
// model it does not list is asked about with /api/show: 404 means it is
// not pulled there; an answer means a model tags does not list (a remote
// one), whose digest is unknown ("").
func ollamaIdentify(ctx context.Context, e *Endpoint, model string) (string, error) {
	var tags struct {
		Models []struct {
			Name   string `json:"name"`
			Model  string `json:"model"`
			Digest string `json:"digest"`
		} `json:"models"`
	}
	if _, err := e.get(ctx, http.MethodGet, "/api/tags", nil, &tags); err != nil {
		return "", err
	}
	for _, m := range tags.Models {
		for _, n := range []string{m.Name, m.Model} {
			if n == model || (!strings.Contains(model, ":") && n == model+":latest") {
				return m.Digest, nil
			}
		}
	}
	status, err := e.get(ctx, http.MethodPost, "/api/show", map[string]string{"model": model}, nil)
	if status == http.StatusNotFound {
		return "", &NotPulledError{Model: model, Endpoint: e.Name}
	}
	return "", err
}

// openAIIdentify finds model in GET /v1/models and returns what tells its
// weights apart: vLLM's and SGLang's root (the weights' path or
// repository) and max_model_len, llama.cpp's meta (parameters, size,
// vocabulary). LM Studio and Ollama's /v1 give none of these: "" (unknown).
func openAIIdentify(ctx context.Context, e *Endpoint, model string) (string, error) {
	var list struct {
		Data []struct {
			ID          string          `json:"id"`
			Root        string          `json:"root"`
			MaxModelLen int             `json:"max_model_len"`
			Meta        json.RawMessage `json:"meta"`
		} `json:"data"`
	}
	if _, err := e.get(ctx, http.MethodGet, "/v1/models", nil, &list); err != nil {
		return "", err
	}
	var names []string
	for _, m := range list.Data {
		if m.ID != model {
			names = append(names, m.ID)
			continue
		}
		var parts []string
		if m.Root != "" {
			parts = append(parts, "root="+m.Root)
		}
		if m.MaxModelLen > 0 {
			parts = append(parts, fmt.Sprintf("max_model_len=%d", m.MaxModelLen))
		}
		if len(m.Meta) > 0 && string(m.Meta) != "null" {
			parts = append(parts, "meta="+string(m.Meta))
		}
		return strings.Join(parts, " "), nil
	}
	return "", fmt.Errorf("%s does not serve a model named %s (its /v1/models lists: %s)", e.Name, model, strings.Join(names, ", "))
}

// Check asks every endpoint which weights it serves under the name model,
// concurrently, before a run starts. An endpoint that does not answer or
// does not have the model is an error naming it. Endpoints that serve
// different weights under the name (digests differ) are an error unless
// allowMixed. It returns the identity to store with the run: the digest
// (Ollama) or fingerprint (OpenAI) all endpoints share, "" when no
// endpoint could tell, or with allowMixed the distinct ones joined by
// " | "; and warnings, such as endpoints whose identity is unknown.
func (p *Pool) Check(ctx context.Context, model string, allowMixed bool) (identity string, warnings []string, err error) {
	ids := make([]string, len(p.eps))
	errs := make([]error, len(p.eps))
	var wg sync.WaitGroup
	for i, e := range p.eps {
		if e.identify == nil {
			continue
		}
		wg.Go(func() { ids[i], errs[i] = e.identify(ctx, e, model) })
	}
	wg.Wait()
	var known, unknown []string
	byID := map[string][]string{}
	for i, e := range p.eps {
		if errs[i] != nil {
			return "", nil, fmt.Errorf("endpoint %s: %w", e.Name, errs[i])
		}
		if e.identify == nil {
			continue
		}
		if ids[i] == "" {
			unknown = append(unknown, e.Name)
			continue
		}
		if _, ok := byID[ids[i]]; !ok {
			known = append(known, ids[i])
		}
		byID[ids[i]] = append(byID[ids[i]], e.Name)
	}
	if len(known) > 1 {
		var what []string
		for _, id := range known {
			what = append(what, fmt.Sprintf("%s serves %s", strings.Join(byID[id], ", "), short(id)))
		}
		msg := fmt.Sprintf("the endpoints serve different models under the name %s: %s", model, strings.Join(what, "; "))
		if !allowMixed {
			return "", nil, fmt.Errorf("%s: put the same model on every endpoint (ollama pull, or the same weights for vLLM), or pass --allow-mixed-models to run anyway", msg)
		}
		warnings = append(warnings, msg+" (allowed by --allow-mixed-models: attempts are not comparable across endpoints)")
		slices.Sort(known)
		return strings.Join(known, " | "), warnings, nil
	}
	if len(unknown) > 0 && len(p.eps) > 1 {
		warnings = append(warnings, fmt.Sprintf("cannot check that every endpoint serves the same %s: %s gives no digest or weights path for it", model, strings.Join(unknown, ", ")))
	}
	if len(known) == 1 {
		return known[0], warnings, nil
	}
	return "", warnings, nil
}

// short abbreviates an Ollama digest for messages.
func short(id string) string {
	if len(id) == 64 && !strings.ContainsAny(id, " =") {
		return id[:12]
	}
	return id
}
