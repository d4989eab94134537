//go:build unix

package procio

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestKillGroupOnCancel starts a shell that leaves a child in the
// background holding the output pipe, cancels the context, and checks that
// the child died with the shell: the pipe reaches EOF once no process holds
// it.
func TestKillGroupOnCancel(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", "sleep 1000 & echo started; wait")
	cmd.Stdout = pw
	KillGroupOnCancel(cmd, time.Second)
	if !cmd.SysProcAttr.Setpgid || cmd.WaitDelay != time.Second {
		t.Fatalf("SysProcAttr %+v, WaitDelay %s", cmd.SysProcAttr, cmd.WaitDelay)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	r := bufio.NewReader(pr)
	if line, err := r.ReadString('\n'); err != nil || line != "started\n" {
		t.Fatalf("read %q, %v", line, err)
	}
	cancel()
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || !strings.Contains(err.Error(), "killed") {
		t.Errorf("Wait = %v, want the shell killed", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := r.ReadString('\n')
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Errorf("more output after the kill")
		}
	case <-time.After(30 * time.Second):
		// Not a speed check: the child sleeps 1000 s when it survives.
		t.Fatal("the background child outlived the killed group")
	}
}

func TestSignalGroupNotStarted(t *testing.T) {
	cmd := exec.Command("true")
	if err := SignalGroup(cmd, syscall.SIGTERM); err == nil {
		t.Error("SignalGroup of a command not started: no error")
	}
}
