package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/benchhq/bench/agent/mcp"
	"github.com/benchhq/bench/endpoint"
	"github.com/benchhq/bench/results"
	"github.com/benchhq/bench/runner"
	"github.com/benchhq/bench/sandbox"
	"github.com/benchhq/bench/serve"
	"github.com/benchhq/bench/tasks"
)

const serveUsage = `Usage: bench serve [flags]

Serves rollouts to a training loop over HTTP (docs/serve.md): POST
/v1/rollouts with tasks of the suite, G, an arm and the model's sampling
runs them as a run of their own, stored as bench run stores it, and
streams each task's group back (NDJSON) as soon as its attempts are
scored: rewards, group advantages and each attempt's exact token ids,
logprobs and mask for TRL's rollout_func. DELETE /v1/rollouts/{id}
cancels a request; GET /v1/health gives the queue depth. Requests share
the endpoints (--host) and their slots; a request may name some of them
to run on, never another address. Serves until Ctrl-C.

Flags:
`

func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("serve", stderr, serveUsage)
	addr := fs.String("addr", "127.0.0.1:8420", "address to listen on, HOST:PORT (port 0 picks a free one)")
	remote := fs.Bool("allow-remote", false, "allow an address that is not loopback: anyone who reaches it runs attempts on this machine")
	suiteDir := fs.String("suite", DefaultSuite, "suite folder whose tasks requests may name")
	model := fs.String("model", "", "model of requests that name none")
	db := fs.String("db", "bench.db", "SQLite file the requests' runs are stored in")
	var hosts hostList
	fs.Var(&hosts, "host", hostFlagHelp+"; a host without slots gets --concurrency, so that every request shares them")
	api := fs.String("api", "", "API of the model servers: ollama (default) or openai (vLLM, SGLang: exact token ids)")
	concurrency := fs.Int("concurrency", 4, "attempts in their agent loop at once, per request and (as the hosts' slots) over all requests")
	fs.IntVar(concurrency, "j", 4, "shorthand for -concurrency")
	maxRequests := fs.Int("max-requests", 4, "requests run at once; the others wait in the queue")
	numCtx := fs.Int("num-ctx", 0, fmt.Sprintf("context window, num_ctx, of requests that set none (default %d)", runner.DefaultNumCtx))
	numPredict := fs.Int("num-predict", 0, fmt.Sprintf("max tokens per reply, num_predict, of requests that set none (default %d)", runner.DefaultNumPredict))
	reqTimeout := fs.Duration("request-timeout", 0, "bound on one model request (default 10m)")
	maxTries := fs.Int("max-tries", 0, fmt.Sprintf("tries of an attempt cut short by an infrastructure failure (default %d)", runner.DefaultMaxTries))
	sbMode := fs.String("sandbox", "", "isolate commands and hidden tests with bubblewrap: required (default) or off")
	envDir := fs.String("cache", "", "`folder` of the tasks' prepared environments (default as bench run)")
	startTimeout := fs.Duration("server-start-timeout", mcp.DefaultStartTimeout, startTimeoutHelp)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("serve: unexpected argument %q (flags only)", fs.Arg(0))
	}
	if err := checkListenAddr(*addr, *remote); err != nil {
		return usagef("serve%s", strings.TrimPrefix(err.Error(), "view"))
	}
	if *concurrency < 1 || *maxRequests < 1 {
		return usagef("serve: --concurrency and --max-requests: expected 1 or more")
	}
	suite, err := tasks.LoadSuite(*suiteDir)
	if err != nil {
		return usagef("serve: --suite: %v", err)
	}
	sbc := sandbox.Config{Mode: *sbMode}
	if err := sbc.Validate("--sandbox"); err != nil {
		return usagef("serve: --sandbox: expected required or off, got %q", *sbMode)
	}
	pool, err := endpointPool(*api, hosts, &runner.RunFile{}, stderr)
	if err != nil {
		return err
	}
	defer pool.Close()
	for _, e := range pool.Endpoints() {
		if e.Slots == 0 {
			e.Slots = *concurrency // every request's attempts share them
		}
	}
	sb, err := sandboxFor(ctx, sbc.Mode)
	if err != nil {
		return err
	}
	store, err := results.Open(ctx, *db)
	if err != nil {
		return err
	}
	defer store.Close()
	opts := map[string]any{}
	if *numCtx > 0 {
		opts["num_ctx"] = *numCtx
	}
	if *numPredict > 0 {
		opts["num_predict"] = *numPredict
	}
	exe, _ := os.Executable()
	svc, err := serve.New(serve.Config{
		Suite: suite, Model: *model, API: planAPI(*api), Options: opts,
		Concurrency: *concurrency, MaxRequests: *maxRequests, RequestTimeout: *reqTimeout, MaxTries: *maxTries,
		Sandbox: sbc, Pool: pool,
		Runner: func() *runner.Runner {
			return &runner.Runner{Endpoints: pool, Store: store, Log: stderr, BenchPath: exe, Version: version,
				Sandbox: sb, StartTimeout: *startTimeout, EnvDir: *envDir}
		},
	})
	if err != nil {
		return err
	}
	defer svc.Close()
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		return usagef("serve: --addr %s: %v", *addr, err)
	}
	hs := &http.Server{Handler: svc.Handler(), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stderr, "bench serve: %s tasks of %s, results in %s, sandbox %s, endpoints %s\n", fmt.Sprint(len(suite.Tasks)), suite.Name, *db, sb, endpointNames(pool))
	fmt.Fprintf(stdout, "bench serve: listening at http://%s/ (Ctrl-C to stop)\n", l.Addr())
	done := make(chan error, 1)
	go func() { done <- hs.Serve(l) }()
	select {
	case err := <-done:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	svc.Close() // requests end; their finished attempts are stored
	shut, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := hs.Shutdown(shut); err != nil {
		return fmt.Errorf("serve: stop: %w", err)
	}
	return nil
}

// endpointNames lists a pool's endpoints with their slots.
func endpointNames(p *endpoint.Pool) string {
	s := ""
	for i, e := range p.Endpoints() {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%s (%d slots)", e.Name, e.Slots)
	}
	return s
}
