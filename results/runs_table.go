package results

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
)

// WriteRunStats writes the list of runs as `bench runs` shows it, within
// TableWidth columns: id, model, suite (cut in the middle when too long),
// status ("stale" for a run marked running that no process runs), attempts
// done of planned, passes and infrastructure errors.
func WriteRunStats(w io.Writer, runs []RunStat) error {
	g := &grid{head: []string{"RUN", "MODEL", "SUITE", "STATUS", "DONE", "PASS", "INFRA"}, left: 4, flex: []int{1, 2}}
	for _, r := range runs {
		status := r.Status
		if r.Stale {
			status = "stale"
		}
		if r.Shard != "" {
			status += " (shard " + r.Shard + ")"
		}
		g.rows = append(g.rows, []string{r.ID, r.Model, r.Suite, status, fmt.Sprintf("%d/%d", r.Finished, r.Planned()),
			strconv.Itoa(r.Passes), strconv.Itoa(r.InfraErrors)})
	}
	var b bytes.Buffer
	g.write(&b, false)
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("write runs: %w", err)
	}
	return nil
}
