//go:build unix

package cputime

import "testing"

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
