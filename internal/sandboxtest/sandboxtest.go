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

// RunWithCache runs a package's tests (call it from TestMain) with
// BENCH_CACHE, where prepared environments are kept, set to a folder of
// their own shared by the package's tests and the bench processes they
// start, and removed afterwards: tests neither read nor fill the user's
// cache. A BENCH_CACHE already set is kept (CI may share one across
// packages).
func RunWithCache(m *testing.M) int {
	if os.Getenv("BENCH_CACHE") != "" {
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "bench-test-cache-")
	if err != nil {
		return m.Run()
	}
	defer os.RemoveAll(dir)
	os.Setenv("BENCH_CACHE", dir)
	return m.Run()
}
