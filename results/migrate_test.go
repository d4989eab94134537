package results_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/benchhq/bench/results"
)

// schema2 copies the schema-2 fixture (testdata/schema2.db, written by
// the bench of schema version 2) to a temporary file.
func schema2(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "schema2.db"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "bench.db")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// exportCases are the exports whose output the bench of schema version 2
// wrote into testdata.
var exportCases = []struct {
	golden string
	opts   results.ExportOptions
}{
	{"schema2-export-all.jsonl", results.ExportOptions{Runs: []string{"run-1", "run-2"}}},
	{"schema2-export-rloo.jsonl", results.ExportOptions{Runs: []string{"run-1"}, Method: "rloo", OnlySignal: true}},
}

func golden(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// addedSince2 are the keys exports and reports gained after schema
// version 2 (what scoring rests on, where the time went, the advantages'
// distribution, bounds, the tasks' own servers): what the schema-2 bench
// wrote is compared without them.
var addedSince2 = []string{"tests_passed", "reward_basis", "isolation", "exit_status_only", "test_ms", "time",
	"advantage", "prompt_tokens_at_least", "task_servers", "verdicts", "hack_rates", "verdict_warnings", "verdict", "flags",
	"cases_total", "cases_passed"}

// sameAsSchema2 compares JSON documents (one, or one per line) with those
// the schema-2 bench wrote, but for the keys added since, at any depth.
func sameAsSchema2(t *testing.T, got, want string) bool {
	t.Helper()
	decode := func(s string) []any {
		var out []any
		for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
			if strings.TrimSpace(line) == "" {
				continue
			}
			var v any
			if err := json.Unmarshal([]byte(line), &v); err != nil {
				// A document over several lines (a report).
				if err := json.Unmarshal([]byte(s), &v); err != nil {
					t.Fatalf("not JSON: %v", err)
				}
				return []any{strip(v)}
			}
			out = append(out, strip(v))
		}
		return out
	}
	return reflect.DeepEqual(decode(got), decode(want))
}

// strip removes addedSince2's keys from a decoded document.
func strip(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range addedSince2 {
			if _, ok := x[k].(map[string]any); ok || k != "advantage" {
				delete(x, k) // an export line's advantage is a number, kept
			}
		}
		if v, ok := x["tool_tokens"]; ok && v == nil {
			x["tool_tokens"] = []any{} // null became [] (docs/export.md)
		}
		for k, e := range x {
			x[k] = strip(e)
		}
	case []any:
		for i, e := range x {
			x[i] = strip(e)
		}
	}
	return v
}

// conversations reads every message's text as the schema in the file
// keeps it: messages.content at version 2, the conversation view at 3.
func conversations(t *testing.T, db *sql.DB, table string) []string {
	t.Helper()
	rows, err := db.Query(`SELECT attempt_id, idx, role, content, thinking, coalesce(tool_calls_json, ''), tool_name, tool_call_id
		FROM ` + table + ` ORDER BY attempt_id, idx`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id, idx int
		var role, content, thinking, calls, name, callID string
		if err := rows.Scan(&id, &idx, &role, &content, &thinking, &calls, &name, &callID); err != nil {
			t.Fatal(err)
		}
		out = append(out, strings.Join([]string{strconv.Itoa(id), role, content, thinking, calls, name, callID}, "|"))
	}
	return out
}

