package view

import (
	"context"
	"slices"
	"sync"

	"github.com/benchhq/bench/results"
)

// reportCache keeps the reports of the runs last shown, each with the
// version of its run (results.Store.RunVersion) it was computed at: a
// report is computed again only when its run changed. At 100,000 attempts
// a report takes most of a second and checking the version a few tens of
// milliseconds, so browsing a run (filters, pages, comparisons) does not
// pay for the report each time.
type reportCache struct {
	mu      sync.Mutex
	entries map[string]cachedReport
	// recent holds run ids, the most recent last.
	recent []string
}

type cachedReport struct {
	version string
	rr      *results.RunReport
}

// cachedReports is how many runs' reports are kept.
const cachedReports = 4

// report returns the report of run, from the cache when the run has not
// changed since. The report is shared: callers must not modify it.
func (c *reportCache) report(ctx context.Context, store *results.Store, run string) (*results.RunReport, error) {
	version, err := store.RunVersion(ctx, run)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	e, ok := c.entries[run]
	c.mu.Unlock()
	if ok && e.version == version {
		c.touch(run, e)
		return e.rr, nil
	}
	rr, err := store.ReportWithAttempts(ctx, run, results.ReportOptions{})
	if err != nil {
		return nil, err
	}
	c.touch(run, cachedReport{version: version, rr: rr})
	return rr, nil
}

// touch stores e as run's entry, the most recent, dropping the oldest.
func (c *reportCache) touch(run string, e cachedReport) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[string]cachedReport{}
	}
	c.entries[run] = e
	c.recent = append(slices.DeleteFunc(c.recent, func(r string) bool { return r == run }), run)
	for len(c.recent) > cachedReports {
		delete(c.entries, c.recent[0])
		c.recent = c.recent[1:]
	}
}

// clear forgets every report (the file was opened again).
func (c *reportCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries, c.recent = nil, nil
}
