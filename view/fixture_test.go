package view

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/internal/ollamatest"
	"github.com/benchhq/bench/results"
	"github.com/benchhq/bench/runner"
	"github.com/benchhq/bench/sandbox"
	"github.com/benchhq/bench/servers/issuetracker"
	"github.com/benchhq/bench/tasks"
)

// exampleSuite holds the example tasks the fixture runs, in their
// in-process form (hidden tests with per-test reports, checked by the
// canary), whose per-test verdicts these pages show; the examples
// themselves are judged out of the agent's reach now.
const exampleSuite = "../tasks/testdata/in-process"

// fixtureDB is a results file written by real runs of the example suite
// against the fake model server, made once by TestMain; tests only read it.
var fixtureDB string

// The runs in fixtureDB.
const (
	mainRun   = "two-arms"
	secondRun = "second"
)

func TestMain(m *testing.M) {
	// As `bench mcp serve issues --file PATH`: the example MCP task's
	// server, run by the symlink that stands for bench (see writeFixture).
	if a := os.Args[1:]; len(a) == 5 && a[0] == "mcp" && a[1] == "serve" && a[2] == "issues" && a[3] == "--file" {
		if err := issuetracker.ServeStdio(context.Background(), a[4]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	dir, err := os.MkdirTemp("", "bench-view-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fixtureDB, err = writeFixture(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "write the fixture database:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// writeFixture runs two tasks of the example suite (one with an MCP
// server) under two arms, G = 4, and a second smaller run, against the
// scripted fake model, and returns the results file.
func writeFixture(dir string) (string, error) {
	ctx := context.Background()
	db := filepath.Join(dir, "bench.db")
	store, err := results.Open(ctx, db)
	if err != nil {
		return "", err
	}
	defer store.Close()
	script, err := fixtureScript()
	if err != nil {
		return "", err
	}
	srv := ollamatest.New(script)
	defer srv.Close()
	model, err := agent.NewOllama(srv.URL, nil)
	if err != nil {
		return "", err
	}
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	bench := filepath.Join(dir, "bench")
	if err := os.Symlink(self, bench); err != nil {
		return "", err
	}
	suite, err := tasks.LoadSuite(exampleSuite)
	if err != nil {
		return "", err
	}
	var picked []*tasks.Task
	for _, t := range suite.Tasks {
		if t.ID == "recipe-trailing-dot" || t.ID == "mcp-parser-issue" {
			picked = append(picked, t)
		}
	}
	suite.Tasks = picked
	sb, err := sandbox.New(ctx, sandbox.Required)
	if err != nil {
		if os.Getenv("BENCH_REQUIRE_BWRAP") == "1" {
			return "", err
		}
		if sb, err = sandbox.New(ctx, sandbox.Off); err != nil {
			return "", err
		}
	}
	r := &runner.Runner{Model: model, Store: store, TempDir: dir, BenchPath: bench, Version: "test",
		Backoff: func(int) time.Duration { return time.Millisecond }, Sandbox: sb, EnvDir: filepath.Join(dir, "envs")}
	plans := []struct {
		id   string
		plan runner.Plan
	}{
		{mainRun, runner.Plan{Model: "fake", Suite: suite, Attempts: 4, Seed: 7, Concurrency: 2, MaxTries: 1,
			Arms: []runner.Arm{{Name: "full", Profile: "full"}, {Name: "read-only", Profile: "read-only"}}}},
		{secondRun, runner.Plan{Model: "fake", Suite: suite, Attempts: 2, Seed: 7, Concurrency: 2, MaxTries: 1,
			Arms: []runner.Arm{{Name: "full", Profile: "full"}}}},
	}
	for _, p := range plans {
		if _, err := r.Run(ctx, &p.plan, p.id); err != nil {
			return "", fmt.Errorf("run %s: %w", p.id, err)
		}
	}
	return db, nil
}

// fixtureScript plays a model that solves both tasks through the tools
// in attempts 0 and 2, gives up in attempt 1, and meets a model server
// error (an infrastructure failure) in attempt 3 of the recipe task.
func fixtureScript() (ollamatest.Script, error) {
	recipe, err := os.ReadFile(filepath.Join(exampleSuite, "recipe-trailing-dot/solution/recipe.py"))
	if err != nil {
		return nil, err
	}
	config, err := os.ReadFile(filepath.Join(exampleSuite, "mcp-parser-issue/solution/config.py"))
	if err != nil {
		return nil, err
	}
	call := func(name string, args map[string]any) ollamatest.Reply {
		return ollamatest.Reply{Calls: []ollamatest.Call{{Name: name, Args: args}}}
	}
	solveRecipe := ollamatest.Turns(
		call("list_dir", map[string]any{"path": "."}),
		call("read_file", map[string]any{"path": "recipe.py"}),
		ollamatest.Reply{Content: "The parser keeps the period; I will rewrite it.",
			Calls: []ollamatest.Call{{Name: "write_file", Args: map[string]any{"path": "recipe.py", "content": string(recipe)}}}},
		call("run_command", map[string]any{"command": "python3 -m unittest -q"}),
		ollamatest.Reply{Content: "Fixed: ingredient items no longer keep their trailing period."},
	)
	solveIssue := ollamatest.Turns(
		call("issues__list_issues", map[string]any{"label": "parser", "state": "open"}),
		call("issues__get_issue", map[string]any{"id": 17}),
		call("read_file", map[string]any{"path": "config.py"}),
		call("write_file", map[string]any{"path": "config.py", "content": string(config)}),
		ollamatest.Reply{Content: "Issue 17 fixed: a value keeps everything after the first '='."},
	)
	seeds := map[int64]int{}
	for _, task := range []string{"recipe-trailing-dot", "mcp-parser-issue"} {
		for i := range 4 {
			seeds[runner.AttemptSeed(7, task, i)] = i
		}
	}
	return func(req *api.ChatRequest) ollamatest.Reply {
		seed, _ := req.Options["seed"].(float64)
		index := seeds[int64(seed)]
		issue := len(req.Messages) > 1 && strings.Contains(req.Messages[1].Content, "issue tracker")
		switch {
		case index == 1:
			return ollamatest.Reply{Content: "I cannot do this."}
		case index == 3 && !issue:
			return ollamatest.Reply{Status: http.StatusInternalServerError, Error: "model runner crashed"}
		case issue:
			return solveIssue(req)
		}
		return solveRecipe(req)
	}, nil
}

// testServer serves the fixture database.
func testServer(t testing.TB, db string) *httptest.Server {
	t.Helper()
	s, err := New(context.Background(), db, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(hs.Close)
	return hs
}

// get fetches a page and returns its status and body.
func get(t testing.TB, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}
