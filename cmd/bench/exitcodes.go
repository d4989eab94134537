package main

import (
	"context"
	"fmt"
)

// The exit statuses of every bench command: one table, documented in
// docs/exit-codes.md, that a script can rely on.
const (
	// exitOK: the command did what was asked. For bench run: every
	// planned attempt is stored and scored.
	exitOK = 0
	// exitFailed: the command failed or was interrupted after it started;
	// for bench run, what was stored is kept and --resume continues it.
	exitFailed = 1
	// exitCannotStart: bad input (flags, a task or run file, a file that is
	// not a bench database) or nothing to start on (no model server, a
	// model that is not pulled, a server that does not answer, an MCP server
	// that fails at discovery). Nothing was done.
	exitCannotStart = 2
	// exitNotScored: bench run finished, but some attempts ended in
	// infrastructure failures after their retries: they are stored, not
	// scored, and left out of the pass rates; --resume runs them again.
	exitNotScored = 3
)

// cannotStartError is a failure before anything was done, for a reason
// outside bench (the model server, the model, the tasks): exitCannotStart.
type cannotStartError struct{ err error }

func (e *cannotStartError) Error() string { return e.err.Error() }
func (e *cannotStartError) Unwrap() error { return e.err }

// cannotStart marks err as a failure to start.
func cannotStart(err error) error { return &cannotStartError{err: err} }

// startFailure is err, from a command that had done nothing yet, marked
// as a failure to start; unless ctx ended (an interruption: exitFailed).
func startFailure(ctx context.Context, err error) error {
	if err == nil || ctx.Err() != nil {
		return err
	}
	return cannotStart(err)
}

// notScoredError ends a run that finished with attempts not scored:
// exitNotScored, with what to do.
type notScoredError struct {
	n            int
	runID, dbArg string
}

func (e *notScoredError) Error() string {
	return fmt.Sprintf("%d attempts ended in infrastructure failures (after their retries, or --max-wait without a model server in service): they are stored, not scored, and left out of the pass rates. When the model server is healthy again, run them with: bench run --resume %s%s", e.n, e.runID, e.dbArg)
}

// stoppingMessage is what bench says when a signal stops command: what
// becomes of the work in progress, and that a second signal quits at once.
func stoppingMessage(command string) string {
	const again = " (Ctrl-C again to quit now)"
	switch command {
	case "run":
		return "bench run: stopping: attempts in flight are dropped and run again on resume" + again
	case "validate":
		return "bench validate: stopping: the tasks not yet checked are left unchecked" + again
	case "view":
		return "bench view: stopping the web view"
	case "overhead":
		return "bench overhead: stopping: nothing is measured" + again
	case "merge":
		return "bench merge: stopping: the output file is left as it was" + again
	case "export":
		return "bench export: stopping: the output is incomplete" + again
	case "mcp":
		return "bench mcp: stopping: the MCP servers it serves or started are stopped" + again
	default:
		return "bench " + command + ": stopping" + again
	}
}
