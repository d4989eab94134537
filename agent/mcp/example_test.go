package mcp_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/agent/mcp"
	"github.com/benchhq/bench/tasks"
)

// A task attaches the project's own issue tracker; the runner connects it
// for one attempt, adds its tools to the registry, and closes it at the end
// of the attempt, keeping its stderr.
func Example() {
	task, err := os.MkdirTemp("", "task")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(task)
	os.MkdirAll(filepath.Join(task, "data"), 0o755)
	os.WriteFile(filepath.Join(task, "data", "issues.json"), []byte(`{"issues": [
		{"id": 7, "title": "Tokenizer drops the last token", "state": "open", "labels": ["parser"]}]}`), 0o644)

	// As declared in task.toml under [[servers]].
	srv := tasks.Server{
		Name:    "issues",
		Command: "{bench}",
		Args:    []string{"mcp", "serve", "issues", "--file", "{data}/issues.json"},
		Classes: map[string]string{"list_issues": "read", "get_issue": "read", "search_issues": "read"},
	}
	bench := benchExecutable(task)
	conn, err := mcp.Connect(context.Background(), srv, mcp.Vars{
		Task:      task,
		Workspace: task, // the attempt's workspace copy, in a real run
		Data:      filepath.Join(task, "data"),
		Bench:     bench,
	}, mcp.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	info := conn.Info()
	fmt.Println(info.ServerName, info.ProtocolVersion)
	reg := agent.NewRegistry()
	for _, t := range conn.Tools() {
		if err := reg.Add(t); err != nil { // a name collision refuses the run
			log.Fatal(err)
		}
		fmt.Println(t.Spec().Name, t.Spec().Class, t.Spec().Origin)
	}
	tool, _ := reg.Lookup("issues__list_issues")
	res, err := tool.Call(context.Background(), map[string]any{"label": "parser"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Text)
	// Output:
	// bench-issuetracker 2026-07-28
	// issues__get_issue read mcp:issues
	// issues__list_issues read mcp:issues
	// issues__search_issues read mcp:issues
	// #7 [open] Tokenizer drops the last token (labels: parser), 0 comments
}

// benchExecutable returns a bench to run as the server: for this example,
// a link named "bench" to the test binary, whose TestMain serves
// `mcp serve issues --file PATH` as bench does.
func benchExecutable(dir string) string {
	exe, err := os.Executable()
	if err != nil {
		log.Fatal(err)
	}
	link := filepath.Join(dir, "bench")
	if err := os.Symlink(exe, link); err != nil {
		log.Fatal(err)
	}
	return link
}
