//go:build !unix

package cputime

import "time"

// Self returns 0 where the process's CPU time is not available.
func Self() time.Duration { return 0 }

// Children returns 0 where the children's CPU time is not available.
func Children() time.Duration { return 0 }
