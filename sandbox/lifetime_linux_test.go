package sandbox_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/sandbox"
)

// attemptDirs makes an attempt's workspace and HOME.
func attemptDirs(t *testing.T) (*agent.Workspace, string) {
	t.Helper()
	base := t.TempDir()
	wsDir, home := filepath.Join(base, "workspace"), filepath.Join(base, "home")
	for _, d := range []string{wsDir, home} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := agent.NewWorkspace(wsDir)
	if err != nil {
		t.Fatal(err)
	}
	return ws, home
}

// modes are the sandboxes this machine can make.
func modes(t *testing.T) map[string]*sandbox.Sandbox {
	out := map[string]*sandbox.Sandbox{}
	if sb, err := sandbox.New(context.Background(), sandbox.Required); err == nil {
		out["bubblewrap"] = sb
	} else if os.Getenv("BENCH_REQUIRE_BWRAP") == "1" {
		t.Fatalf("BENCH_REQUIRE_BWRAP=1 but %v", err)
	}
	if sb, err := sandbox.New(context.Background(), sandbox.Off); err == nil {
		out["off"] = sb
	}
	if len(out) == 0 {
		t.Skip("no sandbox mode works here")
	}
	return out
}

// TestNothingOutlivesACommand: daemons, double forks and setsid children
// are gone when run_command returns, in every mode, without waiting: the
// kernel ended the command's process namespace before it was reported done.
func TestNothingOutlivesACommand(t *testing.T) {
	for name, sb := range modes(t) {
		t.Run(name, func(t *testing.T) {
			ws, home := attemptDirs(t)
			launch := launcher(sb, sandbox.Spec{Home: home, User: sb.NewUser()})
			marker := fmt.Sprintf("sleep 31%d", os.Getpid()%1000)
			cmd := fmt.Sprintf(`setsid sh -c '%[1]s1' & (sh -c '%[1]s2 &' &) ; nohup %[1]s3 >/dev/null 2>&1 & echo started`, marker)
			res := runIn(t, ws, launch, cmd, 30)
			if !strings.Contains(res.Text, "started") {
				t.Fatalf("command: %s", res.Text)
			}
			if left := leftovers(marker); len(left) > 0 {
				t.Fatalf("%d processes outlived the command at once, e.g. %s", len(left), left[0])
			}
		})
	}
}

// TestKillAllEndsAUsersProcesses: as root, every process of an attempt's
// user ends, whatever it did to escape, even one started outside any
// namespace of the sandbox's.
func TestKillAllEndsAUsersProcesses(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("users of their own per attempt need root")
	}
	sb := offSandbox(t)
	u := sb.NewUser()
	_, home := attemptDirs(t)
	marker := fmt.Sprintf("sleep 32%d", os.Getpid()%1000)
	// A trusted-server wrap in the Off mode: the user, no namespace.
	argv, err := sb.Wrap(sandbox.Spec{Home: home, User: u}, []string{"/bin/sh", "-c", "setsid " + marker + "1 >/dev/null 2>&1 & setsid " + marker + "2 >/dev/null 2>&1 &"})
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	// The shell returns before its background children have run.
	for deadline := time.Now().Add(10 * time.Second); len(leftovers(marker)) != 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the escaped processes did not start: %v", leftovers(marker))
		}
	}
	if err := sb.KillAll(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	if left := leftovers(marker); len(left) > 0 {
		t.Fatalf("KillAll returned with %d processes of the user left, e.g. %s", len(left), left[0])
	}
}

// TestKillAllEndsOnlyItsUsersProcesses: KillAlls at once, each for a user
// of its own with a process left running, end that process each, and the
// process of a user none of them is for keeps running.
func TestKillAllEndsOnlyItsUsersProcesses(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("users of their own per attempt need root")
	}
	sb := offSandbox(t)
	_, home := attemptDirs(t)
	base := 7000 + os.Getpid()%1000*20
	// start leaves a sleep of a fresh user's running, as a trusted-server
	// wrap does in the Off mode (no namespace to end it), and returns it
	// once it runs as the user.
	start := func(secs string) (sandbox.User, *exec.Cmd) {
		u := sb.NewUser()
		argv, err := sb.Wrap(sandbox.Spec{Home: home, User: u}, []string{"/bin/sleep", secs})
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(argv[0], argv[1:]...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(10 * time.Second); !running("/bin/sleep " + secs); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the user's sleep did not start")
			}
		}
		return u, cmd
	}
	_, other := start(strconv.Itoa(base + 19))
	defer other.Process.Kill()
	var wg sync.WaitGroup
	for i := range 16 {
		u, cmd := start(strconv.Itoa(base + i))
		wg.Go(func() {
			if err := sb.KillAll(context.Background(), u); err != nil {
				t.Error(err)
			}
			if err := cmd.Wait(); err == nil {
				t.Error("the user's sleep ended by itself, not killed")
			}
		})
	}
	wg.Wait()
	if !running("/bin/sleep " + strconv.Itoa(base+19)) {
		t.Error("another user's process was killed")
	}
}

