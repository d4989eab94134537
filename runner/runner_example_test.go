package runner_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/internal/ollamatest"
	"github.com/benchhq/bench/results"
	"github.com/benchhq/bench/runner"
	"github.com/benchhq/bench/sandbox"
	"github.com/benchhq/bench/tasks"
)

// A run: a plan (model, suite, G attempts, arms) given to a Runner wired to
// a model and a store. Here the model is the tests' fake Ollama server,
// scripted to give up at once, so every attempt is scored 0 by the hidden
// tests.
func ExampleRunner_Run() {
	srv := ollamatest.New(ollamatest.Turns(ollamatest.Reply{Content: "I give up."}))
	defer srv.Close()
	dir, _ := os.MkdirTemp("", "bench-example-")
	defer os.RemoveAll(dir)

	store, err := results.Open(context.Background(), filepath.Join(dir, "bench.db"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()
	model, _ := agent.NewOllama(srv.URL, nil)
	suite, err := tasks.LoadSuite("../tasks/suites/examples/recipe-trailing-dot")
	if err != nil {
		fmt.Println(err)
		return
	}
	sb, err := sandbox.New(context.Background(), sandbox.Off) // sandbox.Required where bubblewrap is installed
	if err != nil {
		fmt.Println(err)
		return
	}
	r := &runner.Runner{Model: model, Store: store, TempDir: dir, Sandbox: sb}
	out, err := r.Run(context.Background(), &runner.Plan{Model: "fake", Suite: suite, Attempts: 3, Seed: 7}, "example")
	if err != nil {
		fmt.Println(err)
		return
	}
	var passes int
	_ = store.DB().QueryRow(`SELECT count(*) FROM attempts WHERE run_id = 'example' AND reward = 1`).Scan(&passes)
	fmt.Printf("ran %d attempts, %d passed, zero-variance groups %.0f%%\n", out.Ran, passes, 100*out.ZeroVarianceShare)
	// Output: ran 3 attempts, 0 passed, zero-variance groups 100%
}
