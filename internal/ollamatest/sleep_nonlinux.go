//go:build !linux

package ollamatest

import "time"

// sleepPrecisely sleeps d.
func sleepPrecisely(d time.Duration) { time.Sleep(d) }
