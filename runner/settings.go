package runner

import (
	"fmt"
	"time"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/evaluator"
	"github.com/benchhq/bench/tasks"
)

// Check applies bench's rules to the values of a run file that were given
// (given reports whether a field, named as in the file, e.g. "attempts" or
// "limits.max_turns", was set). It is the one set of rules for a plan's
// values, wherever they come from: LoadRunFile calls it for the file, bench
// run for its flags (as a RunFile of the flags given), and the limits and
// options rules are those of task.toml (tasks.Limits.Check) and of every
// plan (agent.CheckOptions). The error is a *tasks.FieldError naming the
// field as in the file; File is rf.Path.
func (rf *RunFile) Check(given func(field string) bool) error {
	bad := func(field, msg string) error { return &tasks.FieldError{File: rf.Path, Field: field, Msg: msg} }
	for _, c := range []struct {
		field string
		n     int
	}{{"attempts", rf.Attempts}, {"concurrency", rf.Concurrency}, {"max_tries", rf.MaxTries}} {
		if given(c.field) {
			if msg := atLeastOne(c.n); msg != "" {
				return bad(c.field, msg)
			}
		}
	}
	if given("request_timeout") {
		if msg := positiveDuration(rf.RequestTimeout.Duration); msg != "" {
			return bad("request_timeout", msg)
		}
	}
	if given("advantage") {
		if _, err := evaluator.ParseMethod(string(rf.Advantage)); err != nil {
			return bad("advantage", err.Error())
		}
	}
	if given("name") && !ValidName(rf.Name) {
		return bad("name", fmt.Sprintf("%q: expected letters, digits, '.', '_' or '-' (it becomes the run id)", rf.Name))
	}
	if field, msg := rf.Limits.Check(); field != "" {
		return bad("limits."+field, msg)
	}
	if key, msg := agent.CheckOptions(rf.Options); key != "" {
		return bad("options."+key, msg)
	}
	return rf.Sandbox.Validate(rf.Path)
}

// ValidName reports whether s can name a run: it becomes the run id.
func ValidName(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return false
		}
	}
	return s != ""
}

// atLeastOne is the rule of a count that must be 1 or more (attempts,
// concurrency, tries); "" when n is fine.
func atLeastOne(n int) string {
	if n < 1 {
		return fmt.Sprintf("expected at least 1, got %d", n)
	}
	return ""
}

// positiveDuration is the rule of a timeout; "" when d is fine.
func positiveDuration(d time.Duration) string {
	if d <= 0 {
		return fmt.Sprintf("expected a positive duration such as \"90s\" or \"5m\", got %s", d)
	}
	return ""
}
