package tasks

import (
	"fmt"
	"time"
)

// Check returns the first limit bench refuses, as its field (max_turns,
// max_tokens, wall_time) and what was expected, or "", "" when all are
// fine. It is the one rule for limits, wherever they are given: a
// task.toml, a run file's [limits], or bench run's --max-turns,
// --max-tokens and --wall-time. Zero means "use the default".
func (l Limits) Check() (field, msg string) {
	switch {
	case l.MaxTurns < 0:
		return "max_turns", fmt.Sprintf("expected a positive number (or 0 for the default), got %d", l.MaxTurns)
	case l.MaxTokens < 0:
		return "max_tokens", fmt.Sprintf("expected a positive number (or 0 for the default), got %d", l.MaxTokens)
	case l.WallTime.Duration < 0:
		return "wall_time", fmt.Sprintf("expected a positive duration such as \"90s\" or \"5m\" (or 0 for the default), got %s", l.WallTime.Duration)
	}
	return "", ""
}

// ParseDuration reads a duration as every bench file and flag writes it:
// a Go duration string such as "90s" or "5m", not negative. The error says
// what was expected.
func ParseDuration(s string) (time.Duration, error) {
	v, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("expected a duration such as \"90s\" or \"5m\", got %q", s)
	}
	if v < 0 {
		return 0, fmt.Errorf("expected a positive duration, got %q", s)
	}
	return v, nil
}
