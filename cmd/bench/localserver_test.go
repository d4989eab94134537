//go:build linux

package main

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ollama/ollama/api"
	"golang.org/x/sys/unix"

	"github.com/benchhq/bench/internal/ollamatest"
)

// These tests run real bench processes as a new user meets them: no
// Ollama server at the default address, an `ollama` command on PATH (a
// stand-in: this test binary, serving the fake Ollama server with its
// pull API), and bench starting it, pulling the model, and stopping it
// on every way out. Each bench runs in a network namespace of its own,
// so that Ollama's default address, 127.0.0.1:11434, is its alone: the
// machine's own port (a real Ollama, another test) is never touched.

// The roles this test binary plays when run by a test, by testRole.
const (
	testRole     = "BENCH_TEST_ROLE"
	roleOllama   = "ollama" // the stand-in `ollama serve`
	roleNetns    = "netns"  // brings up lo in a fresh network namespace, then execs bench
	roleSquatter = "squat"  // something that is not Ollama on 127.0.0.1:11434

	// fakeState is the folder where the stand-in ollama says what
	// happened to it: "started" (its pid), "chat" (a chat arrived),
	// "stopped" (it got SIGTERM and left).
	fakeState = "FAKE_OLLAMA_STATE"
	// fakePullFail makes its pulls fail midway with this error.
	fakePullFail = "FAKE_OLLAMA_PULL_FAIL"
	// fakeChatDelay holds every chat reply back this long.
	fakeChatDelay = "FAKE_OLLAMA_CHAT_DELAY"
	// netnsExec is the program the netns role runs; netnsSquat asks it
	// to put a squatter on the port first.
	netnsExec  = "BENCH_TEST_NETNS_EXEC"
	netnsSquat = "BENCH_TEST_NETNS_SQUAT"
)

func init() {
	switch os.Getenv(testRole) {
	case roleOllama:
		fakeOllamaMain()
	case roleNetns:
		netnsMain()
	case roleSquatter:
		squatterMain()
	}
}

// fakeOllamaMain is `ollama serve` as the stand-in plays it.
func fakeOllamaMain() {
	if len(os.Args) < 2 || os.Args[1] != "serve" {
		fmt.Fprintf(os.Stderr, "fake ollama: only serve is played, not %q\n", os.Args[1:])
		os.Exit(2)
	}
	state := os.Getenv(fakeState)
	mark := func(name, text string) { _ = os.WriteFile(filepath.Join(state, name), []byte(text), 0o644) }
	addr := os.Getenv("OLLAMA_HOST")
	if addr == "" {
		addr = "127.0.0.1:11434"
	}
	delay, _ := time.ParseDuration(os.Getenv(fakeChatDelay))
	script := func(req *api.ChatRequest) ollamatest.Reply {
		mark("chat", "")
		return ollamatest.Reply{Content: "I cannot do that.", Delay: delay}
	}
	pullable := ollamatest.Pullable{Name: "qwen3:0.6b", Layers: []int64{4e6, 1e3}, Step: 1e6}
	if msg := os.Getenv(fakePullFail); msg != "" {
		pullable.FailAfter, pullable.Error = 2e6, msg
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	srv, err := ollamatest.NewAt(addr, script, ollamatest.WithPullable(pullable))
	if err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "fake ollama: Listening on %s (version 0.17.4)\n", addr)
	mark("started", fmt.Sprint(os.Getpid()))
	sig := <-sigs
	srv.Close()
	mark("stopped", sig.String())
	os.Exit(0)
}

// netnsMain runs, as the first process of a fresh network namespace,
// what makes it usable (lo up: 127.0.0.1 answers nothing until then),
// then becomes bench.
func netnsMain() {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM, 0)
	if err == nil {
		var ifr *unix.Ifreq
		if ifr, err = unix.NewIfreq("lo"); err == nil {
			if err = unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err == nil {
				ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
				err = unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
			}
		}
		unix.Close(fd)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "netns: lo up:", err)
		os.Exit(97)
	}
	env := withoutVars(os.Environ(), testRole, netnsExec, netnsSquat)
	if os.Getenv(netnsSquat) != "" {
		cmd := exec.Command("/proc/self/exe")
		cmd.Env = append(withoutVars(os.Environ(), testRole), testRole+"="+roleSquatter)
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "netns: squatter:", err)
			os.Exit(97)
		}
		if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
			fmt.Fprintln(os.Stderr, "netns: squatter did not listen")
			os.Exit(97)
		}
	}
	bin := os.Getenv(netnsExec)
	err = syscall.Exec(bin, append([]string{"bench"}, os.Args[1:]...), env)
	fmt.Fprintln(os.Stderr, "netns: exec bench:", err)
	os.Exit(97)
}

