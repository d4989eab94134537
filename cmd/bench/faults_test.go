package main

// Fault injection: real bench processes, driven through what goes wrong on
// long runs. Each case checks that no attempt is lost or duplicated, none
// is mis-scored, and bench ends with a clear message.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/benchhq/bench/internal/ollamatest"
	"github.com/benchhq/bench/results"
)

// solveRecipeScript is a scripted model that fixes recipe-trailing-dot,
// each reply held back by delay so that a run is slow enough to interrupt.
func solveRecipeScript(t *testing.T, delay time.Duration) ollamatest.Script {
	t.Helper()
	fixed, err := os.ReadFile(filepath.Join(recipeTask, "solution", "recipe.py"))
	if err != nil {
		t.Fatal(err)
	}
	turns := ollamatest.Turns(
		ollamatest.Reply{Calls: []ollamatest.Call{{Name: "write_file", Args: map[string]any{"path": "recipe.py", "content": string(fixed)}}}},
		ollamatest.Reply{Content: "Fixed."},
	)
	return func(req *api.ChatRequest) ollamatest.Reply {
		r := turns(req)
		if req.Options["seed"] != nil { // not the preflight
			r.Delay = delay
		}
		return r
	}
}

// proc is a bench process under test.
type proc struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
	done           chan error
	// started and signaled are when it started and was last signaled:
	// waitUpTo logs how long it took to end (figures, not assertions).
	started, signaled time.Time
}

// signal sends sig to the process.
func (p *proc) signal(sig syscall.Signal) {
	p.signaled = time.Now()
	_ = p.cmd.Process.Signal(sig)
}

func startBench(t *testing.T, args ...string) *proc {
	t.Helper()
	return startBenchEnv(t, nil, args...)
}

// startBenchEnv starts bench with more environment variables ("K=v").
func startBenchEnv(t *testing.T, env []string, args ...string) *proc {
	t.Helper()
	return startBenchIn(t, nil, env, args...)
}

// startBenchIn starts bench with stdin (nil: /dev/null) and more
// environment variables.
func startBenchIn(t *testing.T, stdin io.Reader, env []string, args ...string) *proc {
	t.Helper()
	if testing.Short() {
		t.Skip("runs bench processes")
	}
	p := &proc{cmd: exec.Command(benchBinary(t), args...), done: make(chan error, 1)}
	p.cmd.Stdin = stdin
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	p.cmd.Env = append(append(os.Environ(), "TMPDIR="+t.TempDir()), env...)
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p.started = time.Now()
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
	})
	return p
}

// wait waits for the process to end and returns its exit status.
func (p *proc) wait(t *testing.T) int {
	t.Helper()
	return p.waitUpTo(t, 3*time.Minute)
}

// waitUpTo is wait with another bound.
func (p *proc) waitUpTo(t *testing.T, d time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
		p.done <- nil // let the cleanup's receive through
	case <-time.After(d):
		t.Fatalf("bench did not end in %s\nstderr: %s", d, p.stderr.String())
	}
	code := p.cmd.ProcessState.ExitCode()
	if p.signaled.IsZero() {
		t.Logf("bench %s: exit %d, %s after its start", p.cmd.Args[1], code, time.Since(p.started).Round(time.Millisecond))
	} else {
		t.Logf("bench %s: exit %d, %s after the signal", p.cmd.Args[1], code, time.Since(p.signaled).Round(time.Millisecond))
	}
	return code
}

// stored counts the rows of a query in the DB, 0 if it cannot be read yet.
func stored(db, query string) int {
	s, err := results.OpenReadOnly(context.Background(), db)
	if err != nil {
		return 0
	}
	defer s.Close()
	var n int
	if err := s.DB().QueryRow(query).Scan(&n); err != nil {
		return 0
	}
	return n
}

