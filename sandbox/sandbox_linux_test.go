package sandbox_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/sandbox"
)

// testSandbox returns the bubblewrap sandbox of this machine, or skips the
// test when there is none, unless BENCH_REQUIRE_BWRAP=1 asks for a failure.
func testSandbox(t *testing.T) *sandbox.Sandbox {
	t.Helper()
	sb, err := sandbox.New(context.Background(), sandbox.Required)
	if err != nil {
		if os.Getenv("BENCH_REQUIRE_BWRAP") == "1" {
			t.Fatalf("BENCH_REQUIRE_BWRAP=1 but %v", err)
		}
		t.Skipf("no sandbox on this machine (set BENCH_REQUIRE_BWRAP=1 to fail instead): %v", err)
	}
	t.Logf("sandbox: %s", sb)
	return sb
}

// offSandbox returns the sandbox of the Off mode.
func offSandbox(t *testing.T) *sandbox.Sandbox {
	t.Helper()
	sb, err := sandbox.New(context.Background(), sandbox.Off)
	if err != nil {
		t.Skipf("no process namespaces here: %v", err)
	}
	return sb
}

// launcher is what the runner gives run_command: spec, in the command's folder.
func launcher(sb *sandbox.Sandbox, spec sandbox.Spec) agent.Launcher {
	return func(ctx context.Context, dir string, argv, env []string) (*exec.Cmd, error) {
		s := spec
		s.Dir = dir
		return sb.Command(ctx, s, argv, env)
	}
}

// runIn runs a command with the real run_command tool under a launcher.
func runIn(t *testing.T, ws *agent.Workspace, launch agent.Launcher, command string, timeout int) agent.Result {
	t.Helper()
	var tool agent.Tool
	for _, tl := range agent.Builtins(ws, agent.BuiltinOptions{Launch: launch, OutputCap: 4096}) {
		if tl.Spec().Name == "run_command" {
			tool = tl
		}
	}
	res, err := tool.Call(context.Background(), map[string]any{"command": command, "timeout_seconds": timeout})
	if err != nil {
		t.Fatalf("run_command %q: %v", command, err)
	}
	return res
}

// leftovers lists the processes whose command line holds marker.
func leftovers(marker string) []string {
	var out []string
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		cmd := strings.ReplaceAll(string(b), "\x00", " ")
		if strings.Contains(cmd, marker) && !strings.Contains(cmd, "bwrap") {
			out = append(out, filepath.Base(filepath.Dir(p))+": "+cmd)
		}
	}
	return out
}

// waitGone fails when a process holds marker: run_command returns only
// once the kernel has ended the command's namespace, timeouts included, so
// there is nothing to wait for.
func waitGone(t *testing.T, marker string) {
	t.Helper()
	if left := leftovers(marker); len(left) > 0 {
		t.Fatalf("%d processes outlived the command, e.g. %s", len(left), left[0])
	}
}

