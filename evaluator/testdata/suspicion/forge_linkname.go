package semver

import (
	"testing"
	_ "unsafe"
)

//go:linkname matchString testing.matchString
func matchString(pat, str string) (bool, error)

var _ = testing.Short

// Compare is the function under test, wrong.
func Compare(a, b string) int { return 0 }
