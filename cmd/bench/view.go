package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/benchhq/bench/results"
	"github.com/benchhq/bench/view"
)

const viewUsage = `Usage: bench view [flags]

Serves a local web view of a results file, read-only: the runs; a run's
arms side by side with their pass rates, intervals and paired comparison,
its plots and its task × arm grid of attempts; each attempt's whole
trajectory; and two runs or arms compared task by task. Pages have stable
URLs, and filters (arm, task, outcome, stop) live in them. Prints the URL
and serves until Ctrl-C. It opens the file read-only and nothing else: no
network beyond the address it listens on.

Flags:
`

func cmdView(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("view", stderr, viewUsage)
	db := fs.String("db", "bench.db", "SQLite file of results")
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on, HOST:PORT (port 0 picks a free one)")
	remote := fs.Bool("allow-remote", false, "allow an address that is not loopback: anyone who reaches it reads every trajectory")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("view: unexpected argument %q (flags only)", fs.Arg(0))
	}
	if err := checkListenAddr(*addr, *remote); err != nil {
		return err
	}
	if _, err := os.Stat(*db); errors.Is(err, os.ErrNotExist) {
		return usagef("view: --db %s: no such file", *db)
	}
	srv, err := view.New(ctx, *db, log.New(stderr, "bench view: ", 0))
	if err != nil {
		return err
	}
	defer srv.Close()
	if err := srv.Err(); errors.Is(err, results.ErrNotBenchDatabase) || errors.Is(err, results.ErrNewerSchema) {
		// Not a passing state that a reload would cure: refused, as bench
		// runs and bench report refuse it.
		return fmt.Errorf("view: %w", err)
	} else if err != nil {
		fmt.Fprintf(stderr, "bench view: %v: every page will say so until the file can be read\n", err)
	}
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		return usagef("view: --addr %s: %v", *addr, err)
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stdout, "bench view: serving %s at http://%s/ (Ctrl-C to stop)\n", *db, l.Addr())
	done := make(chan error, 1)
	go func() { done <- hs.Serve(l) }()
	select {
	case err := <-done:
		return fmt.Errorf("view: %w", err)
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(shut); err != nil {
		return fmt.Errorf("view: stop: %w", err)
	}
	return nil
}

// checkListenAddr refuses an address that is not loopback (an empty host
// listens on every interface) unless remote is set.
func checkListenAddr(addr string, remote bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return usagef("view: --addr %q: %v (expected HOST:PORT, such as 127.0.0.1:8080)", addr, err)
	}
	if remote {
		return nil
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return usagef("view: --addr %s is not a loopback address: the view shows every prompt, tool call and output of the file; give --allow-remote to serve it there anyway", addr)
}
