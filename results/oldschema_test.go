package results

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// oldFile writes a bench database at schema version v (the migrations up
// to v, as a bench of that version would have left it) holding one run
// with an arm, a task and a finished attempt, in version 1's columns,
// which every later version keeps.
func oldFile(t *testing.T, v int) string {
	t.Helper()
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), fmt.Sprintf("v%d.db", v))
	db := rawDB(t, path)
	for _, m := range ms[:v] {
		if _, err := db.Exec(m.sql); err != nil {
			t.Fatalf("migration %s: %v", m.name, err)
		}
	}
	for _, q := range []string{
		fmt.Sprintf("PRAGMA user_version = %d", v),
		fmt.Sprintf("PRAGMA application_id = %d", ApplicationID),
		`INSERT INTO runs (id, created_at, model, seed, attempts_per_task, suite, status, finished_at)
			VALUES ('old', '2025-03-01T12:00:00.000Z', 'qwen3:0.6b', 1, 1, 'examples', 'finished', '2025-03-01T12:10:00.000Z')`,
		`INSERT INTO arms (run_id, name, idx) VALUES ('old', 'default', 0)`,
		`INSERT INTO tasks (run_id, id, idx) VALUES ('old', 'recipe', 0)`,
		`INSERT INTO attempts (run_id, arm, task_id, idx, seed, status, reward, turns, prompt_tokens, started_at, finished_at)
			VALUES ('old', 'default', 'recipe', 0, 7, 'finished', 1, 3, 900, '2025-03-01T12:00:01.000Z', '2025-03-01T12:01:00.000Z')`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// Every older schema version is read (runs, reports, exports) without
// writing the file: a read command must work on a file no command would
// migrate for it, and must leave it as it was. The test covers each
// version below SchemaVersion, so it keeps covering new migrations.
func TestOpenReadOnlyReadsEveryOlderSchema(t *testing.T) {
	ctx := context.Background()
	for v := 1; v < SchemaVersion; v++ {
		t.Run(fmt.Sprintf("version %d", v), func(t *testing.T) {
			path := oldFile(t, v)
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			s, err := OpenReadOnly(ctx, path)
			if err != nil {
				t.Fatalf("OpenReadOnly of a version %d file: %v", v, err)
			}
			stats, err := s.RunStats(ctx)
			if err != nil || len(stats) != 1 || stats[0].Passes != 1 {
				t.Errorf("RunStats = %+v, %v", stats, err)
			}
			rep, err := s.Report(ctx, "old", ReportOptions{})
			if err != nil || rep.Total.Passes != 1 || len(rep.ToolTokens) != 0 {
				t.Errorf("Report: %v (%+v)", err, rep)
			}
			var out bytes.Buffer
			if _, err := s.Export(ctx, &out, ExportOptions{}); err != nil || !strings.Contains(out.String(), `"reward":1`) {
				t.Errorf("Export: %v\n%s", err, out.String())
			}
			if err := s.FinishRun(ctx, "old", RunFinished); err == nil {
				t.Error("a write through the read-only store succeeded")
			}
			tmp := s.tempDir
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(tmp); tmp == "" || !os.IsNotExist(err) {
				t.Errorf("the migrated copy %q is left after Close (%v)", tmp, err)
			}
			after, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(before, after) {
				t.Error("reading the file changed it")
			}
			for _, suffix := range []string{"-wal", "-shm", "-journal"} {
				if _, err := os.Stat(path + suffix); err == nil {
					t.Errorf("reading left %s%s beside the file", filepath.Base(path), suffix)
				}
			}
			var version int
			if err := rawDB(t, path).QueryRow("PRAGMA user_version").Scan(&version); err != nil || version != v {
				t.Errorf("user_version %d (%v), want %d still", version, err, v)
			}
		})
	}
}

func TestOpenReadOnlyRefusesNewerSchema(t *testing.T) {
	s, path := openTemp(t)
	s.Close()
	if _, err := rawDB(t, path).Exec(fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion+1)); err != nil {
		t.Fatal(err)
	}
	_, err := OpenReadOnly(context.Background(), path)
	if !errors.Is(err, ErrNewerSchema) || !strings.Contains(err.Error(), "use a newer bench") || strings.Contains(err.Error(), "writing") {
		t.Errorf("OpenReadOnly of a newer file: %v; want ErrNewerSchema saying to use a newer bench", err)
	}
}
