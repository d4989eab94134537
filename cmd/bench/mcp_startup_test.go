package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchhq/bench/internal/ollamatest"
)

// taskWithServer is a copy of the recipe task (recipe-with-server) whose
// task.toml declares one server with these fields, one per line.
func taskWithServer(t *testing.T, fields ...string) string {
	t.Helper()
	return recipeWithServer(t, "[[servers]]\n"+strings.Join(fields, "\n")+"\n")
}

// A server that prints garbage: the start timeout is a flag, and the error
// says once, not twenty times, that its lines were dropped.
func TestServerPrintingGarbage(t *testing.T) {
	srv := ollamatest.New(ollamatest.Turns(ollamatest.Reply{Content: "done"}))
	defer srv.Close()
	db := filepath.Join(t.TempDir(), "bench.db")
	code, _, stderr := bench(t, "run", "--host", srv.URL, "--model", "m", "--task", recipeTask, "--db", db, "--sandbox", "off",
		"--server-start-timeout", "1s",
		"--server", `name = "noisy", command = "sh", args = ["-c", "while :; do echo garbage; sleep 0.01; done"], default_class = "read"`)
	if code != exitCannotStart {
		t.Fatalf("exit %d, want %d (cannot start):\n%s", code, exitCannotStart, stderr)
	}
	if !strings.Contains(stderr, "no answer within 1s") {
		t.Errorf("stderr does not say the 1s start timeout ran out:\n%s", stderr)
	}
	if n := strings.Count(stderr, "[bench] dropped"); n != 1 || !strings.Contains(stderr, "stdout lines that are not JSON-RPC messages") {
		t.Errorf("%d notes of dropped lines, want one that counts them:\n%s", n, stderr)
	}
	if code, _, stderr := bench(t, "run", "--model", "m", "--task", recipeTask, "--db", db, "--server-start-timeout", "0s"); code != 2 {
		t.Errorf("--server-start-timeout 0s: exit %d, %s", code, stderr)
	}
}

// A --server named like the task's own server: the error says that the
// task and the run both declare it, not that mcp:issues collides with
// mcp:issues.
func TestServerNamedLikeTheTasksOwn(t *testing.T) {
	task := taskWithServer(t, `name = "issues"`, `command = "true"`)
	db := filepath.Join(t.TempDir(), "bench.db")
	code, _, stderr := bench(t, "run", "--model", "m", "--task", task, "--db", db,
		"--server", `name = "issues", command = "true", default_class = "read"`)
	if code != 2 || !strings.Contains(stderr, `task recipe-with-server declares an MCP server "issues"`) ||
		!strings.Contains(stderr, "the run declares another of the same name") || strings.Contains(stderr, "mcp:issues") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// bench validate checks the servers: a placeholder bench does not fill is
// refused when the task loads, and a server that cannot start makes the
// task invalid, as it would stop a run.
func TestValidateChecksTheTasksServers(t *testing.T) {
	task := taskWithServer(t, `name = "srv"`, `command = "{nosuch}/srv"`)
	code, _, stderr := bench(t, "validate", task)
	if code != 2 || !strings.Contains(stderr, "servers[0].command: unknown placeholder {nosuch}") {
		t.Errorf("unknown placeholder: exit %d, stderr %q", code, stderr)
	}
	task = taskWithServer(t, `name = "srv"`, `command = "sh"`, `args = ["-c", "echo 'no index here' >&2; exit 3"]`)
	code, stdout, stderr := bench(t, "validate", task)
	if code != 1 || !strings.Contains(stdout, "INVALID") || !strings.Contains(stdout, `mcp server "srv"`) {
		t.Errorf("a server that cannot start: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if _, err := os.Stat(task); err != nil {
		t.Fatal(err)
	}
}
