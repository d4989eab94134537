// Command bench runs tool-using agents on a local Ollama model against a
// suite of tasks, scores every attempt with hidden tests, and stores
// everything in one SQLite file.
//
//	bench run --model qwen3:0.6b            run the example suite, 4 attempts per task
//	bench validate tasks/suites/examples    check tasks without a model
//	bench report                            summary of the latest run
//	bench view                              browse the results in a web browser
//	bench mcp inspect -- CMD ARGS...        look at an MCP server before attaching it
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/benchhq/bench/results"
	"github.com/benchhq/bench/tasks"
)

// version is the bench version recorded with every run.
const version = "0.1.0"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case <-done:
		case <-ctx.Done():
			// The first signal stops cleanly; the next one goes back to
			// the default handler, so that a second Ctrl-C quits at once.
			stop()
			fmt.Fprintln(os.Stderr, "\nbench: stopping: attempts in flight are dropped and run again on resume (Ctrl-C again to quit now)")
		}
	}()
	code := Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	close(done)
	stop()
	os.Exit(code)
}

// usageError is a mistake in how bench was called: exit status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

const usage = `bench: a benchmark harness for tool-using agents on local models

Usage:
  bench run [flags]             run a suite (or one task) G times per task and score every attempt
  bench validate [SUITE|TASK]   check that reference solutions pass and untouched workspaces fail
  bench runs                    the stored runs, newest first, with their progress
  bench report [RUN]            summary of a stored run (default: the latest)
  bench export [flags]          attempts as JSONL training data (messages + tools, rewards, advantages)
  bench view [flags]            browse runs, arms and trajectories in a local web view
  bench overhead --model M      prompt tokens each tool and server adds to every request
  bench mcp inspect -- CMD...   connect to an MCP server and show what bench would offer
  bench mcp serve issues        the project's example MCP server (an issue tracker)
  bench version                 print the version

Run 'bench COMMAND -h' for a command's flags.
`

// Main runs the bench command line and returns the exit status: 0 for
// success, 1 for a failure, 2 for a usage error.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "run":
		err = cmdRun(ctx, args[1:], stdout, stderr)
	case "validate":
		err = cmdValidate(ctx, args[1:], stdout, stderr)
	case "report":
		err = cmdReport(ctx, args[1:], stdout, stderr)
	case "runs":
		err = cmdRuns(ctx, args[1:], stdout, stderr)
	case "export":
		err = cmdExport(ctx, args[1:], stdout, stderr)
	case "view":
		err = cmdView(ctx, args[1:], stdout, stderr)
	case "overhead":
		err = cmdOverhead(ctx, args[1:], stdout, stderr)
	case "mcp":
		return cmdMCP(ctx, args[1:], stdout, stderr)
	case "version", "--version":
		fmt.Fprintln(stdout, "bench", version)
		return 0
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "bench: unknown command %q (run 'bench help' for the commands)\n", args[0])
		return 2
	}
	return exitCode(err, stderr)
}

// errSilent marks a failure already reported to the user.
var errSilent = errors.New("failed")

func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	var ue *usageError
	var fe *tasks.FieldError
	switch {
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "bench: %s\n", ue.msg)
		return 2
	case errors.As(err, &fe), errors.Is(err, results.ErrNotBenchDatabase):
		// Bad input files: one line, the same status as a usage error.
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 2
	case errors.Is(err, errSilent):
		return 1
	case errors.Is(err, errHelp):
		return 0
	default:
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 1
	}
}
