package runner_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/benchhq/bench/internal/ollamatest"
	"github.com/benchhq/bench/runner"
	"github.com/benchhq/bench/sandbox"
)

// Limits the sandbox could not set (above bench's own hard limits, without
// CAP_SYS_RESOURCE) are refused before the run starts, not at each command.
func TestLimitsBenchCannotSetAreRefusedBeforeTheRun(t *testing.T) {
	f := newFixture(t, ollamatest.Turns())
	var own unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NPROC, &own); err != nil {
		t.Fatal(err)
	}
	if own.Max >= 1<<31 {
		t.Skipf("bench's own process limit here (%d) leaves nothing to refuse", own.Max)
	}
	limits := sandbox.Limits{Procs: int(own.Max) + 1}
	if f.runner.Sandbox.CheckLimits(limits) == nil {
		t.Skip("bench may raise its limits here (CAP_SYS_RESOURCE)")
	}
	plan := &runner.Plan{Model: "qwen3:0.6b", Suite: loadTask(t, "recipe-trailing-dot"), Attempts: 1, Sandbox: sandbox.Config{Procs: limits.Procs}}
	_, err := f.runner.Run(context.Background(), plan, "r1")
	if !errors.Is(err, runner.ErrPreflight) || !strings.Contains(err.Error(), "[sandbox] procs") {
		t.Fatalf("err = %v, want a preflight error naming [sandbox] procs", err)
	}
	if got := f.count(`SELECT count(*) FROM runs`); got != 0 {
		t.Errorf("%d runs stored", got)
	}
}
