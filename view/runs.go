package view

import (
	"net/http"

	"github.com/benchhq/bench/results"
)

// runsBody is the runs page: every stored run, newest first.
type runsBody struct {
	Runs []results.RunListing
	// Doubtful is set when a run is unisolated or its isolation unknown.
	Doubtful bool
}

func (s *Server) runsPage(w *page, r *http.Request, store *results.Store) error {
	runs, err := store.RunList(r.Context())
	if err != nil {
		return err
	}
	b := runsBody{Runs: runs}
	for _, r := range runs {
		b.Doubtful = b.Doubtful || r.Isolation == "none" || r.Isolation == ""
	}
	return s.render(w, "runs", "Runs", b)
}
