package runner_test

import (
	"os"
	"testing"

	"github.com/benchhq/bench/internal/ollamatest"
	"github.com/benchhq/bench/internal/sandboxtest"
)

// TestMain serves the benchmarks' fake model when started as its child
// (ollamatest.Spawn), and runs the tests with a cache of environments of
// their own.
func TestMain(m *testing.M) {
	ollamatest.ServeChild(benchScripts)
	os.Exit(sandboxtest.RunWithCache(m))
}
