package view

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/results"
)

// filter selects the attempts a run page shows, from the URL: arm, task,
// outcome and stop (each repeatable or comma-separated; a value matches
// when it is any of them) and page.
type filter struct {
	Arms     []string
	Tasks    []string
	Outcomes []string
	Stops    []string
	// Page counts pages from 1.
	Page int
}

// filterKeys are the query parameters a filter takes.
func filterKeys() []string { return []string{"arm", "task", "outcome", "stop", "page"} }

// outcomes are the values of the outcome filter.
func outcomes() []string { return []string{outcomePass, outcomeFail, outcomeInfra, outcomeCanceled} }

// stopReasons are the stop reasons the agent loop gives.
func stopReasons() []string {
	return []string{string(agent.StopAnswered), string(agent.StopReplyCut), string(agent.StopMaxTurns),
		string(agent.StopMaxTokens), string(agent.StopWallTime), string(agent.StopInfraError), string(agent.StopCanceled)}
}

// knownStops are the agent loop's stop reasons and any other that the
// run's attempts hold (a later bench's): stored are those of the run
// (results.RunSummary.StopReasons).
func knownStops(stored []string) []string {
	stops := stopReasons()
	for _, s := range stored {
		if s != "" && !slices.Contains(stops, s) {
			stops = append(stops, s)
		}
	}
	return stops
}

// filterForm is the form that sets a filter: where it goes, the choices
// and the filter in force.
type filterForm struct {
	Action                       string
	Arms, Tasks, Outcomes, Stops []string
	F                            filter
}

func newFilterForm(action string, run *results.Run, stops []string, f filter) filterForm {
	ff := filterForm{Action: action, Outcomes: outcomes(), Stops: knownStops(stops), F: f}
	for _, a := range run.Arms {
		ff.Arms = append(ff.Arms, a.Name)
	}
	for _, t := range run.Tasks {
		ff.Tasks = append(ff.Tasks, t.ID)
	}
	return ff
}

// Has reports whether the filter holds value v for key.
func (f filter) Has(key, v string) bool {
	switch key {
	case "arm":
		return slices.Contains(f.Arms, v)
	case "task":
		return slices.Contains(f.Tasks, v)
	case "outcome":
		return slices.Contains(f.Outcomes, v)
	case "stop":
		return slices.Contains(f.Stops, v)
	}
	return false
}

// parseFilter reads a filter from q for a run whose attempts stopped for
// the reasons stops (results.RunSummary.StopReasons); a key it
// does not know, an arm or task the run lacks, an unknown outcome or
// stop reason, or a page that is not a positive number is an error that
// says what was expected. extra are other keys the page takes.
func parseFilter(q url.Values, run *results.Run, stops []string, extra ...string) (filter, error) {
	f := filter{Page: 1}
	for k := range q {
		if keys := append(filterKeys(), extra...); !slices.Contains(keys, k) {
			return f, badRequest("unknown parameter %q: this page takes %s", k, strings.Join(keys, ", "))
		}
	}
	arms := make([]string, len(run.Arms))
	for i, a := range run.Arms {
		arms[i] = a.Name
	}
	tasks := make([]string, len(run.Tasks))
	for i, t := range run.Tasks {
		tasks[i] = t.ID
	}
	stops = knownStops(stops)
	var err error
	if f.Arms, err = listParam(q, "arm", arms, "an arm of run "+run.ID); err != nil {
		return f, err
	}
	if f.Tasks, err = listParam(q, "task", tasks, "a task of run "+run.ID); err != nil {
		return f, err
	}
	if f.Outcomes, err = listParam(q, "outcome", outcomes(), "an outcome"); err != nil {
		return f, err
	}
	if f.Stops, err = listParam(q, "stop", stops, "a stop reason"); err != nil {
		return f, err
	}
	if p := q.Get("page"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 {
			return f, badRequest("page %q: expected a page number, 1 or more", p)
		}
		f.Page = n
	}
	return f, nil
}

// listParam reads the values of key (repeated or comma-separated), each
// of which must be one of valid.
func listParam(q url.Values, key string, valid []string, what string) ([]string, error) {
	var out []string
	for _, v := range q[key] {
		for _, x := range strings.Split(v, ",") {
			x = strings.TrimSpace(x)
			if x == "" {
				continue
			}
			if !slices.Contains(valid, x) {
				return nil, badRequest("%s %q is not %s: expected one of %s", key, x, what, listOf(valid))
			}
			if !slices.Contains(out, x) {
				out = append(out, x)
			}
		}
	}
	return out, nil
}

// listOf shows a list of names, shortened past 20.
func listOf(names []string) string {
	if len(names) > 20 {
		return strings.Join(names[:20], ", ") + fmt.Sprintf(" and %d more", len(names)-20)
	}
	return strings.Join(names, ", ")
}

// match reports whether the filter keeps attempt m (the page aside).
func (f filter) match(m results.AttemptMetrics) bool {
	return f.ArmShown(m.Key.Arm) && f.TaskShown(m.Key.Task) &&
		(len(f.Outcomes) == 0 || slices.Contains(f.Outcomes, outcomeOf(m.Status, m.Reward))) &&
		(len(f.Stops) == 0 || slices.Contains(f.Stops, m.StopReason))
}

func (f filter) ArmShown(arm string) bool { return len(f.Arms) == 0 || slices.Contains(f.Arms, arm) }
func (f filter) TaskShown(task string) bool {
	return len(f.Tasks) == 0 || slices.Contains(f.Tasks, task)
}

// query is the filter as the store's queries take it.
func (f filter) query() results.AttemptFilter {
	return results.AttemptFilter{Arms: f.Arms, Tasks: f.Tasks, StopReasons: f.Stops, Outcomes: f.Outcomes}
}

// countIn counts the attempts the filter keeps among those counted in a
// run's summary; false when it selects tasks, which the summary does not
// count apart.
func (f filter) countIn(sum *results.RunSummary) (int, bool) {
	if len(f.Tasks) > 0 {
		return 0, false
	}
	n := 0
	for _, c := range sum.Counts {
		var reward *int
		if c.Passed {
			reward = new(int)
			*reward = 1
		}
		if f.ArmShown(c.Arm) && (len(f.Outcomes) == 0 || slices.Contains(f.Outcomes, outcomeOf(c.Status, reward))) &&
			(len(f.Stops) == 0 || slices.Contains(f.Stops, c.StopReason)) {
			n += c.N
		}
	}
	return n, true
}

// MarksOnly reports whether the filter selects among attempts (outcome,
// stop reason) rather than among arms and tasks.
func (f filter) MarksOnly() bool { return len(f.Outcomes) > 0 || len(f.Stops) > 0 }

// Active reports whether the filter selects anything.
func (f filter) Active() bool { return len(f.Arms)+len(f.Tasks)+len(f.Outcomes)+len(f.Stops) > 0 }

// values is the filter as a query, without the page.
func (f filter) values() url.Values {
	v := url.Values{}
	for _, p := range []struct {
		key  string
		vals []string
	}{{"arm", f.Arms}, {"task", f.Tasks}, {"outcome", f.Outcomes}, {"stop", f.Stops}} {
		if len(p.vals) > 0 {
			v.Set(p.key, strings.Join(p.vals, ","))
		}
	}
	return v
}

// withPage is the filter's query for page n.
func (f filter) withPage(n int) url.Values {
	v := f.values()
	if n > 1 {
		v.Set("page", strconv.Itoa(n))
	}
	return v
}
