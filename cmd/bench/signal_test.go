package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// A command that ends by itself, then cancels its context at exit, must
// not say it is stopping (2 of 300 `bench version` runs did).
func TestNoStoppingNoticeWithoutASignal(t *testing.T) {
	for i := range 2000 {
		ctx, cancel := context.WithCancel(context.Background())
		var out bytes.Buffer
		finish := watchSignal(ctx, cancel, &out, stoppingMessage("run"))
		finish()
		cancel()
		time.Sleep(time.Microsecond) // room for a watch that outlived finish
		if out.Len() > 0 {
			t.Fatalf("run %d: %q without a signal", i, out.String())
		}
	}
}

func TestStoppingNoticeOnASignal(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var out bytes.Buffer
	stopped := make(chan struct{})
	finish := watchSignal(ctx, func() { close(stopped) }, &out, stoppingMessage("run"))
	cancel() // what the signal does to the NotifyContext
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("stop was not called after the signal")
	}
	finish() // waits for the notice to be written
	if !strings.Contains(out.String(), "stopping") {
		t.Errorf("after a signal: %q", out.String())
	}
}
