package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/benchhq/bench/endpoint"
	"github.com/benchhq/bench/runner"
)

// modelPrep says how the model-server preflight of a command that needs a
// model goes (bench run, bench overhead).
type modelPrep struct {
	// cmd names the command in messages ("run", "overhead").
	cmd string
	// local is true when the servers are Ollama's default address,
	// given by nobody (no --host, no run file endpoints, no OLLAMA_HOST):
	// only there may bench start `ollama serve` itself.
	local bool
	// noPull keeps a model the servers lack a refusal (--no-pull).
	noPull bool
	// db is the results database: a server bench starts logs next to it.
	db string
	// again is the command to run once Ollama is installed.
	again string
	// stderr hears what happens; bar says it is a terminal (a live
	// pull bar rather than a line per stage).
	stderr io.Writer
	bar    bool
}

// defaultOllama reports whether the servers of a command are Ollama at
// its default address, named by nobody.
func defaultOllama(api string, hosts hostList, rf *runner.RunFile) bool {
	kind, err := endpoint.ParseAPI(api)
	return err == nil && kind == endpoint.Ollama && len(hosts) == 0 && len(rf.Endpoints) == 0 &&
		endpoint.IsDefaultOllama(kind, endpoint.Spec{})
}

// serveLog is where an `ollama serve` that bench starts writes, next to
// the database: bench.db's is bench.ollama.log.
func serveLog(db string) string {
	base := strings.TrimSuffix(filepath.Base(db), filepath.Ext(db))
	return filepath.Join(filepath.Dir(db), base+".ollama.log")
}

// prepareModel makes the model servers of pool ready to serve model,
// before anything is stored: at Ollama's default address, it starts
// `ollama serve` as bench's child when nothing answers there; then it
// pulls the model onto every Ollama endpoint that lacks it, with a
// progress bar, unless noPull (the run then refuses, as before). stop
// ends the server it started, and does nothing otherwise: call it on
// every way out. A failure is one line, and a cannot-start error (exit
// status 2); a server it started is stopped by then.
func prepareModel(ctx context.Context, pool *endpoint.Pool, model string, o modelPrep) (stop func(), err error) {
	stop = func() {}
	if o.local {
		local, err := endpoint.EnsureLocal(ctx, endpoint.LocalOptions{LogPath: serveLog(o.db), Then: o.again})
		if err != nil {
			return stop, modelCannotStart(o.cmd, err)
		}
		if local != nil {
			stop = func() {
				local.Stop()
				fmt.Fprintf(o.stderr, "stopped the `ollama serve` bench started (pid %d)\n", local.PID)
			}
			fmt.Fprintf(o.stderr, "no Ollama server answered at %s: started `ollama serve` there (pid %d, log %s); bench stops it when it ends\n", local.URL, local.PID, local.Log)
		}
	}
	if o.noPull {
		return stop, nil
	}
	if _, err := pool.PullMissing(ctx, model, endpoint.NewPullProgress(o.stderr, o.bar)); err != nil {
		stop()
		return func() {}, modelCannotStart(o.cmd, err)
	}
	return stop, nil
}

// modelCannotStart is a failure to make the model server ready, said in
// one line with what to do: exitCannotStart (an interruption: exitFailed).
func modelCannotStart(cmd string, err error) error {
	var pe *endpoint.PullError
	var no *endpoint.NoOllamaError
	var not *endpoint.NotOllamaError
	switch {
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("%s: interrupted before it started: %v", cmd, err)
	case errors.As(err, &pe), errors.As(err, &no), errors.As(err, &not):
	case strings.Contains(err.Error(), "no server answers"):
		err = fmt.Errorf("%v (start Ollama there with `ollama serve`, or give no --host and no OLLAMA_HOST, and bench starts one at %s itself)", err, endpoint.DefaultURL)
	}
	return cannotStart(fmt.Errorf("%s: %s\nNo attempt was stored.", cmd, strings.ReplaceAll(err.Error(), "\n", "; ")))
}

// commandLine is how the command was called, for a message that says to
// run it again: "bench run --model qwen3:0.6b".
func commandLine(cmd string, args []string) string {
	parts := []string{filepath.Base(os.Args[0]), cmd}
	for _, a := range args {
		if a == "" || strings.ContainsAny(a, " \t'\"$`\\|&;<>()*?[]#~") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}
