//go:build unix

// Package cputime reads the CPU time this process has used, for benchmarks
// that must tell the harness's own cost from that of the servers it talks
// to: a server run as another process is not counted.
package cputime

import (
	"syscall"
	"time"
)

// Self returns the user and system CPU time used so far by this process,
// all its threads (garbage collector included), and none of its children.
func Self() time.Duration { return usage(syscall.RUSAGE_SELF) }

// Children returns the user and system CPU time used so far by this
// process's children that have ended and been waited for, and by theirs
// (a sandbox's bwrap, its setpriv, the command and all it started).
func Children() time.Duration { return usage(syscall.RUSAGE_CHILDREN) }

// usage is who's user and system CPU time, 0 when it cannot be read.
func usage(who int) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
