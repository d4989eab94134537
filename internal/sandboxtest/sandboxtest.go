// Package sandboxtest gives tests the real sandbox of the machine they run
// on: bubblewrap where it works, the Off mode otherwise.
package sandboxtest

import (
	"context"
	"os"
	"testing"

	"github.com/benchhq/bench/sandbox"
)

// New returns bubblewrap's sandbox, or the Off mode's when bubblewrap does
// not work here; with BENCH_REQUIRE_BWRAP=1 (CI) a missing bubblewrap
// fails the test instead. A test that needs isolation itself should use
// Isolated.
func New(t testing.TB) *sandbox.Sandbox {
	t.Helper()
	sb, err := sandbox.New(context.Background(), sandbox.Required)
	if err == nil {
		return sb
	}
	if os.Getenv("BENCH_REQUIRE_BWRAP") == "1" {
		t.Fatalf("BENCH_REQUIRE_BWRAP=1 but %v", err)
	}
	sb, offErr := sandbox.New(context.Background(), sandbox.Off)
	if offErr != nil {
		t.Skipf("no sandbox mode works here: %v; %v", err, offErr)
	}
	return sb
}

// Isolated returns bubblewrap's sandbox, or skips the test (fails it with
// BENCH_REQUIRE_BWRAP=1).
func Isolated(t testing.TB) *sandbox.Sandbox {
	t.Helper()
	sb, err := sandbox.New(context.Background(), sandbox.Required)
	if err != nil {
		if os.Getenv("BENCH_REQUIRE_BWRAP") == "1" {
			t.Fatalf("BENCH_REQUIRE_BWRAP=1 but %v", err)
		}
		t.Skipf("no bubblewrap sandbox here (set BENCH_REQUIRE_BWRAP=1 to fail instead): %v", err)
	}
	return sb
}
