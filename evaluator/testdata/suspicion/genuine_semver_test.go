package semver

import (
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	os.Setenv("TZ", "UTC")
	os.Exit(m.Run())
}

func TestCompareEqual(t *testing.T) {
	if got := Compare("1.2.3", "1.2.3"); got != 0 {
		t.Errorf("Compare equal = %d", got)
	}
}
