package endpoint

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/benchhq/bench/agent"
)

// DefaultURL is where Ollama listens when OLLAMA_HOST does not say.
const DefaultURL = "http://127.0.0.1:11434"

// InstallHint says how to install Ollama, for messages.
const InstallHint = "install Ollama (Linux: curl -fsSL https://ollama.com/install.sh | sh; macOS: brew install ollama; others: https://ollama.com/download)"

// LocalOptions say where to look for a local Ollama server and how to
// start one.
type LocalOptions struct {
	// URL is the address to look at and serve on (default DefaultURL).
	URL string
	// Command is the ollama executable, looked up on PATH (default
	// "ollama").
	Command string
	// LogPath is the file the started server's output is appended to.
	LogPath string
	// Ready bounds the wait for a started server to answer (default 60s:
	// a first start on a slow disk finds its GPUs and libraries).
	Ready time.Duration
	// Then is the command to run once Ollama is installed, for the
	// message that says it is not.
	Then string
}

// Local is an `ollama serve` that bench started for its own use, its
// child. Stop it when done: it is never left running.
type Local struct {
	// URL is where it serves; Log is its log file; PID is its process.
	URL, Log string
	PID      int

	proc    *os.Process
	exited  chan struct{}
	waitErr error
	stop    sync.Once
}

// NotOllamaError is an address where something answers that is not an
// Ollama server: bench neither uses it nor starts one there.
type NotOllamaError struct {
	URL, What string
}

func (e *NotOllamaError) Error() string {
	return fmt.Sprintf("something that is not Ollama answers at %s (%s): stop it, or give --host (or OLLAMA_HOST) where Ollama runs", e.URL, e.What)
}

// NoOllamaError is no server at the default address and no ollama
// command to start one with.
type NoOllamaError struct {
	URL, Command, Then string
}

func (e *NoOllamaError) Error() string {
	then := "then run this command again"
	if e.Then != "" {
		then = "then run `" + e.Then + "` again"
	}
	return fmt.Sprintf("no Ollama server answers at %s and no `%s` command is on PATH to start one: %s; %s, and bench starts `ollama serve` itself", e.URL, e.Command, InstallHint, then)
}

// EnsureLocal makes sure that an Ollama server answers at the default
// address. A server that answers there already is used as it is (nil
// Local). When nothing listens there and the ollama command is on PATH,
// it starts `ollama serve` as its child, its output appended to
// LogPath, and waits until it answers; an error then stops it again.
// Something else answering there is a *NotOllamaError; no command, a
// *NoOllamaError.
//
// Only for the address Ollama uses by default: an address the operator
// gave (--host, OLLAMA_HOST) is a server they run, only ever asked.
func EnsureLocal(ctx context.Context, o LocalOptions) (*Local, error) {
	if o.URL == "" {
		o.URL = DefaultURL
	}
	if o.Command == "" {
		o.Command = "ollama"
	}
	if o.Ready <= 0 {
		o.Ready = 60 * time.Second
	}
	u, err := url.Parse(o.URL)
	if err != nil {
		return nil, fmt.Errorf("ollama address %s: %w", o.URL, err)
	}
	hc := &http.Client{}
	up, err := probeOllama(ctx, hc, o.URL)
	switch {
	case err != nil:
		return nil, err
	case up:
		return nil, nil
	}
	path, err := exec.LookPath(o.Command)
	if err != nil {
		return nil, &NoOllamaError{URL: o.URL, Command: o.Command, Then: o.Then}
	}
	log, err := os.OpenFile(o.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("log of ollama serve: %w", err)
	}
	fmt.Fprintf(log, "\n=== %s: bench starts %s serve (OLLAMA_HOST=%s)\n", time.Now().Format(time.RFC3339), path, u.Host)
	cmd := exec.Command(path, "serve")
	cmd.Env = append(os.Environ(), "OLLAMA_HOST="+u.Host)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = serveAttr()
	l := &Local{URL: o.URL, Log: o.LogPath, exited: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		// The child's death signal (Linux) fires when the thread that
		// started it ends: this thread is kept for as long as the child
		// lives, and ends with this goroutine once the child is gone.
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		l.waitErr = cmd.Wait()
		log.Close()
		close(l.exited)
	}()
	if err := <-started; err != nil {
		log.Close()
		return nil, fmt.Errorf("start %s serve: %w", path, err)
	}
	l.proc, l.PID = cmd.Process, cmd.Process.Pid
	if err := l.waitReady(ctx, hc, o.Ready); err != nil {
		l.Stop()
		return nil, err
	}
	return l, nil
}

