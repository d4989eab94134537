package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestRunCommand(t *testing.T) {
	t.Setenv("BENCH_SECRET", "hunter2")
	t.Setenv("BENCH_ALLOWED", "visible")
	fx := newFixture(t)
	reg := testRegistry(t, fx, BuiltinOptions{Env: []string{"BENCH_ALLOWED", "HOME"}})
	root := fx.ws.Root()
	tests := []struct {
		name    string
		args    map[string]any
		wantErr bool
		exact   string
		want    []string
		notWant []string
	}{
		{name: "echo", args: map[string]any{"command": "echo hi"}, exact: "exit status 0\nhi\n"},
		{name: "no output", args: map[string]any{"command": "true"}, exact: "exit status 0\n(no output)"},
		{name: "exit code", args: map[string]any{"command": "echo out; echo err >&2; exit 3"}, wantErr: true, exact: "exit status 3\nout\nerr\n"},
		{name: "killed by a signal", args: map[string]any{"command": "kill -9 $$"}, wantErr: true, want: []string{"killed by signal killed"}},
		{name: "working folder", args: map[string]any{"command": "pwd -P; cat a.txt"}, exact: "exit status 0\n" + root + "\nalpha\nbeta\n"},
		{name: "HOME", args: map[string]any{"command": `echo "$HOME"; cd ~ && pwd -P`}, exact: "exit status 0\n" + root + "\n" + root + "\n"},
		{name: "env", args: map[string]any{"command": "env"},
			want: []string{"PATH=", "HOME=" + root, "BENCH_ALLOWED=visible"}, notWant: []string{"BENCH_SECRET", "hunter2"}},
		{name: "stdin is empty", args: map[string]any{"command": "cat; echo done"}, exact: "exit status 0\ndone\n"},
		{name: "not found", args: map[string]any{"command": "no-such-command-xyz"}, wantErr: true, want: []string{"exit status 127", "not found"}},
		{name: "writes in the workspace", args: map[string]any{"command": "echo x > made.txt && ls made.txt"}, exact: "exit status 0\nmade.txt\n"},
		{name: "empty command", args: map[string]any{"command": "  "}, wantErr: true, want: []string{"command is empty"}},
		{name: "no command", args: map[string]any{}, wantErr: true, want: []string{"command"}},
		{name: "timeout too long", args: map[string]any{"command": "true", "timeout_seconds": 601}, wantErr: true, want: []string{"timeout_seconds"}},
		{name: "timeout zero", args: map[string]any{"command": "true", "timeout_seconds": 0}, wantErr: true, want: []string{"timeout_seconds"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := callTool(t, reg, "run_command", tt.args)
			if res.IsError != tt.wantErr {
				t.Errorf("IsError = %v, want %v; text:\n%s", res.IsError, tt.wantErr, res.Text)
			}
			if tt.exact != "" && res.Text != tt.exact {
				t.Errorf("text:\n%q\nwant:\n%q", res.Text, tt.exact)
			}
			for _, w := range tt.want {
				if !strings.Contains(res.Text, w) {
					t.Errorf("text does not contain %q:\n%s", w, res.Text)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(res.Text, w) {
					t.Errorf("text contains %q:\n%s", w, res.Text)
				}
			}
		})
	}
}

// gone waits until a process is dead (gone, or a zombie waiting for its
// reaper), for a while; it reports whether it is.
func gone(t *testing.T, pid int) bool {
	t.Helper()
	for range 200 {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return true
		}
		// The state follows the command name in parentheses.
		if i := strings.LastIndexByte(string(stat), ')'); i >= 0 && strings.HasPrefix(string(stat[i+1:]), " Z") {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

// pids reads the process ids a command printed, one a line, after the status line.
func pids(t *testing.T, text string) []int {
	t.Helper()
	var out []int
	for _, line := range strings.Split(text, "\n")[1:] {
		if pid, err := strconv.Atoi(strings.TrimSpace(line)); err == nil {
			out = append(out, pid)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no process ids in:\n%s", text)
	}
	return out
}

func TestRunCommandTimeoutKillsGrandchildren(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	fx := newFixture(t)
	reg := testRegistry(t, fx, BuiltinOptions{})
	// A background grandchild, a foreground one in a subshell, and the
	// shell itself waiting: all must die at the timeout.
	res := callTool(t, reg, "run_command", map[string]any{
		"command":         "sleep 100 & echo $!; (sleep 100 & echo $!; wait) & sleep 100",
		"timeout_seconds": 1,
	})
	if !res.IsError || !strings.HasPrefix(res.Text, "killed after 1s: the command ran past its timeout") {
		t.Fatalf("result: %+v", res)
	}
	for _, pid := range pids(t, res.Text) {
		if !gone(t, pid) {
			t.Errorf("process %d outlived the timeout", pid)
		}
	}
}

func TestRunCommandKillsBackgroundProcesses(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	fx := newFixture(t)
	reg := testRegistry(t, fx, BuiltinOptions{})
	// The background child holds the output pipe: the call must still end
	// (it does not wait for it), and the child must be killed.
	res := callTool(t, reg, "run_command", map[string]any{"command": "sleep 100 & echo $!"})
	if res.IsError || !strings.HasPrefix(res.Text, "exit status 0\n") {
		t.Fatalf("result: %+v", res)
	}
	for _, pid := range pids(t, res.Text) {
		if !gone(t, pid) {
			t.Errorf("background process %d outlived the command", pid)
		}
	}
}

func TestRunCommandOutputCap(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	reg := testRegistry(t, fx, BuiltinOptions{})
	const size = 50_000_000
	// 50 MB: a first line, then a's, then a last line.
	res := callTool(t, reg, "run_command", map[string]any{
		"command": fmt.Sprintf("echo FIRST; head -c %d /dev/zero | tr '\\0' a; echo; echo LAST", size),
	})
	if res.IsError {
		t.Fatalf("result: %.300s", res.Text)
	}
	if n := len(res.Text); n > DefaultCommandOutputCap+200 {
		t.Errorf("result is %d bytes, want about %d", n, DefaultCommandOutputCap)
	}
	total := len("FIRST\n") + size + len("\nLAST\n")
	cut := total - DefaultCommandOutputCap
	for _, w := range []string{"exit status 0\nFIRST\naaa", fmt.Sprintf("aaa\n[... %d bytes cut ...]\naaa", cut), "aaa\nLAST\n"} {
		if !strings.Contains(res.Text, w) {
			t.Errorf("result does not contain %q", w)
		}
	}
}

func TestRunCommandCanceled(t *testing.T) {
	fx := newFixture(t)
	tool := Builtins(fx.ws, BuiltinOptions{})[5]
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		time.Sleep(100 * time.Millisecond)
		cancel()
	}()
	_, err := tool.Call(ctx, map[string]any{"command": "sleep 100"})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Call after cancel: error %v, want context.Canceled", err)
	}
}

func TestRunCommandLaunch(t *testing.T) {
	fx := newFixture(t)
	var gotDir string
	var gotEnv []string
	opts := BuiltinOptions{Launch: func(ctx context.Context, dir string, argv, env []string) (*exec.Cmd, error) {
		gotDir, gotEnv = dir, env
		cmd := exec.CommandContext(ctx, "/usr/bin/env", append([]string{"WRAPPED=yes"}, argv...)...)
		cmd.Dir, cmd.Env = dir, env
		return cmd, nil
	}}
	reg := testRegistry(t, fx, opts)
	res := callTool(t, reg, "run_command", map[string]any{"command": "echo $WRAPPED"})
	if res.Text != "exit status 0\nyes\n" {
		t.Errorf("result: %q", res.Text)
	}
	if gotDir != fx.ws.Root() {
		t.Errorf("Launch got dir %q, want %q", gotDir, fx.ws.Root())
	}
	for _, kv := range gotEnv {
		if strings.HasPrefix(kv, "HOME=") {
			t.Errorf("the launcher was given %s: HOME is the launcher's to set", kv)
		}
	}

	// A launcher that fails is the operator's failure, not the model's.
	tool := Builtins(fx.ws, BuiltinOptions{Launch: func(context.Context, string, []string, []string) (*exec.Cmd, error) {
		return nil, errors.New("no sandbox here")
	}})[5]
	if _, err := tool.Call(context.Background(), map[string]any{"command": "true"}); err == nil || !strings.Contains(err.Error(), "no sandbox here") {
		t.Errorf("Call with a failing launcher: error %v", err)
	}
	// So is one that cannot start.
	tool = Builtins(fx.ws, BuiltinOptions{Launch: func(ctx context.Context, dir string, argv, env []string) (*exec.Cmd, error) {
		return exec.CommandContext(ctx, "/no/such/launcher"), nil
	}})[5]
	if _, err := tool.Call(context.Background(), map[string]any{"command": "true"}); err == nil || !strings.Contains(err.Error(), "/no/such/launcher") {
		t.Errorf("Call with a missing launcher: error %v", err)
	}
}

// TestRunCommandEscapedChild: a child that left the process group (setsid)
// and holds the output pipe cannot be killed with the group; the call must
// end anyway, with the output so far.
func TestRunCommandEscapedChild(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("needs setsid")
	}
	fx := newFixture(t)
	reg := testRegistry(t, fx, BuiltinOptions{})
	res := callTool(t, reg, "run_command", map[string]any{
		// The child writes its pid once it has left the group; the shell waits for it.
		"command": "setsid sh -c 'echo $$ > pid; exec sleep 30' & while [ ! -s pid ]; do sleep 0.05; done; cat pid",
	})
	for _, pid := range pids(t, res.Text) {
		t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	}
	if res.IsError || !strings.HasPrefix(res.Text, "exit status 0\n") {
		t.Fatalf("result: %+v", res)
	}
}
