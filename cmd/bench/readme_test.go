package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchhq/bench/runner"
)

// TestReadmeRunFileLoads keeps the README's run-file example true: it must
// load, and make a plan whose arms are all valid.
func TestReadmeRunFileLoads(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), "#### The run file")
	if !ok {
		t.Fatal("README has no run-file section")
	}
	_, block, ok := strings.Cut(after, "```toml\n")
	if !ok {
		t.Fatal("README's run-file section has no toml block")
	}
	block, _, _ = strings.Cut(block, "```")
	suite, err := filepath.Abs("../../tasks/suites/examples")
	if err != nil {
		t.Fatal(err)
	}
	block = strings.Replace(block, `suite = "tasks/suites/examples"`, `suite = "`+suite+`"`, 1)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "approve.sh"), []byte("#!/bin/sh\necho deny\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "run.toml")
	if err := os.WriteFile(path, []byte(block), 0o644); err != nil {
		t.Fatal(err)
	}
	rf, err := runner.LoadRunFile(path)
	if err != nil {
		t.Fatalf("the README's run file does not load: %v", err)
	}
	plan, err := planFromFlags(&runFlags{}, map[string]bool{}, rf)
	if err != nil {
		t.Fatal(err)
	}
	if err := plan.Normalize(); err != nil {
		t.Fatal(err)
	}
	if len(plan.Arms) != 3 || plan.Arms[2].Profile != "ask-exec" || len(plan.Arms[0].Servers) != 1 {
		t.Errorf("arms %+v", plan.Arms)
	}
	if _, err := plan.Profiles.Lookup("tests-only"); err != nil {
		t.Error(err)
	}
}

// The shipped example run file loads as it is, from its own folder, and
// its approver exists.
func TestShippedRunFileLoads(t *testing.T) {
	rf, err := runner.LoadRunFile("../../docs/examples/run.toml")
	if err != nil {
		t.Fatalf("docs/examples/run.toml does not load: %v", err)
	}
	plan, err := planFromFlags(&runFlags{}, map[string]bool{}, rf)
	if err != nil {
		t.Fatal(err)
	}
	if err := plan.Normalize(); err != nil {
		t.Fatal(err)
	}
	if len(plan.Suite.Tasks) != 2 || len(plan.Arms) != 3 {
		t.Errorf("tasks %d, arms %+v", len(plan.Suite.Tasks), plan.Arms)
	}
}

// docs/tasks.md lists every task of the example suite (it listed 11 of 13).
func TestTasksDocListsEveryExampleTask(t *testing.T) {
	doc, err := os.ReadFile("../../docs/tasks.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(doc), "## The example suite")
	if !ok {
		t.Fatal("docs/tasks.md has no example-suite section")
	}
	entries, err := os.ReadDir("../../" + DefaultSuite)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join("../../"+DefaultSuite, e.Name(), "task.toml")); err != nil {
			continue
		}
		if !strings.Contains(table, "| `"+e.Name()+"` |") {
			t.Errorf("docs/tasks.md's example suite does not list %s", e.Name())
		}
	}
}
