package view

import (
	"context"
	"slices"
	"sync"

	"github.com/benchhq/bench/results"
)

// reportCache keeps what the view read of the runs last shown, each with
// the version of its run (results.Store.RunVersion, one row's read) it was
// read at: it is read again only when its run changed.
//
// A run's pages are laid out from its summary (results.RunSummary): the
// one the store keeps for a stopped run, one row whatever the run's size,
// or, for a run still running (or stored before bench kept summaries),
// one computed here from every attempt, which at 100,000 attempts takes
// about a second. The compare page reads the whole report and attempts
// (report), computed once per version too.
type reportCache struct {
	mu      sync.Mutex
	entries map[string]cachedReport
	// recent holds run ids, the most recent last.
	recent []string
}

type cachedReport struct {
	version string
	run     *results.Run
	sum     *results.RunSummary
	// rr is the whole report and attempts, when they were read.
	rr *results.RunReport
}

// cachedReports is how many runs' reports are kept.
const cachedReports = 4

// summary returns the run and its summary, from the cache when the run
// has not changed since. Both are shared: callers must not modify them.
func (c *reportCache) summary(ctx context.Context, store *results.Store, runID string) (*results.Run, *results.RunSummary, error) {
	version, err := store.RunVersion(ctx, runID)
	if err != nil {
		return nil, nil, err
	}
	if e, ok := c.get(runID, version); ok && e.sum != nil {
		return e.run, e.sum, nil
	}
	sum, version, err := store.StoredRunSummary(ctx, runID)
	if err != nil {
		return nil, nil, err
	}
	if sum != nil {
		run, err := store.GetRun(ctx, runID)
		if err != nil {
			return nil, nil, err
		}
		c.touch(runID, cachedReport{version: version, run: run, sum: sum})
		return run, sum, nil
	}
	rr, err := store.ReportWithAttempts(ctx, runID, results.ReportOptions{})
	if err != nil {
		return nil, nil, err
	}
	sum = results.Summarize(rr)
	c.touch(runID, cachedReport{version: version, run: rr.Run, sum: sum, rr: rr})
	return rr.Run, sum, nil
}

// report returns the whole report of run with its attempts, from the
// cache when the run has not changed since. The report is shared:
// callers must not modify it.
func (c *reportCache) report(ctx context.Context, store *results.Store, run string) (*results.RunReport, error) {
	version, err := store.RunVersion(ctx, run)
	if err != nil {
		return nil, err
	}
	e, ok := c.get(run, version)
	if ok && e.rr != nil {
		return e.rr, nil
	}
	rr, err := store.ReportWithAttempts(ctx, run, results.ReportOptions{})
	if err != nil {
		return nil, err
	}
	c.touch(run, cachedReport{version: version, run: rr.Run, sum: results.Summarize(rr), rr: rr})
	return rr, nil
}

// get returns run's entry if it was read at version, marking it the most
// recent.
func (c *reportCache) get(run, version string) (cachedReport, bool) {
	c.mu.Lock()
	e, ok := c.entries[run]
	c.mu.Unlock()
	if !ok || e.version != version {
		return cachedReport{}, false
	}
	c.touch(run, e)
	return e, true
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
