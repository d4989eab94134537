//go:build unix

package cputime

import (
	"os/exec"
	"testing"
)

func TestSelfGrowsWithWork(t *testing.T) {
	before := Self()
	if before <= 0 {
		t.Fatalf("Self() = %v before any work, want the CPU time already used (> 0)", before)
	}
	x := 0
	for Self() == before {
		for i := range 1_000_000 {
			x += i
		}
	}
	if after := Self(); after <= before {
		t.Fatalf("Self() went from %v to %v after work (%d)", before, after, x)
	}
}

func TestChildrenGrowsWithAChildsWork(t *testing.T) {
	before := Children()
	// Children that spin until they have used some CPU time of their own.
	for i := 0; Children() == before && i < 1000; i++ {
		cmd := exec.Command("/bin/sh", "-c", "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done")
		if err := cmd.Run(); err != nil {
			t.Fatal(err)
		}
	}
	if after := Children(); after <= before {
		t.Fatalf("Children() went from %v to %v after a child's work", before, after)
	}
}

// The machine's counts read, and grow; the share stolen is a percentage.
func TestMachine(t *testing.T) {
	m0 := ReadMachine()
	if !m0.ok {
		t.Skip("no /proc/stat here")
	}
	var m Machine
	for i := 0; ; i++ {
		m = ReadMachine()
		if m.total > m0.total || i > 1000 {
			break
		}
		x := 0
		for j := range 1_000_000 {
			x += j
		}
		_ = x
	}
	p, ok := m.StealSince(m0)
	if !ok || p < 0 || p > 100 {
		t.Errorf("StealSince = %v, %v; want a share in [0, 100]", p, ok)
	}
	if _, ok := m0.StealSince(m); ok {
		t.Error("a share over no time, or backwards, was given")
	}
	if _, ok := m.StealSince(Machine{}); ok {
		t.Error("a share since an unread Machine was given")
	}
}