func waitStored(t *testing.T, db string, n int, p *proc) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for stored(db, `SELECT count(*) FROM attempts`) < n {
		if time.Now().After(deadline) {
			t.Fatalf("fewer than %d attempts stored in time\nstderr: %s", n, p.stderr.String())
		}
		select {
		case <-p.done:
			p.done <- nil
			t.Fatalf("bench ended early: %s", p.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// checkComplete asserts the run holds exactly the planned attempts, each
// once, each finished with reward 1 (the scripted model always solves).
func checkComplete(t *testing.T, db, run string, attempts int) {
	t.Helper()
	q := func(query string) int { return stored(db, strings.ReplaceAll(query, "RUN", run)) }
	if got := q(`SELECT count(*) FROM attempts WHERE run_id='RUN'`); got != attempts {
		t.Errorf("attempt rows: %d, want %d", got, attempts)
	}
	if got := q(`SELECT count(DISTINCT idx) FROM attempts WHERE run_id='RUN'`); got != attempts {
		t.Errorf("distinct attempts: %d, want %d (lost or duplicated)", got, attempts)
	}
	if got := q(`SELECT count(*) FROM attempts WHERE run_id='RUN' AND status='finished' AND reward=1`); got != attempts {
		t.Errorf("attempts scored 1: %d, want %d (mis-scored)", got, attempts)
	}
	if got := q(`SELECT count(*) FROM attempts a WHERE run_id='RUN' AND (SELECT count(*) FROM turns WHERE attempt_id=a.id) != 2`); got != 0 {
		t.Errorf("attempts with a partial trajectory: %d", got)
	}
}

func runArgs(srv *ollamatest.Server, db, name string, attempts int) []string {
	return []string{"run", "--host", srv.URL, "--model", "fake", "--task", recipeTask,
		"--attempts", fmt.Sprint(attempts), "-j", "2", "--db", db, "--name", name, "--no-progress"}
}

// TestFaultSIGKILLThenResume: a bench killed mid-run and run again loses
// and doubles nothing, and once the resumed run is over, nothing of either
// process is left: no scratch folder (the attempts' folders) in TMPDIR,
// no lock file beside the database.
func TestFaultSIGKILLThenResume(t *testing.T) {
	srv := ollamatest.New(solveRecipeScript(t, 150*time.Millisecond))
	defer srv.Close()
	dir := t.TempDir()
	db := filepath.Join(dir, "bench.db")
	tmp := []string{"TMPDIR=" + t.TempDir()} // the same for both, as on one machine
	p := startBenchEnv(t, tmp, runArgs(srv, db, "killed", 8)...)
	waitStored(t, db, 2, p)
	if left, _ := filepath.Glob(filepath.Join(strings.TrimPrefix(tmp[0], "TMPDIR="), "bench-run-*")); len(left) == 0 {
		t.Fatalf("no scratch folder while the run runs: the test would not see one left behind")
	}
	p.signal(syscall.SIGKILL)
	p.wait(t)
	kept := stored(db, `SELECT count(*) FROM attempts`)

	p = startBenchEnv(t, tmp, runArgs(srv, db, "killed", 8)...)
	if code := p.wait(t); code != 0 {
		t.Fatalf("resume exit %d: %s", code, p.stderr.String())
	}
	if !strings.Contains(p.stderr.String(), fmt.Sprintf("%d attempts were already stored", kept)) {
		t.Errorf("resume did not keep the %d stored attempts: %s", kept, p.stderr.String())
	}
	checkComplete(t, db, "killed", 8)
	if left, _ := os.ReadDir(strings.TrimPrefix(tmp[0], "TMPDIR=")); len(left) > 0 {
		var names []string
		for _, e := range left {
			names = append(names, e.Name())
		}
		t.Errorf("left in TMPDIR after the resumed run: %v", names)
	}
	if locks, _ := filepath.Glob(filepath.Join(dir, "*.lock")); len(locks) > 0 {
		t.Errorf("lock files left beside the database: %v", locks)
	}
}

func TestFaultSIGINTStopsCleanly(t *testing.T) {
	srv := ollamatest.New(solveRecipeScript(t, 150*time.Millisecond))
	defer srv.Close()
	db := filepath.Join(t.TempDir(), "bench.db")
	p := startBench(t, runArgs(srv, db, "interrupted", 8)...)
	waitStored(t, db, 1, p)
	p.signal(syscall.SIGINT)
	if code := p.wait(t); code != 1 {
		t.Errorf("exit %d after SIGINT, want 1", code)
	}
	if !strings.Contains(p.stderr.String(), "bench run --resume interrupted") {
		t.Errorf("stderr does not say how to resume:\n%s", p.stderr.String())
	}
	if got := stored(db, `SELECT count(*) FROM runs WHERE status='interrupted'`); got != 1 {
		t.Errorf("run not marked interrupted")
	}
	p = startBench(t, "run", "--host", srv.URL, "--resume", "interrupted", "--db", db, "--no-progress")
	if code := p.wait(t); code != 0 {
		t.Fatalf("resume exit %d: %s", code, p.stderr.String())
	}
	checkComplete(t, db, "interrupted", 8)
}

func TestFaultTwoProcessesOneDB(t *testing.T) {
	srv := ollamatest.New(solveRecipeScript(t, 20*time.Millisecond))
	defer srv.Close()
	db := filepath.Join(t.TempDir(), "bench.db")
	a := startBench(t, runArgs(srv, db, "first", 6)...)
	b := startBench(t, runArgs(srv, db, "second", 6)...)
	for _, p := range []*proc{a, b} {
		if code := p.wait(t); code != 0 {
			t.Fatalf("exit %d: %s", code, p.stderr.String())
		}
	}
	checkComplete(t, db, "first", 6)
	checkComplete(t, db, "second", 6)
}

// mountTmpfs mounts a small tmpfs for the disk faults; it needs root.
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		if os.Getenv("BENCH_REQUIRE_FAULTS") == "1" {
			t.Fatalf("mount tmpfs: %v %s", err, out)
		}
		t.Skipf("cannot mount a tmpfs here (needs root): %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
	return dir
}

// chattr sets or clears the immutable attribute of files: the one way to
// make a file read-only for root, whom permission bits do not stop.
func chattr(t *testing.T, flag string, files ...string) {
	t.Helper()
	out, err := exec.Command("chattr", append([]string{flag}, files...)...).CombinedOutput()
	if err != nil {
		if os.Getenv("BENCH_REQUIRE_FAULTS") == "1" {
			t.Fatalf("chattr %s: %v %s", flag, err, out)
		}
		t.Skipf("cannot make files immutable here (needs root and a file system with attributes): %v %s", err, out)
	}
}

func TestFaultDBBecomesReadOnly(t *testing.T) {
	srv := ollamatest.New(solveRecipeScript(t, 150*time.Millisecond))
	defer srv.Close()
	db := filepath.Join(t.TempDir(), "bench.db")
	p := startBench(t, runArgs(srv, db, "ro", 8)...)
	waitStored(t, db, 2, p)
	files := []string{db, db + "-wal"}
	chattr(t, "+i", files...)
	t.Cleanup(func() { _ = exec.Command("chattr", append([]string{"-i"}, files...)...).Run() })
	code := p.wait(t)
	t.Logf("bench said:\n%s", p.stderr.String())
	if code != 1 {
		t.Errorf("exit %d with a read-only DB, want 1", code)
	}
	for _, want := range []string{"save attempt", "bench run --resume ro"} {
		if !strings.Contains(p.stderr.String(), want) {
			t.Errorf("stderr does not say %q:\n%s", want, p.stderr.String())
		}
	}
	chattr(t, "-i", files...)
	p = startBench(t, runArgs(srv, db, "ro", 8)...)
	if code := p.wait(t); code != 0 {
		t.Fatalf("resume exit %d: %s", code, p.stderr.String())
	}
	checkComplete(t, db, "ro", 8)
}

func TestFaultDiskFull(t *testing.T) {
	dir := mountTmpfs(t, "600k")
	srv := ollamatest.New(solveRecipeScript(t, 0))
	defer srv.Close()
	db := filepath.Join(dir, "bench.db")
	p := startBench(t, runArgs(srv, db, "full", 60)...)
	code := p.wait(t)
	t.Logf("bench said:\n%s", p.stderr.String())
	if code != 1 {
		t.Fatalf("exit %d on a full disk, want 1\nstderr: %s", code, p.stderr.String())
	}
	if !strings.Contains(p.stderr.String(), "full") || !strings.Contains(p.stderr.String(), "--resume full") {
		t.Errorf("stderr does not name the full disk and the way to resume:\n%s", p.stderr.String())
	}
	// Move the database to a disk with room, as a person would, and resume.
	big := t.TempDir()
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if b, err := os.ReadFile(db + suffix); err == nil {
			if err := os.WriteFile(filepath.Join(big, "bench.db"+suffix), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	moved := filepath.Join(big, "bench.db")
	if ok := stored(moved, `SELECT count(*) FROM pragma_integrity_check WHERE integrity_check='ok'`); ok != 1 {
		t.Fatalf("database damaged by the full disk")
	}
	kept := stored(moved, `SELECT count(*) FROM attempts`)
	if kept == 0 || kept >= 60 {
		t.Fatalf("%d attempts stored before the disk filled: the disk was not full mid-run", kept)
	}
	p = startBench(t, runArgs(srv, moved, "full", 60)...)
	if code := p.wait(t); code != 0 {
		t.Fatalf("resume exit %d: %s", code, p.stderr.String())
	}
	checkComplete(t, moved, "full", 60)
}

// A run whose bench was killed showed as running forever: bench runs tells
// it from a run in progress by the lock its bench holds, and a second
// bench cannot run a run already being run.
func TestFaultKilledRunShowsStale(t *testing.T) {
	srv := ollamatest.New(solveRecipeScript(t, 300*time.Millisecond))
	defer srv.Close()
	db := filepath.Join(t.TempDir(), "bench.db")
	p := startBench(t, runArgs(srv, db, "watched", 8)...)
	waitStored(t, db, 1, p)
	status := func() string {
		code, out, stderr := bench(t, "runs", "--db", db)
		if code != 0 {
			t.Fatalf("runs: exit %d: %s", code, stderr)
		}
		for _, l := range strings.Split(out, "\n") {
			if f := strings.Fields(l); len(f) > 3 && f[0] == "watched" {
				return f[3]
			}
		}
		t.Fatalf("runs lists no run watched:\n%s", out)
		return ""
	}
	if s := status(); s != "running" {
		t.Errorf("status while its bench runs it: %q, want running", s)
	}
	second := startBench(t, runArgs(srv, db, "watched", 8)...)
	if code := second.wait(t); code != exitCannotStart || !strings.Contains(second.stderr.String(), "is being run by pid") {
		t.Errorf("a second bench on the same run: exit %d, stderr %s", code, second.stderr.String())
	}
	p.signal(syscall.SIGKILL)
	p.wait(t)
	if s := status(); s != "stale" {
		t.Errorf("status after its bench was killed: %q, want stale", s)
	}
	code, out, _ := bench(t, "runs", "--db", db)
	if code != 0 || !strings.Contains(out, "bench run --resume watched") {
		t.Errorf("runs does not say how to continue the stale run:\n%s", out)
	}
}

// TestFaultSIGINTDuringHiddenTests: Ctrl-C while an attempt's hidden tests
// run stops them at once (they are killed with their sandbox), drops the
// attempt, which is not scored and runs again on resume, and leaves no
// process behind. bench does not wait for the tests to finish.
func TestFaultSIGINTDuringHiddenTests(t *testing.T) {
	const marker = "sleep 4737"
	dir := filepath.Join(t.TempDir(), "slow-tests")
	for name, body := range map[string]string{
		"task.toml":       "format = 1\ninstruction = \"x\"\n[tests]\ncommand = \"" + marker + "\"\ntimeout = \"10m\"\n",
		"workspace/a.txt": "a",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv := ollamatest.New(ollamatest.Turns(ollamatest.Reply{Content: "done"}))
	defer srv.Close()
	db := filepath.Join(t.TempDir(), "bench.db")
	p := startBench(t, "run", "--host", srv.URL, "--model", "fake", "--task", dir, "--attempts", "1",
		"--db", db, "--name", "slow", "--no-progress")
	for deadline := time.Now().Add(2 * time.Minute); len(processesWith(marker)) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the hidden tests never started\nstderr: %s", p.stderr.String())
		}
	}
	sent := time.Now()
	p.signal(syscall.SIGINT)
	if code := p.wait(t); code != 1 {
		t.Errorf("exit %d after SIGINT, want 1\nstderr: %s", code, p.stderr.String())
	}
	// A figure, not an assertion: the machine may be loaded.
	t.Logf("SIGINT to exit with the hidden tests running: %s", time.Since(sent).Round(time.Millisecond))
	if left := processesWith(marker); len(left) > 0 {
		t.Errorf("the hidden tests outlived bench: %v", left)
	}
	if got := stored(db, `SELECT count(*) FROM attempts WHERE status = 'finished'`); got != 0 {
		t.Errorf("%d attempts stored as scored, want none: the interrupted one runs again on resume", got)
	}
	if !strings.Contains(p.stderr.String(), "bench run --resume slow") {
		t.Errorf("stderr does not say how to resume:\n%s", p.stderr.String())
	}
}

// processesWith lists the processes whose command line holds marker.
func processesWith(marker string) []string {
	var out []string
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		if cmd := strings.ReplaceAll(string(b), "\x00", " "); strings.Contains(cmd, marker) && !strings.Contains(cmd, "bwrap") {
			out = append(out, filepath.Base(filepath.Dir(p))+": "+cmd)
		}
	}
	return out
}

// phase is a part of a run's talk with the model server, told from the
// request: a fault test makes the server go silent in one of them.
type phase struct {
	name string
	is   func(path string, body []byte) bool
}

// phases are the parts of a run in the order it reaches them: the check
// of the model (its identity, its context length), the measurement of the
// tools' prompt tokens (chat requests without a seed), the attempts' chat.
var phases = []phase{
	{"preflight", func(path string, _ []byte) bool { return path == "/api/tags" || path == "/api/show" }},
	{"overhead", func(path string, body []byte) bool {
		return path == "/api/chat" && !bytes.Contains(body, []byte(`"seed"`))
	}},
	{"chat", func(path string, body []byte) bool {
		return path == "/api/chat" && bytes.Contains(body, []byte(`"seed"`))
	}},
}

// silentIn fronts srv with a server that accepts every connection and
// reads every request, but never answers those of the phase: a model
// server that hangs. The others are passed on to srv.
func silentIn(t *testing.T, srv *ollamatest.Server, ph phase) string {
	t.Helper()
	target, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	release := make(chan struct{})
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if ph.is(r.URL.Path, body) {
			select {
			case <-r.Context().Done(): // bench gave up on it
			case <-release: // the test is over
			}
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		close(release)
		front.Close()
	})
	return front.URL
}

// A model server that accepts connections and never answers, in any
// phase of a run, is bounded by --request-timeout (the check of the model
// by its own bound): bench ends on its own, says what went wrong and what
// to do, and scores nothing. Silent before the first attempt, nothing is
// stored and the exit status is 2 (cannot start); silent in the attempts'
// chat, they end as infrastructure failures, retried, not scored, and the
// run ends with exitNotScored.
func TestFaultSilentServer(t *testing.T) {
	cases := map[string]struct {
		code int
		says []string
	}{
		"preflight": {exitCannotStart, []string{"no reply", "No attempt was stored"}},
		"overhead":  {exitCannotStart, []string{"no reply within 2s", "--request-timeout", "No attempt was stored"}},
		"chat":      {exitNotScored, []string{"not scored", "bench run --resume silent"}},
	}
	for _, ph := range phases {
		t.Run(ph.name, func(t *testing.T) {
			want := cases[ph.name]
			srv := ollamatest.New(solveRecipeScript(t, 0))
			defer srv.Close()
			db := filepath.Join(t.TempDir(), "bench.db")
			sent := time.Now()
			p := startBench(t, "run", "--host", silentIn(t, srv, ph), "--model", "fake", "--task", recipeTask,
				"--attempts", "2", "-j", "2", "--db", db, "--name", "silent", "--no-progress",
				"--request-timeout", "2s", "--max-tries", "2")
			code := p.waitUpTo(t, 90*time.Second)
			t.Logf("silent in %s: exit %d after %s\n%s", ph.name, code, time.Since(sent).Round(time.Millisecond), p.stderr.String())
			if code != want.code {
				t.Errorf("exit %d, want %d", code, want.code)
			}
			for _, s := range want.says {
				if !strings.Contains(p.stderr.String(), s) {
					t.Errorf("stderr does not say %q", s)
				}
			}
			if got := stored(db, `SELECT count(*) FROM attempts WHERE status = 'finished'`); got != 0 {
				t.Errorf("%d attempts scored with a silent model server", got)
			}
			if code != exitNotScored {
				return
			}
			// Not shown as plainly finished: its attempts are not scored.
			code, out, _ := bench(t, "runs", "--db", db)
			if f := strings.Fields(strings.Split(out, "\n")[1]); code != 0 || len(f) < 4 || f[3] != statusIncomplete || !strings.Contains(out, "bench run --resume silent") {
				t.Errorf("bench runs after a run with attempts not scored:\n%s", out)
			}
		})
	}
}

// stopAtFirstAttempt stops srv once the first attempt's request has
// reached it, and starts it again after outage (never, if outage is 0).
// It returns when the server is stopped.
func stopAtFirstAttempt(t *testing.T, srv *ollamatest.Server, p *proc, outage time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(5 * time.Millisecond) {
		n := 0
		for _, r := range srv.Requests() {
			if r.Options["seed"] != nil {
				n++
			}
		}
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no attempt reached the model\nstderr: %s", p.stderr.String())
		}
	}
	srv.Stop()
	if outage > 0 {
		time.AfterFunc(outage, func() {
			if err := srv.Start(); err != nil {
				t.Error(err)
			}
		})
	}
}

// An outage of the model server longer than the retries' backoff costs
// the attempts no try: they wait for the server to come back rather than
// fail against it, and all are scored. An outage longer than --max-wait
// ends them as infrastructure failures, not scored, exit exitNotScored.
func TestFaultOutage(t *testing.T) {
	cases := []struct {
		name     string
		outage   time.Duration // 0: for good
		maxWait  string
		code     int
		finished int
	}{
		// The retries of the old way end 2s after the first failure; the
		// server is back after 4s, and bench's probe finds it at 5s.
		{"longer than the retries", 4 * time.Second, "5m", exitOK, 4},
		{"longer than --max-wait", 0, "3s", exitNotScored, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := ollamatest.New(solveRecipeScript(t, 300*time.Millisecond))
			defer srv.Close()
			db := filepath.Join(t.TempDir(), "bench.db")
			// Two tries with a backoff of 2s: the outage outlasts them.
			p := startBench(t, append(runArgs(srv, db, "outage", 4), "--max-tries", "2", "--max-wait", tc.maxWait)...)
			sent := time.Now()
			stopAtFirstAttempt(t, srv, p, tc.outage)
			code := p.waitUpTo(t, 2*time.Minute)
			t.Logf("outage %s: exit %d after %s\n%s", tc.name, code, time.Since(sent).Round(time.Millisecond), p.stderr.String())
			if code != tc.code {
				t.Errorf("exit %d, want %d", code, tc.code)
			}
			if got := stored(db, `SELECT count(*) FROM attempts WHERE status = 'finished' AND reward = 1`); got != tc.finished {
				t.Errorf("attempts scored 1: %d, want %d", got, tc.finished)
			}
			if got := stored(db, `SELECT count(*) FROM attempts WHERE status = 'finished' AND reward = 0`); got != 0 {
				t.Errorf("%d attempts scored 0 for an outage", got)
			}
			if tc.code == exitOK {
				checkComplete(t, db, "outage", 4)
				return
			}
			if got := stored(db, `SELECT count(DISTINCT idx) FROM attempts WHERE status = 'infra_error'`); got != 4 {
				t.Errorf("infrastructure failures: %d, want 4", got)
			}
		})
	}
}

