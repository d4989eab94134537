package runner_test

import (
	"os"
	"testing"

	"github.com/benchhq/bench/internal/sandboxtest"
)

func TestMain(m *testing.M) { os.Exit(sandboxtest.RunWithCache(m)) }