func count(t *testing.T, db *sql.DB, query string) int {
	t.Helper()
	var n int
	if err := db.QueryRow(query).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// Opening a schema-2 file migrates it without loss: each distinct tool
// list is stored once, each tool result once, and the exports and reports
// are byte for byte those the bench of schema version 2 wrote.
func TestMigrateSchema2KeepsEverything(t *testing.T) {
	ctx := context.Background()
	path := schema2(t)
	old, err := sql.Open("sqlite", "file:"+filepath.Join("testdata", "schema2.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	before := conversations(t, old, "messages")
	toolLists := count(t, old, `SELECT count(DISTINCT tools_json) FROM attempts`)
	attempts := count(t, old, `SELECT count(*) FROM attempts`)

	s, err := results.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	db := s.DB().DB
	if got := count(t, db, `SELECT user_version FROM pragma_user_version`); got != results.SchemaVersion {
		t.Fatalf("user_version %d after Open, want %d", got, results.SchemaVersion)
	}
	if after := conversations(t, db, "conversation"); strings.Join(after, "\n") != strings.Join(before, "\n") {
		t.Errorf("the conversations changed:\n%s\nwant\n%s", strings.Join(after, "\n"), strings.Join(before, "\n"))
	}
	if got := count(t, db, `SELECT count(*) FROM tool_lists`); got != toolLists || toolLists != 2 {
		t.Errorf("%d tool lists stored, want %d (the distinct ones, 2 in the fixture)", got, toolLists)
	}
	if got := count(t, db, `SELECT count(*) FROM attempts WHERE tool_list_id IS NULL`); got != 0 {
		t.Errorf("%d of %d attempts lost their tool list", got, attempts)
	}
	if got := count(t, db, `SELECT count(*) FROM messages m JOIN tool_calls c ON c.attempt_id = m.attempt_id
		WHERE m.role = 'tool' AND m.content <> '' AND m.content = c.result`); got != 0 {
		t.Errorf("%d tool results still stored twice", got)
	}
	// The tool messages that are not their call's result keep their text.
	if got := count(t, db, `SELECT count(*) FROM messages WHERE role = 'tool' AND tool_call_idx IS NULL AND content <> ''`); got != 4 {
		t.Errorf("%d tool messages keep their own text, want 4 (two odd ones in each of run-2's attempts)", got)
	}
	if got := count(t, db, `SELECT count(*) FROM attempts a WHERE
		a.denials <> (SELECT count(*) FROM tool_calls c WHERE c.attempt_id = a.id AND c.decision = 'deny') OR
		a.truncated_turns <> (SELECT count(*) FROM turns u WHERE u.attempt_id = a.id AND u.truncated = 1)`); got != 0 {
		t.Errorf("%d attempts with wrong denial or truncation counts", got)
	}
	for _, c := range exportCases {
		var buf bytes.Buffer
		if _, err := s.Export(ctx, &buf, c.opts); err != nil {
			t.Fatal(err)
		}
		if want := golden(t, c.golden); !sameAsSchema2(t, buf.String(), want) {
			t.Errorf("export differs from %s:\n%s\nwant\n%s", c.golden, buf.String(), want)
		}
	}
	for _, id := range []string{"run-1", "run-2"} {
		rep, err := s.Report(ctx, id, results.ReportOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := rep.Write(&buf, results.FormatJSON); err != nil {
			t.Fatal(err)
		}
		if want := golden(t, "schema2-report-"+id+".json"); !sameAsSchema2(t, buf.String(), want) {
			t.Errorf("report of %s differs from the schema-2 bench's:\n%s\nwant\n%s", id, buf.String(), want)
		}
	}
}

// Attempts written by this bench export as the schema-2 bench exported
// the same attempts.
func TestExportOfNewWritesIsUnchanged(t *testing.T) {
	s, _, _ := newFixture(t)
	var buf bytes.Buffer
	if _, err := s.Export(context.Background(), &buf, results.ExportOptions{Runs: []string{"run-1"}}); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, line := range strings.SplitAfter(golden(t, "schema2-export-all.jsonl"), "\n") {
		if strings.HasPrefix(line, `{"run_id":"run-1"`) {
			want = append(want, line)
		}
	}
	if !sameAsSchema2(t, buf.String(), strings.Join(want, "")) {
		t.Errorf("export:\n%s\nwant\n%s", buf.String(), strings.Join(want, ""))
	}
	var lists int
	if err := s.DB().QueryRow(`SELECT count(*) FROM tool_lists`).Scan(&lists); err != nil || lists != 1 {
		t.Errorf("%d tool lists stored for 24 attempts with one list (%v), want 1", lists, err)
	}
}

// The queries docs/schema.md shows run against the schema this bench
// writes.
func TestSchemaDocQueriesRun(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "docs", "schema.md"))
	if err != nil {
		t.Fatal(err)
	}
	s, _, _ := newFixture(t)
	blocks := strings.Split(string(b), "```sql\n")[1:]
	if len(blocks) < 5 {
		t.Fatalf("%d SQL blocks in docs/schema.md", len(blocks))
	}
	for _, block := range blocks {
		q := block[:strings.Index(block, "```")]
		if strings.HasPrefix(strings.TrimSpace(q), "CREATE") {
			continue
		}
		var args []any
		if strings.Contains(q, ":run") {
			args = append(args, sql.Named("run", "run-1"))
		}
		rows, err := s.DB().Query(q, args...)
		if err != nil {
			t.Errorf("docs/schema.md query fails: %v\n%s", err, q)
			continue
		}
		n := 0
		for rows.Next() {
			n++
		}
		rows.Close()
		if n == 0 && !strings.Contains(q, "attempt_id = 42") && !strings.Contains(q, "recipe-trailing-dot") {
			t.Errorf("docs/schema.md query returns no row on the fixture:\n%s", q)
		}
	}
}