// A run whose database fits on the disk is not stopped by its WAL: the
// store checkpoints it as the run goes and keeps it small, where it grew
// to ten times the database (2.8 MB for 250 KB) and filled a small disk
// first. The disk here holds the database (about 13 KB an attempt) and
// the bounded WAL (at most about 600 KB) with room to spare, but not an
// unchecked WAL beside it (about 100 KB an attempt until 4 MB).
func TestFaultSmallDiskWAL(t *testing.T) {
	const attempts = 24
	dir := mountTmpfs(t, "1200k")
	srv := ollamatest.New(solveRecipeScript(t, 0))
	defer srv.Close()
	db := filepath.Join(dir, "bench.db")
	var peak int64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			if fi, err := os.Stat(db + "-wal"); err == nil && fi.Size() > peak {
				peak = fi.Size()
			}
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	p := startBench(t, runArgs(srv, db, "small", attempts)...)
	code := p.wait(t)
	close(stop)
	<-sampled
	fi, err := os.Stat(db)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("database %d KB, WAL at most %d KB during the run", fi.Size()/1024, peak/1024)
	if code != 0 {
		t.Fatalf("exit %d on a disk that holds the database\nstderr: %s", code, p.stderr.String())
	}
	checkComplete(t, db, "small", attempts)
	if left, err := os.Stat(db + "-wal"); err == nil && left.Size() > 0 {
		t.Errorf("the WAL holds %d bytes after the run: it is not checkpointed at the end", left.Size())
	}
}

