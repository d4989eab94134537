// Command bench runs tool-using agents on a local model (Ollama, or an
// OpenAI-compatible server) against a suite of tasks, scores every attempt with hidden tests, and stores
// everything in one SQLite file.
//
//	bench run --model qwen3:0.6b            run the example suite, 4 attempts per task
//	bench validate tasks/suites/examples    check tasks without a model
//	bench report                            summary of the latest run
//	bench merge out.db shard-*.db           put the shards of a run back together
//	bench view                              browse the results in a web browser
//	bench mcp inspect -- CMD ARGS...        look at an MCP server before attaching it
//	bench mcp call TOOL '{}' -- CMD ARGS... call one of its tools by hand
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
	command := "bench"
	if len(os.Args) > 1 {
		command = os.Args[1]
	}
	finish := watchSignal(ctx, stop, os.Stderr, stoppingMessage(command))
	code := Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	finish()
	stop()
	os.Exit(code)
}

// watchSignal says, when ctx ends by a signal, that bench is stopping
// (msg, the command's own: what becomes of its work in progress), and
// hands the next signal back to the default handler (stop), so that a
// second Ctrl-C quits at once. finish ends the watch and returns once it
// has ended: cancelling ctx afterwards (stop at exit) says nothing. It
// must, or the watch could see ctx end at exit and say "stopping" after a
// command that got no signal.
func watchSignal(ctx context.Context, stop func(), stderr io.Writer, msg string) (finish func()) {
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		select {
		case <-done:
		case <-ctx.Done():
			stop()
			fmt.Fprintln(stderr, "\n"+msg)
		}
	}()
	return func() {
		close(done)
		<-exited
	}
}

// usageError is a mistake in how bench was called: exit status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

const usage = `bench: a benchmark harness for tool-using agents on local models

Usage:
  bench run [flags]              run a suite G times per task, score attempts
  bench validate [SUITE|TASK]    check solutions pass, untouched workspaces
                                 fail, and task servers start
  bench runs                     the stored runs, newest first, with progress
  bench report [RUN]             the report of a stored run (default: latest)
  bench export [flags]           attempts as JSONL training data
  bench merge OUT.db IN.db...    put a run's shards (run --shard I/N) together
  bench cache [list|clear]       the tasks' prepared environments
  bench view [flags]             browse runs and trajectories in a browser
  bench serve [flags]            rollouts on request for a training loop (HTTP)
  bench overhead --model M       prompt tokens each tool adds to a request
  bench mcp inspect -- CMD...    what bench would offer of an MCP server
  bench mcp call TOOL -- CMD...  call one tool of an MCP server, as a run would
  bench mcp serve issues         the project's example MCP server
  bench version                  print the version

Run 'bench COMMAND -h' for a command's flags.
`

// Main runs the bench command line and returns the exit status, one of
// the table in exitcodes.go (docs/exit-codes.md).
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
	case "cache":
		err = cmdCache(ctx, args[1:], stdout, stderr)
	case "export":
		err = cmdExport(ctx, args[1:], stdout, stderr)
	case "merge":
		err = cmdMerge(ctx, args[1:], stdout, stderr)
	case "serve":
		err = cmdServe(ctx, args[1:], stdout, stderr)
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
		return exitOK
	}
	var ue *usageError
	var fe *tasks.FieldError
	var cs *cannotStartError
	var ns *notScoredError
	switch {
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "bench: %s\n", ue.msg)
		return exitCannotStart
	case errors.As(err, &fe), errors.Is(err, results.ErrNotBenchDatabase), errors.Is(err, results.ErrNewerSchema):
		// Bad input files: one line, the same status as a usage error.
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return exitCannotStart
	case errors.As(err, &cs), errors.Is(err, results.ErrRunHeld):
		// Nothing done: nothing could start (the run is another bench's).
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return exitCannotStart
	case errors.As(err, &ns):
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return exitNotScored
	case errors.Is(err, errSilent):
		return exitFailed
	case errors.Is(err, errHelp):
		return exitOK
	default:
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return exitFailed
	}
}
