package sandbox_test

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/benchhq/bench/sandbox"
)

// zombieLeaderEnv makes the test binary a process whose first thread
// exits while the others run on: /proc shows it as a zombie, alive.
const zombieLeaderEnv = "BENCH_SANDBOX_TEST_ZOMBIE_LEADER"

// In the zombie leader, the main goroutine stays on the process's first
// thread, which it is to end: locked in an init, it runs main there, and
// the scheduler cannot move it to another thread meanwhile (as it may
// under load, and then the exit would end another thread).
func init() {
	if os.Getenv(zombieLeaderEnv) == "1" {
		runtime.LockOSThread()
	}
}

func TestMain(m *testing.M) {
	if os.Getenv(zombieLeaderEnv) == "1" {
		go func() {
			for {
				time.Sleep(time.Hour)
			}
		}()
		time.Sleep(50 * time.Millisecond) // the runtime's other threads are up
		if syscall.Gettid() != os.Getpid() {
			os.Exit(3) // not on the first thread after all: the test says so
		}
		syscall.RawSyscall(syscall.SYS_EXIT, 0, 0, 0) // this thread alone
	}
	os.Exit(m.Run())
}

// TestKillAllEndsAProcessWithAZombieLeader: a process of the user whose
// first thread has exited is still a process of the user's, running.
func TestKillAllEndsAProcessWithAZombieLeader(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("users of their own per attempt need root")
	}
	sb := offSandbox(t)
	_, home := attemptDirs(t)
	// The user must be able to run the binary: a copy in its HOME.
	exe := filepath.Join(home, "zombie-leader")
	copyExecutable(t, exe)
	u := sb.NewUser()
	argv, err := sb.Wrap(sandbox.Spec{Home: home, User: u}, []string{exe})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), zombieLeaderEnv+"=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	status := "/proc/" + strconv.Itoa(cmd.Process.Pid) + "/status"
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		b, _ := os.ReadFile(status)
		zombie, oneThread := strings.Contains(string(b), "State:\tZ"), strings.Contains(string(b), "Threads:\t1\n")
		if zombie && !oneThread {
			break
		}
		if zombie {
			// Ended whole: exit status 3 says its main goroutine was not
			// on its first thread.
			err := cmd.Wait()
			t.Fatalf("the process ended instead of becoming a running zombie leader: %v", err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the process did not become a running zombie leader:\n%s", b)
		}
	}
	if err := sb.KillAll(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err == nil {
			t.Error("the process ended by itself, not killed")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("KillAll returned and the process of the user still ran")
	}
}

func copyExecutable(t *testing.T, dst string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