// TestFaultSIGTERM: SIGTERM, as a service manager or a CI runner sends it,
// stops each long-running command in an orderly way: the command's own
// message says what becomes of the work in progress, the exit status is
// the table's, nothing it started is left running.
func TestFaultSIGTERM(t *testing.T) {
	const marker = "sleep 4738"
	slowTask := filepath.Join(t.TempDir(), "slow-tests")
	for name, body := range map[string]string{
		"task.toml":         "format = 1\ninstruction = \"x\"\n[tests]\ncommand = \"" + marker + "\"\ntimeout = \"10m\"\n",
		"workspace/a.txt":   "a",
		"solution/solve.sh": "true\n",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(slowTask, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(slowTask, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	viewDB := filepath.Join(t.TempDir(), "view.db")
	s, err := results.Open(context.Background(), viewDB)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	slowModel := ollamatest.New(func(req *api.ChatRequest) ollamatest.Reply {
		return ollamatest.Reply{Content: "ok", Delay: time.Minute}
	})
	defer slowModel.Close()
	srv := ollamatest.New(solveRecipeScript(t, 300*time.Millisecond))
	defer srv.Close()
	runDB := filepath.Join(t.TempDir(), "bench.db")
	stdin, keepOpen, err := os.Pipe() // an MCP client that stays connected
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	defer keepOpen.Close()

	cases := []struct {
		command string
		args    []string
		stdin   io.Reader
		busy    func(p *proc) bool // the command is at work
		code    int
		says    string
	}{
		{"run", runArgs(srv, runDB, "term", 8), nil,
			func(*proc) bool { return stored(runDB, `SELECT count(*) FROM attempts`) > 0 },
			exitFailed, "bench run: stopping: attempts in flight are dropped and run again on resume"},
		{"validate", []string{"validate", slowTask}, nil,
			func(*proc) bool { return len(processesWith(marker)) > 0 },
			exitFailed, "bench validate: stopping"},
		{"view", []string{"view", "--db", viewDB, "--addr", "127.0.0.1:0"}, nil,
			func(p *proc) bool { return strings.Contains(p.stdout.String(), "serving") },
			exitOK, "bench view: stopping the web view"},
		{"overhead", []string{"overhead", "--host", slowModel.URL, "--model", "fake"}, nil,
			func(*proc) bool { return len(slowModel.Requests()) > 0 },
			exitFailed, "bench overhead: stopping"},
		{"mcp serve", []string{"mcp", "serve", "issues", "--file", issuesFile(t)}, stdin,
			func(*proc) bool { return true },
			exitOK, "bench mcp: stopping"},
	}
	for _, tc := range cases {
		t.Run(tc.command, func(t *testing.T) {
			p := startBenchIn(t, tc.stdin, nil, tc.args...)
			for deadline := time.Now().Add(2 * time.Minute); !tc.busy(p); time.Sleep(20 * time.Millisecond) {
				select {
				case <-p.done:
					p.done <- nil
					t.Fatalf("bench %s ended before the signal: %s", tc.command, p.stderr.String())
				default:
				}
				if time.Now().After(deadline) {
					t.Fatalf("bench %s never got to work\nstderr: %s", tc.command, p.stderr.String())
				}
			}
			time.Sleep(100 * time.Millisecond) // past the start of its work
			sent := time.Now()
			p.signal(syscall.SIGTERM)
			code := p.wait(t)
			// A figure, not an assertion: the machine may be loaded.
			t.Logf("bench %s: SIGTERM to exit %d in %s", tc.command, code, time.Since(sent).Round(time.Millisecond))
			if code != tc.code {
				t.Errorf("exit %d, want %d\nstderr: %s", code, tc.code, p.stderr.String())
			}
			if !strings.Contains(p.stderr.String(), tc.says) {
				t.Errorf("stderr does not say %q:\n%s", tc.says, p.stderr.String())
			}
			if tc.command != "run" && strings.Contains(p.stderr.String(), "run again on resume") {
				t.Errorf("bench %s speaks of bench run's attempts:\n%s", tc.command, p.stderr.String())
			}
			if left := processesWith(marker); len(left) > 0 {
				t.Errorf("left running: %v", left)
			}
		})
	}
	if !t.Failed() {
		// The run stopped by SIGTERM is resumed, whole.
		p := startBench(t, runArgs(srv, runDB, "term", 8)...)
		if code := p.wait(t); code != 0 {
			t.Fatalf("resume after SIGTERM: exit %d: %s", code, p.stderr.String())
		}
		checkComplete(t, runDB, "term", 8)
	}
}