// squatterMain serves a web page on Ollama's port.
func squatterMain() {
	srv := &http.Server{Addr: "127.0.0.1:11434", Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><body>My dev server</body></html>")
	})}
	ln, err := net.Listen("tcp", srv.Addr)
	if err != nil {
		os.Exit(1)
	}
	fmt.Println("listening")
	_ = srv.Serve(ln)
	os.Exit(0)
}

func withoutVars(env []string, names ...string) []string {
	var out []string
	for _, kv := range env {
		keep := true
		for _, n := range names {
			if strings.HasPrefix(kv, n+"=") {
				keep = false
			}
		}
		if keep {
			out = append(out, kv)
		}
	}
	return out
}

// localWorld is a bench's world for one test: a network namespace of its
// own, a PATH with the stand-in ollama or without any, a database folder.
type localWorld struct {
	t     *testing.T
	dir   string
	db    string
	state string
	path  string
	env   []string
	squat bool
	noBin bool
}

func newLocalWorld(t *testing.T) *localWorld {
	t.Helper()
	if testing.Short() {
		t.Skip("runs bench processes")
	}
	dir := t.TempDir()
	w := &localWorld{t: t, dir: dir, db: filepath.Join(dir, "bench.db"), state: filepath.Join(dir, "state")}
	if err := os.Mkdir(w.state, 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf("#!/bin/sh\n%s=%s exec %q \"$@\"\n", testRole, roleOllama, self)
	if err := os.WriteFile(filepath.Join(bin, "ollama"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	// The machine's own ollama, if any, is never what bench finds.
	var keep []string
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(d, "ollama")); err != nil {
			keep = append(keep, d)
		}
	}
	w.path = strings.Join(keep, string(os.PathListSeparator))
	return w
}

// start starts bench with args in the world's network namespace.
func (w *localWorld) start(args ...string) *proc {
	w.t.Helper()
	self, _ := os.Executable()
	p := &proc{cmd: exec.Command(self, args...), done: make(chan error, 1)}
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	path := filepath.Join(w.dir, "bin") + string(os.PathListSeparator) + w.path
	if w.noBin {
		path = w.path
	}
	env := withoutVars(os.Environ(), "OLLAMA_HOST", "PATH")
	env = append(env, "PATH="+path, "TMPDIR="+w.t.TempDir(), fakeState+"="+w.state,
		testRole+"="+roleNetns, netnsExec+"="+benchBinary(w.t))
	if w.squat {
		env = append(env, netnsSquat+"=1")
	}
	p.cmd.Env = append(env, w.env...)
	p.cmd.Dir = w.dir
	attr := &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
	if os.Geteuid() != 0 {
		attr.Cloneflags |= syscall.CLONE_NEWUSER
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Geteuid(), HostID: os.Geteuid(), Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getegid(), HostID: os.Getegid(), Size: 1}}
	}
	p.cmd.SysProcAttr = attr
	if err := p.cmd.Start(); err != nil {
		w.t.Skipf("cannot make a network namespace here: %v", err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	w.t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
	})
	return p
}

func (w *localWorld) marked(name string) (string, bool) {
	b, err := os.ReadFile(filepath.Join(w.state, name))
	return string(b), err == nil
}

