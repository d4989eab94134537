package ollamatest

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/types/model"
)

// Pullable is a model the fake server's registry offers to /api/pull.
// A pull streams what Ollama v0.17.4 streams: "pulling manifest", then
// for each layer "pulling <digest[7:19]>" with total and completed
// bytes, "verifying sha256 digest", "writing manifest" and "success";
// the model is then pulled (listed by /api/tags with Digest, answered
// by /api/show and /api/chat).
type Pullable struct {
	// Name is the model's name, as the client asks for it.
	Name string
	// Digest is what /api/tags gives the model once pulled (default
	// Digest(Name)).
	Digest string
	// Layers are the sizes of the model's layers in bytes (default one
	// layer of 1 MB).
	Layers []int64
	// Step is how many bytes each progress update adds (default a tenth
	// of each layer).
	Step int64
	// Delay holds back each progress update (a slow download).
	Delay time.Duration
	// FailAfter, when positive, ends the pull once this many bytes have
	// been reported: with {"error": Error} on the stream (HTTP 200, as a
	// real server reports a failure midway, e.g. a full disk), or, when
	// Error is "", by closing the connection without a word.
	FailAfter int64
	Error     string
}

// ManifestMissing is what Ollama streams, after "pulling manifest", for a
// name that is valid but that the registry does not have.
const ManifestMissing = "pull model manifest: file does not exist"

// WithPullable gives the server a registry of models that /api/pull
// fetches. The server's list of pulled models is then strict: only what
// WithModels (or WithDigest, WithoutTools) names and what was pulled
// since, even when that is nothing.
func WithPullable(models ...Pullable) Option {
	return func(s *Server) {
		s.strict = true
		for _, m := range models {
			s.registry[m.Name] = m
		}
	}
}

// Pulls is how many pull requests the server received for name.
func (s *Server) Pulls(name string) int {
	s.catalog.RLock()
	defer s.catalog.RUnlock()
	return s.pulls[name]
}

// has reports whether a model is pulled.
func (s *Server) has(name string) bool {
	s.catalog.RLock()
	defer s.catalog.RUnlock()
	if len(s.models) == 0 && !s.strict {
		return true
	}
	return s.models[name]
}

// pull answers POST /api/pull as Ollama does: 400 {"error":"invalid model
// name"} for a name it cannot parse, else a stream of progress lines
// (application/x-ndjson, HTTP 200) that may end with an error line.
func (s *Server) pull(w http.ResponseWriter, r *http.Request) {
	var req api.PullRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	name := cmp.Or(req.Model, req.Name)
	if !model.ParseName(name).IsValid() {
		writeError(w, http.StatusBadRequest, "invalid model name")
		return
	}
	s.catalog.Lock()
	s.pulls[name]++
	m, ok := s.registry[name]
	s.catalog.Unlock()

	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	enc := json.NewEncoder(w)
	flusher, _ := w.(http.Flusher)
	send := func(v any) bool {
		if err := enc.Encode(v); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return r.Context().Err() == nil
	}
	if !send(api.ProgressResponse{Status: "pulling manifest"}) {
		return
	}
	if !ok {
		send(map[string]string{"error": ManifestMissing})
		return
	}
	layers := m.Layers
	if len(layers) == 0 {
		layers = []int64{1 << 20}
	}
	var sent int64
	for i, size := range layers {
		h := sha256.Sum256(fmt.Appendf(nil, "%s/%d", name, i))
		digest := "sha256:" + hex.EncodeToString(h[:])
		step := m.Step
		if step <= 0 {
			step = max(size/10, 1)
		}
		for done := int64(0); done < size; {
			prev := done
			done = min(done+step, size)
			sent += done - prev
			if m.FailAfter > 0 && sent >= m.FailAfter {
				if m.Error == "" {
					Hangup(w)
					return
				}
				send(map[string]string{"error": m.Error})
				return
			}
			if !Wait(r, time.Now(), m.Delay) {
				return
			}
			if !send(api.ProgressResponse{Status: "pulling " + digest[7:19], Digest: digest, Total: size, Completed: done}) {
				return
			}
		}
	}
	for _, st := range []string{"verifying sha256 digest", "writing manifest"} {
		if !send(api.ProgressResponse{Status: st}) {
			return
		}
	}
	s.catalog.Lock()
	s.models[name] = true
	if m.Digest != "" {
		s.digests[name] = m.Digest
	}
	s.catalog.Unlock()
	send(api.ProgressResponse{Status: "success"})
}
