package main

import (
	"context"
	"encoding/json"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/results"
)

// What the generator asks of the store and the agent's types, in one file:
// to measure an older bench, whose store writes one attempt per
// transaction, this is the file to adapt.

// save stores attempts in one transaction.
func save(ctx context.Context, s *results.Store, as []*results.Attempt) error {
	_, err := s.SaveAttempts(ctx, as)
	return err
}

// encodeToolLists encodes each arm's tools once, as the agent loop does.
func encodeToolLists(lists []armTools) error {
	for i := range lists {
		b, err := json.Marshal(lists[i].tools)
		if err != nil {
			return err
		}
		lists[i].json = b
	}
	return nil
}

// setToolsJSON gives the trajectory its encoded tool list, as the loop does.
func setToolsJSON(tr *agent.Trajectory, b []byte) { tr.ToolsJSON = b }
