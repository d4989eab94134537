package view

import (
	"net/http"

	"github.com/benchhq/bench/results"
)

// runsBody is the runs page: every stored run, newest first.
type runsBody struct {
	Runs []results.RunListing
}

func (s *Server) runsPage(w *page, r *http.Request, store *results.Store) error {
	runs, err := store.RunList(r.Context())
	if err != nil {
		return err
	}
	return s.render(w, "runs", "Runs", runsBody{Runs: runs})
}