// checkStopped checks that the stand-in ollama was started and has been
// stopped by SIGTERM, and is gone.
func (w *localWorld) checkStopped(p *proc) {
	w.t.Helper()
	pid, ok := w.marked("started")
	if !ok {
		w.t.Fatalf("bench did not start ollama serve\nstderr: %s", p.stderr.String())
	}
	if sig, ok := w.marked("stopped"); !ok || sig != "terminated" {
		w.t.Errorf("ollama serve (pid %s) was not stopped by SIGTERM (%q)\nstderr: %s", pid, sig, p.stderr.String())
	}
	var n int
	fmt.Sscan(pid, &n)
	if n > 0 {
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", n)); err == nil && !strings.Contains(string(b), ") Z ") {
			w.t.Errorf("ollama serve (pid %d) still runs after bench ended", n)
		}
	}
	if !strings.Contains(p.stderr.String(), "started `ollama serve`") || !strings.Contains(p.stderr.String(), "stopped the `ollama serve`") {
		w.t.Errorf("bench did not say it started and stopped ollama serve:\n%s", p.stderr.String())
	}
	log, err := os.ReadFile(filepath.Join(w.dir, "bench.ollama.log"))
	if err != nil || !strings.Contains(string(log), "fake ollama: Listening on 127.0.0.1:11434") {
		w.t.Errorf("ollama serve's log next to the database: %q, %v", log, err)
	}
}

// checkNothingStored checks that no database was left.
func (w *localWorld) checkNothingStored() {
	w.t.Helper()
	if _, err := os.Stat(w.db); !os.IsNotExist(err) {
		w.t.Errorf("%s left behind (%v)", w.db, err)
	}
}

func localRunArgs(w *localWorld, model string, more ...string) []string {
	return append([]string{"run", "--model", model, "--task", filepath.Join(mustAbs(w.t, recipeTask)), "--attempts", "1", "--db", w.db}, more...)
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// A first run on a machine with Ollama installed and not running: bench
// starts it, pulls the model (a line per stage, no terminal), runs, and
// stops it.
func TestFirstRunStartsOllamaAndPulls(t *testing.T) {
	w := newLocalWorld(t)
	p := w.start(localRunArgs(w, "qwen3:0.6b")...)
	if code := p.wait(t); code != 0 {
		t.Fatalf("exit %d\nstderr: %s", code, p.stderr.String())
	}
	t.Logf("what the user sees:\n%s", p.stderr.String())
	w.checkStopped(p)
	for _, want := range []string{"pull qwen3:0.6b on http://127.0.0.1:11434: pulling manifest", "(4 MB)", "pull qwen3:0.6b on http://127.0.0.1:11434: success", "pulled qwen3:0.6b (4 MB) onto http://127.0.0.1:11434"} {
		if !strings.Contains(p.stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, p.stderr.String())
		}
	}
	if n := stored(w.db, `SELECT count(*) FROM attempts`); n != 1 {
		t.Errorf("%d attempts stored, want 1", n)
	}
}