// running reports whether a process's command line is exactly cmdline.
func running(cmdline string) bool {
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		if b, err := os.ReadFile(p); err == nil && strings.TrimSuffix(strings.ReplaceAll(string(b), "\x00", " "), " ") == cmdline {
			return true
		}
	}
	return false
}

// TestOffModeAsRoot: without isolation, commands still never run as root:
// they cannot read the harness's environment, write its files or reach
// other attempts' workspaces.
func TestOffModeAsRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	sb := offSandbox(t)
	if sb.Isolated() || sb.Isolation() != "none" {
		t.Fatalf("Off mode: Isolated %v, Isolation %q", sb.Isolated(), sb.Isolation())
	}
	t.Setenv("BENCH_TEST_TOKEN", "ENV-SECRET")
	db := filepath.Join(t.TempDir(), "bench.db")
	if err := os.WriteFile(db, []byte("DB"), 0o644); err != nil {
		t.Fatal(err)
	}
	other, _ := attemptDirs(t)
	runIn(t, other, launcher(sb, sandbox.Spec{Home: t.TempDir(), User: sb.NewUser()}), "echo other > mine.txt", 10)
	ws, home := attemptDirs(t)
	launch := launcher(sb, sandbox.Spec{Home: home, User: sb.NewUser()})
	res := runIn(t, ws, launch, fmt.Sprintf(`id -u; cat /proc/%d/environ; echo x >> %s; echo x > %s/evil.txt; cat %s/mine.txt`,
		os.Getpid(), db, other.Root(), other.Root()), 10)
	if strings.HasPrefix(res.Text, "exit status 0\n0\n") || strings.Contains(res.Text, "ENV-SECRET") {
		t.Errorf("the command ran as root or read bench's environment:\n%s", res.Text)
	}
	if b, _ := os.ReadFile(db); string(b) != "DB" {
		t.Errorf("the command wrote the results database: %q", b)
	}
	if _, err := os.Stat(filepath.Join(other.Root(), "evil.txt")); err == nil || strings.Contains(res.Text, "\nother") {
		t.Errorf("the command reached another attempt's workspace:\n%s", res.Text)
	}
}

// TestHiddenFolderUnderTheSystem: a suite installed under /usr is not
// visible in the sandbox, its tests included; a task's data folder shown
// for its servers still is.
func TestHiddenFolderUnderTheSystem(t *testing.T) {
	sb := testSandbox(t)
	if os.Geteuid() != 0 {
		t.Skip("installing a suite under /usr/local/share needs root")
	}
	suite, err := os.MkdirTemp("/usr/local/share", "bench-test-suite-")
	if err != nil {
		t.Skip(err)
	}
	defer os.RemoveAll(suite)
	for name, body := range map[string]string{"t/tests/test_hidden.py": "TESTS-SECRET", "t/data/issues.json": "DATA-OK", "t/solution/solve.sh": "SOLUTION-SECRET"} {
		p := filepath.Join(suite, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws, home := attemptDirs(t)
	spec := sandbox.Spec{Home: home, Hide: []string{suite}, ReadOnly: []string{filepath.Join(suite, "t", "data")}}
	res := runIn(t, ws, launcher(sb, spec), fmt.Sprintf("cat %[1]s/t/tests/test_hidden.py %[1]s/t/solution/solve.sh; grep -r SECRET /usr/local/share 2>/dev/null; cat %[1]s/t/data/issues.json", suite), 30)
	if strings.Contains(res.Text, "SECRET") {
		t.Errorf("the sandbox showed the suite's hidden files:\n%s", res.Text)
	}
	if !strings.Contains(res.Text, "DATA-OK") {
		t.Errorf("the task's data folder, shown read-only, is not there:\n%s", res.Text)
	}
	res = runIn(t, ws, launcher(sb, spec), fmt.Sprintf("echo x > %s/t/data/new.txt; touch %s/planted", suite, suite), 30)
	if _, err := os.Stat(filepath.Join(suite, "t", "data", "new.txt")); err == nil {
		t.Errorf("the sandbox wrote the task's data folder:\n%s", res.Text)
	}
}
