package ollamatest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
)

// WithDigest makes model pulled with this digest in /api/tags: two fake
// servers that give one name different digests serve different weights.
func WithDigest(model, digest string) Option {
	return func(s *Server) {
		s.models[model] = true
		s.digests[model] = digest
	}
}

// WithParallel makes the server answer at most n chats at once, as
// OLLAMA_NUM_PARALLEL does; the others queue. With a Delay per reply, a
// server's throughput is then at most n / Delay.
func WithParallel(n int) Option {
	return func(s *Server) { s.slots = make(chan struct{}, n) }
}

// Digest is the digest /api/tags gives a model that WithDigest did not set.
func Digest(model string) string {
	h := sha256.Sum256([]byte(model))
	return hex.EncodeToString(h[:])
}

func (s *Server) digest(model string) string {
	if d, ok := s.digests[model]; ok {
		return d
	}
	return Digest(model)
}

// tags answers GET /api/tags: the pulled models, each "name:tag" as Ollama
// lists them. With every model pulled (no WithModels), the list is empty,
// as no name is known.
func (s *Server) tags(w http.ResponseWriter, r *http.Request) {
	type model struct {
		Name   string `json:"name"`
		Model  string `json:"model"`
		Digest string `json:"digest"`
	}
	out := struct {
		Models []model `json:"models"`
	}{Models: []model{}}
	for _, n := range slices.Sorted(maps.Keys(s.models)) {
		out.Models = append(out.Models, model{Name: n, Model: n, Digest: s.digest(n)})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

// show answers POST /api/show: 404 for a model that is not pulled, as
// Ollama does, and otherwise its capabilities.
func (s *Server) show(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model string `json:"model"`
		Name  string `json:"name"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	name := req.Model
	if name == "" {
		name = req.Name
	}
	if len(s.models) > 0 && !s.models[name] {
		writeError(w, http.StatusNotFound, fmt.Sprintf("model '%s' not found", name))
		return
	}
	caps := []string{"completion"}
	if !s.noTools[name] {
		caps = append(caps, "tools")
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"capabilities": caps, "details": map[string]any{"format": "gguf"}})
}
