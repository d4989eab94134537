//go:build linux

package ollamatest

import (
	"syscall"
	"time"
)

// sleepPrecisely sleeps d (under a millisecond) in nanosleep, whose
// precision is the kernel's timer slack (50 µs), not the runtime's.
func sleepPrecisely(d time.Duration) {
	if d <= 0 {
		return
	}
	ts := syscall.NsecToTimespec(int64(d))
	for syscall.Nanosleep(&ts, &ts) == syscall.EINTR {
	}
}