func TestSandboxEscapesFail(t *testing.T) {
	sb := testSandbox(t)

	// An attempt's folder: the workspace, and beside it hidden tests. The
	// operator's home holds an SSH key; the environment holds a token.
	base := t.TempDir()
	attempt := filepath.Join(base, "attempt")
	wsDir := filepath.Join(attempt, "workspace")
	testsDir := filepath.Join(attempt, "tests")
	home := filepath.Join(base, "home")
	for dir, files := range map[string]map[string]string{
		wsDir:                         {"main.py": "print('hi')\n"},
		testsDir:                      {"test_hidden.py": "TESTS-SECRET\n"},
		filepath.Join(home, ".ssh"):   {"id_rsa": "SSH-SECRET\n"},
		filepath.Join(attempt, "etc"): {},
	} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, body := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Setenv("HOME", home)
	t.Setenv("BENCH_TEST_TOKEN", "ENV-SECRET")
	ws, err := agent.NewWorkspace(wsDir)
	if err != nil {
		t.Fatal(err)
	}
	limits := sandbox.Limits{Procs: 64, Memory: 1 << 30, FileSize: 1 << 20, Tmp: 8 << 20}
	homeDir := filepath.Join(attempt, "home")
	if err := os.Mkdir(homeDir, 0o700); err != nil {
		t.Fatal(err)
	}
	wrap := launcher(sb, sandbox.Spec{Limits: limits, Home: homeDir, User: sb.NewUser()})

	t.Run("the workspace is usable", func(t *testing.T) {
		res := runIn(t, ws, wrap, "echo made > made.txt && cat main.py && mkdir -p sub && cd / && cd "+wsDir+" && echo tmp > /tmp/x && cat /tmp/x", 30)
		if res.IsError || !strings.Contains(res.Text, "print('hi')") || !strings.Contains(res.Text, "tmp") {
			t.Fatalf("plain work failed in the sandbox:\n%s", res.Text)
		}
		if b, err := os.ReadFile(filepath.Join(wsDir, "made.txt")); err != nil || string(b) != "made\n" {
			t.Errorf("a file written in the sandbox is not in the workspace: %q, %v", b, err)
		}
	})

	escapes := []struct {
		name, command, secret string
	}{
		{"read ~/.ssh", fmt.Sprintf("cat %s/.ssh/id_rsa; cat ~/.ssh/id_rsa; ls -la %s", home, home), "SSH-SECRET"},
		{"read the hidden tests", fmt.Sprintf("cat ../tests/test_hidden.py; cat %s/test_hidden.py; ls -la %s", testsDir, attempt), "TESTS-SECRET"},
		{"read the operator's environment", fmt.Sprintf("env; cat /proc/%d/environ; for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $f; done", os.Getpid()), "ENV-SECRET"},
	}
	for _, e := range escapes {
		t.Run(e.name, func(t *testing.T) {
			res := runIn(t, ws, wrap, e.command, 30)
			if strings.Contains(res.Text, e.secret) {
				t.Fatalf("the sandboxed command read %s:\n%s", e.secret, res.Text)
			}
		})
	}

	t.Run("write the system", func(t *testing.T) {
		res := runIn(t, ws, wrap, "touch /usr/bench-escape /etc/bench-escape /bench-escape; echo done", 30)
		for _, p := range []string{"/usr/bench-escape", "/etc/bench-escape", "/bench-escape"} {
			if _, err := os.Stat(p); err == nil {
				os.Remove(p)
				t.Errorf("the sandboxed command created %s:\n%s", p, res.Text)
			}
		}
	})

	t.Run("endless loop ends at the timeout", func(t *testing.T) {
		res := runIn(t, ws, wrap, "sleep 4242 & while :; do :; done", 1)
		if !res.IsError || !strings.Contains(res.Text, "killed after") {
			t.Fatalf("endless loop: %s", res.Text)
		}
		waitGone(t, "sleep 4242")
	})

	t.Run("fork bomb is contained", func(t *testing.T) {
		// The shell stays to keep the sandbox up until the timeout, while
		// the bomb runs into the process limit.
		const bomb = ":(){ :|:& };:"
		done := make(chan agent.Result)
		go func() { done <- runIn(t, ws, wrap, "bash -c '"+bomb+"; sleep 30'", 2) }()
		most := 0
		var res agent.Result
	sample:
		for {
			select {
			case res = <-done:
				break sample
			default:
				most = max(most, len(leftovers(bomb)))
				time.Sleep(20 * time.Millisecond)
			}
		}
		t.Logf("fork bomb: at most %d processes seen; result: %s", most, firstLine(res.Text))
		if most > limits.Procs {
			t.Errorf("the fork bomb reached %d processes, above the limit of %d", most, limits.Procs)
		}
		if !strings.Contains(res.Text, "killed after") {
			t.Errorf("the fork bomb did not end at the timeout: %s", firstLine(res.Text))
		}
		waitGone(t, bomb)
		// bench is unharmed: it still starts processes.
		if out, err := exec.Command("echo", "alive").Output(); err != nil || string(out) != "alive\n" {
			t.Fatalf("after the fork bomb the test cannot start a process: %v", err)
		}
	})

	t.Run("1 GB of output is capped", func(t *testing.T) {
		res := runIn(t, ws, wrap, "yes | head -c 1000000000", 300)
		if len(res.Text) > 4096+200 || !strings.Contains(res.Text, "bytes cut") {
			t.Fatalf("output not capped: %d bytes, starting %q", len(res.Text), firstLine(res.Text))
		}
	})

	t.Run("a huge file is capped", func(t *testing.T) {
		res := runIn(t, ws, wrap, "head -c 5000000 /dev/zero > big.bin", 30)
		fi, err := os.Stat(filepath.Join(wsDir, "big.bin"))
		if !res.IsError || err != nil || fi.Size() > 1<<20 {
			t.Fatalf("file size limit: %v, %v:\n%s", fi, err, res.Text)
		}
	})

	t.Run("memory is limited", func(t *testing.T) {
		if _, err := os.Stat("/usr/bin/python3"); err != nil {
			t.Skip("no /usr/bin/python3 to allocate with")
		}
		res := runIn(t, ws, wrap, "/usr/bin/python3 -c 'bytearray(3 << 30)'", 30)
		if !res.IsError || !strings.Contains(res.Text, "MemoryError") {
			t.Fatalf("3 GiB allocation under a 1 GiB limit: %s", res.Text)
		}
	})

	// A listener of the host, on its loopback.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- struct{}{}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	connect := fmt.Sprintf("bash -c 'echo hi > /dev/tcp/127.0.0.1/%d' && echo CONNECTED", port)

	t.Run("no network without the network class", func(t *testing.T) {
		res := runIn(t, ws, wrap, connect, 30)
		if strings.Contains(res.Text, "CONNECTED") {
			t.Fatalf("the sandbox reached the host's loopback:\n%s", res.Text)
		}
		select {
		case <-accepted:
			t.Fatal("the host's listener got a connection from the sandbox")
		default:
		}
	})

	t.Run("network with the network class", func(t *testing.T) {
		netWrap := launcher(sb, sandbox.Spec{Network: true, Limits: limits, Home: homeDir})
		res := runIn(t, ws, netWrap, connect, 30)
		if !strings.Contains(res.Text, "CONNECTED") {
			t.Fatalf("the network class is allowed but the sandbox did not connect:\n%s", res.Text)
		}
		<-accepted
	})
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

func TestNewWithoutBwrap(t *testing.T) {
	t.Setenv("PATH", "/nonexistent")
	sb, err := sandbox.New(context.Background(), sandbox.Required)
	if sb != nil || err == nil || !strings.Contains(err.Error(), "bubblewrap is not installed") || !strings.Contains(err.Error(), "apt-get install bubblewrap") || !strings.Contains(err.Error(), "--sandbox off") {
		t.Fatalf("New with no bwrap in PATH = %v, %v; want an error that says how to install it", sb, err)
	}
}

func TestSandboxedServer(t *testing.T) {
	sb := testSandbox(t)
	attempt := t.TempDir()
	wsDir := filepath.Join(attempt, "workspace")
	if err := os.MkdirAll(filepath.Join(attempt, "tests"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(wsDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(attempt, "tests", "t.py"), []byte("TESTS-SECRET"), 0o644); err != nil {
		t.Fatal(err)
	}
	// What the MCP adapter does with a stdio server: wrap its argv, run it
	// in the workspace.
	argv, err := sb.Wrap(sandbox.Spec{Dir: wsDir}, []string{"/bin/sh", "-c", "pwd; cat ../tests/t.py; cat - > got.txt"})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = wsDir
	cmd.Stdin = strings.NewReader("hello server")
	out, _ := cmd.CombinedOutput()
	if !strings.HasPrefix(string(out), wsDir+"\n") || strings.Contains(string(out), "TESTS-SECRET") {
		t.Fatalf("sandboxed server printed:\n%s", out)
	}
	if b, err := os.ReadFile(filepath.Join(wsDir, "got.txt")); err != nil || string(b) != "hello server" {
		t.Fatalf("the server's stdin did not reach it: %q, %v", b, err)
	}
}

// TestHardenKeepsProcessesApart: under Harden no process reaches another's
// memory or files (ptrace, pidfd_getfd, /proc/PID/mem), which is how code under test would forge
// its test runner's verdict; without Harden the same probe succeeds, so the
// test can fail.
func TestHardenKeepsProcessesApart(t *testing.T) {
	sb := testSandbox(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3 for the probe")
	}
	dir := t.TempDir()
	probe := `
import ctypes, os, subprocess, sys, time
libc = ctypes.CDLL(None, use_errno=True)
child = subprocess.Popen(["sleep", "30"])
time.sleep(0.1)
r = libc.ptrace(16, child.pid, 0, 0)  # PTRACE_ATTACH
print("ptrace", "ok" if r == 0 else os.strerror(ctypes.get_errno()))
if r == 0:
    os.waitpid(child.pid, 0)
    libc.ptrace(17, child.pid, 0, 0)  # PTRACE_DETACH
pfd = libc.syscall(434, child.pid, 0)  # pidfd_open
r = libc.syscall(438, pfd, 0, 0) if pfd >= 0 else -1  # pidfd_getfd: the child's stdin
print("getfd", "ok" if r >= 0 else os.strerror(ctypes.get_errno()))
try:
    with open("/proc/%d/mem" % child.pid, "wb"):
        print("mem ok")
except OSError as e:
    print("mem", e.strerror)
child.kill()
`
	if err := os.WriteFile(filepath.Join(dir, "probe.py"), []byte(probe), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := agent.NewWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		harden bool
		want   []string
	}{
		{false, []string{"ptrace ok", "getfd ok", "mem ok"}},
		{true, []string{"ptrace Operation not permitted", "getfd Operation not permitted", "mem Read-only file system"}},
	} {
		t.Run(fmt.Sprintf("harden=%v", tc.harden), func(t *testing.T) {
			spec := sandbox.Spec{Limits: sandbox.Limits{Procs: 64, Memory: 1 << 30, FileSize: 1 << 20, Tmp: 8 << 20}, User: sb.NewUser(), Harden: tc.harden}
			res := runIn(t, ws, launcher(sb, spec), "python3 probe.py", 30)
			for _, w := range tc.want {
				if !strings.Contains(res.Text, w) {
					t.Errorf("probe output lacks %q:\n%s", w, res.Text)
				}
			}
		})
	}
}
