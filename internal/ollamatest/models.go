package ollamatest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
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
	s.catalog.RLock()
	for _, n := range slices.Sorted(maps.Keys(s.models)) {
		out.Models = append(out.Models, model{Name: n, Model: n, Digest: s.digest(n)})
	}
	s.catalog.RUnlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}