// Every way out stops the server bench started; bad input is one line,
// exit status 2, and nothing stored.
func TestStartedOllamaStoppedOnEveryWayOut(t *testing.T) {
	t.Run("unknown model", func(t *testing.T) {
		w := newLocalWorld(t)
		p := w.start(localRunArgs(w, "qwen3:nope")...)
		if code := p.wait(t); code != 2 {
			t.Fatalf("exit %d, want 2\nstderr: %s", code, p.stderr.String())
		}
		line := errorLine(t, p.stderr.String())
		if !strings.Contains(line, "pull qwen3:nope on http://127.0.0.1:11434 failed: pull model manifest: file does not exist") {
			t.Errorf("error line %q", line)
		}
		w.checkStopped(p)
		w.checkNothingStored()
	})
	t.Run("error midway", func(t *testing.T) {
		w := newLocalWorld(t)
		w.env = []string{fakePullFail + "=write /root/.ollama/models/blobs/sha256-x-partial: no space left on device"}
		p := w.start(localRunArgs(w, "qwen3:0.6b")...)
		if code := p.wait(t); code != 2 {
			t.Fatalf("exit %d, want 2\nstderr: %s", code, p.stderr.String())
		}
		line := errorLine(t, p.stderr.String())
		if !strings.Contains(line, "failed after 1 MB of 4 MB: write /root/.ollama/models/blobs/sha256-x-partial: no space left on device") {
			t.Errorf("error line %q", line)
		}
		w.checkStopped(p)
		w.checkNothingStored()
	})
	t.Run("SIGINT", func(t *testing.T) {
		w := newLocalWorld(t)
		w.env = []string{fakeChatDelay + "=10m"}
		p := w.start(localRunArgs(w, "qwen3:0.6b", "--no-progress")...)
		deadline := time.Now().Add(2 * time.Minute)
		for {
			if _, ok := w.marked("chat"); ok {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no chat reached ollama serve\nstderr: %s", p.stderr.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
		if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		if code := p.waitUpTo(t, time.Minute); code == 0 {
			t.Errorf("exit 0 after SIGINT\nstderr: %s", p.stderr.String())
		}
		w.checkStopped(p)
	})
	// Killed outright (SIGKILL, a second Ctrl-C), bench stops nothing
	// itself: the server gets SIGTERM from the kernel as its parent dies.
	t.Run("SIGKILL", func(t *testing.T) {
		w := newLocalWorld(t)
		w.env = []string{fakeChatDelay + "=10m"}
		p := w.start(localRunArgs(w, "qwen3:0.6b", "--no-progress")...)
		deadline := time.Now().Add(2 * time.Minute)
		for {
			if _, ok := w.marked("chat"); ok {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no chat reached ollama serve\nstderr: %s", p.stderr.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
		if err := p.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		p.waitUpTo(t, time.Minute)
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if sig, ok := w.marked("stopped"); ok {
				if sig != "terminated" {
					t.Errorf("stopped by %q, want SIGTERM", sig)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("ollama serve outlived a bench killed with SIGKILL")
			}
		}
	})
	t.Run("overhead", func(t *testing.T) {
		w := newLocalWorld(t)
		p := w.start("overhead", "--model", "qwen3:0.6b", "--tools", "read_file")
		if code := p.wait(t); code != 0 {
			t.Fatalf("exit %d\nstderr: %s", code, p.stderr.String())
		}
		w.checkStopped(p)
		if !strings.Contains(p.stdout.String(), "read_file") {
			t.Errorf("no measurement:\n%s", p.stdout.String())
		}
	})
}

// An address the operator gives is only ever asked, never started; what
// answers at the default address that is not Ollama is not used; with no
// ollama command bench says how to install it.
func TestOllamaNotStarted(t *testing.T) {
	for _, tt := range []struct {
		name  string
		setup func(w *localWorld) []string
		want  []string
	}{
		{"--host given", func(w *localWorld) []string { return localRunArgs(w, "qwen3:0.6b", "--host", "http://127.0.0.1:11434") },
			[]string{"no server answers at http://127.0.0.1:11434", "ollama serve"}},
		{"OLLAMA_HOST given", func(w *localWorld) []string {
			w.env = []string{"OLLAMA_HOST=127.0.0.1:11434"}
			return localRunArgs(w, "qwen3:0.6b")
		}, []string{"no server answers at http://127.0.0.1:11434"}},
		{"overhead --host given", func(w *localWorld) []string {
			return []string{"overhead", "--model", "qwen3:0.6b", "--host", "127.0.0.1:11434"}
		}, []string{"no server answers at http://127.0.0.1:11434"}},
		{"port taken by something else", func(w *localWorld) []string {
			w.squat = true
			return localRunArgs(w, "qwen3:0.6b")
		}, []string{"something that is not Ollama answers at http://127.0.0.1:11434 (GET /api/version: HTTP 200 <html><body>My dev server</body></html>)"}},
		{"no ollama command", func(w *localWorld) []string {
			w.noBin = true
			return localRunArgs(w, "qwen3:0.6b")
		}, []string{"no Ollama server answers at http://127.0.0.1:11434 and no `ollama` command is on PATH",
			"curl -fsSL https://ollama.com/install.sh | sh", "then run `bench run --model qwen3:0.6b --task ", "bench starts `ollama serve` itself"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newLocalWorld(t)
			p := w.start(tt.setup(w)...)
			if code := p.wait(t); code != 2 {
				t.Errorf("exit %d, want 2\nstderr: %s", code, p.stderr.String())
			}
			line := errorLine(t, p.stderr.String())
			for _, want := range tt.want {
				if !strings.Contains(line, want) {
					t.Errorf("error line %q lacks %q", line, want)
				}
			}
			if _, ok := w.marked("started"); ok {
				t.Errorf("ollama serve was started:\n%s", p.stderr.String())
			}
			w.checkNothingStored()
		})
	}
}