// waitReady waits until the started server answers as Ollama.
func (l *Local) waitReady(ctx context.Context, hc *http.Client, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		up, err := probeOllama(ctx, hc, l.URL)
		switch {
		case up:
			return nil
		case err != nil:
			return err // something else took the address
		}
		select {
		case <-l.exited:
			return fmt.Errorf("`ollama serve` exited before it answered at %s (%v): %s", l.URL, l.waitErr, l.logTail())
		case <-ctx.Done():
			return fmt.Errorf("waiting for `ollama serve` to answer at %s: %w", l.URL, context.Cause(ctx))
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("`ollama serve` did not answer at %s within %s: %s", l.URL, within, l.logTail())
		}
	}
}

// logTail is the last line of the server's log, for an error's one line.
func (l *Local) logTail() string {
	b, err := os.ReadFile(l.Log)
	if err != nil {
		return "its log " + l.Log
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	if len(last) > 200 {
		last = last[:200] + "…"
	}
	return fmt.Sprintf("its log %s ends %q", l.Log, last)
}

// Stop ends the server and whatever it started (its model runners): a
// SIGTERM to its process group, then, if it has not ended within 10
// seconds, a SIGKILL. It returns once the server is gone, and may be
// called more than once.
func (l *Local) Stop() {
	if l == nil {
		return
	}
	l.stop.Do(func() {
		signalServer(l.proc, false)
		select {
		case <-l.exited:
		case <-time.After(10 * time.Second):
			signalServer(l.proc, true)
			<-l.exited
		}
		// Runners the server started and left behind share its group.
		signalServer(l.proc, true)
	})
}

// probeOllama asks base for /api/version: true when an Ollama server
// answers; false with no error when nothing listens there; a
// *NotOllamaError when something else does.
func probeOllama(ctx context.Context, hc *http.Client, base string) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(base, "/")+"/api/version", nil)
	if err != nil {
		return false, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		switch {
		case agent.Unreachable(err):
			return false, nil
		case ctx.Err() != nil && context.Cause(ctx) == context.DeadlineExceeded:
			return false, &NotOllamaError{URL: base, What: "it accepts connections but gives no HTTP answer within 3s"}
		case ctx.Err() != nil:
			return false, context.Cause(ctx)
		}
		return false, &NotOllamaError{URL: base, What: err.Error()}
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	var v struct {
		Version string `json:"version"`
	}
	if resp.StatusCode == http.StatusOK && json.Unmarshal(body, &v) == nil && v.Version != "" {
		return true, nil
	}
	what := fmt.Sprintf("GET /api/version: HTTP %d", resp.StatusCode)
	if s := strings.Join(strings.Fields(string(bytes.ToValidUTF8(body, nil))), " "); s != "" {
		if len(s) > 60 {
			s = s[:60] + "…"
		}
		what += " " + s
	}
	return false, &NotOllamaError{URL: base, What: what}
}

// IsDefaultOllama reports whether an Ollama endpoint made of spec
// would be at the address Ollama uses by default, given by nobody: no
// URL in the spec, OLLAMA_HOST unset or empty.
func IsDefaultOllama(api API, spec Spec) bool {
	return (api == Ollama || api == "") && spec.URL == "" && os.Getenv("OLLAMA_HOST") == ""
}
