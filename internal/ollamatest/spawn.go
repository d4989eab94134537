package ollamatest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"
)

// The environment of a child started by Spawn.
const (
	envScript = "OLLAMATEST_SERVE_SCRIPT"
	envDelay  = "OLLAMATEST_SERVE_DELAY"
)

// Remote is a fake server running in a child process (see Spawn): its CPU
// time and memory are not the test process's, so that a benchmark of the
// harness does not count the fake model's own cost.
type Remote struct {
	// URL is the server's base URL.
	URL string

	cmd   *exec.Cmd
	stdin io.WriteCloser
}

// SpawnOptions tune a spawned server.
type SpawnOptions struct {
	// Delay holds every reply back this long (a model of fixed latency).
	Delay time.Duration
}

// Spawn starts a fake server in a child process and stops it when tb ends.
// The child is the running test binary itself: the package's TestMain must
// call ServeChild with a table of scripts that holds script. The server
// keeps no requests, and decodes of each only what Turns reads unless the
// reply needs the rest (WithSketchedRequests): its script sees the model,
// the options and each message's role, no content. Remote.Stats counts
// them.
func Spawn(tb testing.TB, script string, opts SpawnOptions) *Remote {
	tb.Helper()
	exe, err := os.Executable()
	if err != nil {
		tb.Fatalf("spawn fake ollama: %v", err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), envScript+"="+script, envDelay+"="+opts.Delay.String())
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatalf("spawn fake ollama: %v", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatalf("spawn fake ollama: %v", err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatalf("spawn fake ollama: %v", err)
	}
	r := &Remote{cmd: cmd, stdin: stdin}
	tb.Cleanup(r.Close)
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(stdout).ReadString('\n')
		line <- strings.TrimSpace(s)
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case r.URL = <-line:
	case <-time.After(30 * time.Second):
		tb.Fatalf("spawn fake ollama: the child gave no URL within 30s")
	}
	if !strings.HasPrefix(r.URL, "http://") {
		tb.Fatalf("spawn fake ollama: the child said %q, not its URL (does TestMain call ollamatest.ServeChild with script %q?)", r.URL, script)
	}
	return r
}

// Stats returns what the child server has counted so far.
func (r *Remote) Stats() (Stats, error) {
	resp, err := http.Get(r.URL + statsPath)
	if err != nil {
		return Stats{}, fmt.Errorf("stats of fake ollama: %w", err)
	}
	defer resp.Body.Close()
	var st Stats
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return Stats{}, fmt.Errorf("stats of fake ollama: %w", err)
	}
	return st, nil
}

// Close stops the child: closing its stdin makes it exit.
func (r *Remote) Close() {
	if r.stdin == nil {
		return
	}
	r.stdin.Close()
	r.stdin = nil
	done := make(chan struct{})
	go func() { _ = r.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = r.cmd.Process.Kill()
		<-done
	}
}

// ServeChild is for a test binary's TestMain. In a child started by Spawn
// it serves the script of that name, prints the URL on stdout, and exits
// the process when stdin closes; in any other process it returns at once.
func ServeChild(scripts map[string]Script) {
	name, ok := os.LookupEnv(envScript)
	if !ok {
		return
	}
	script, ok := scripts[name]
	if !ok {
		fmt.Printf("no script %q\n", name)
		os.Exit(2)
	}
	delay, err := time.ParseDuration(os.Getenv(envDelay))
	if err != nil {
		fmt.Printf("%s: %v\n", envDelay, err)
		os.Exit(2)
	}
	if delay > 0 {
		inner := script
		script = func(req *api.ChatRequest) Reply {
			rep := inner(req)
			if rep.Delay == 0 {
				rep.Delay = delay
			}
			return rep
		}
	}
	srv := New(script, WithSketchedRequests())
	fmt.Println(srv.URL)
	_, _ = io.Copy(io.Discard, os.Stdin)
	srv.Close()
	os.Exit(0)
}
