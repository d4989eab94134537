package main

import (
	"bytes"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchhq/bench/results"
)

// schema1File writes a database as bench at schema version 1 left it,
// from the released migration file, with one finished run.
func schema1File(t *testing.T) string {
	t.Helper()
	ddl, err := os.ReadFile("../../results/migrations/0001_initial.sql")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{string(ddl), "PRAGMA user_version = 1", fmt.Sprintf("PRAGMA application_id = %d", results.ApplicationID),
		`INSERT INTO runs (id, created_at, model, seed, attempts_per_task, suite, status) VALUES ('r1', '2025-03-01T12:00:00.000Z', 'qwen3:0.6b', 1, 1, 'examples', 'finished')`,
		`INSERT INTO arms (run_id, name, idx) VALUES ('r1', 'default', 0)`,
		`INSERT INTO tasks (run_id, id, idx) VALUES ('r1', 'recipe', 0)`,
		`INSERT INTO attempts (run_id, arm, task_id, idx, seed, status, reward, turns, started_at, finished_at) VALUES ('r1', 'default', 'recipe', 0, 7, 'finished', 1, 2, '2025-03-01T12:00:01.000Z', '2025-03-01T12:01:00.000Z')`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return path
}

// bench report, runs and export read a schema-1 file, which no read
// command would migrate, and leave it as it was.
func TestReadCommandsReadAnOldSchema(t *testing.T) {
	db := schema1File(t)
	before, _ := os.ReadFile(db)
	for _, args := range [][]string{{"runs"}, {"report"}, {"export"}} {
		code, stdout, stderr := bench(t, append(args, "--db", db)...)
		if code != 0 || !strings.Contains(stdout+stderr, "r1") {
			t.Errorf("bench %s on a schema-1 file: exit %d\nstdout: %s\nstderr: %s", args[0], code, stdout, stderr)
		}
	}
	if after, _ := os.ReadFile(db); !bytes.Equal(before, after) {
		t.Error("a read command changed the file")
	}
}

func TestReadCommandsRefuseANewerSchema(t *testing.T) {
	db := schema1File(t)
	raw, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(fmt.Sprintf("PRAGMA user_version = %d", results.SchemaVersion+1)); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	for _, args := range [][]string{{"runs"}, {"report"}, {"export"}, {"run", "--model", "m", "--task", recipeTask}} {
		code, _, stderr := bench(t, append(args, "--db", db)...)
		if code != 2 || !strings.Contains(stderr, "use a newer bench") || strings.Contains(stderr, "for writing") {
			t.Errorf("bench %s on a newer file: exit %d, stderr %q; want 2 and 'use a newer bench'", args[0], code, stderr)
		}
	}
}
