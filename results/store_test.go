package results

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/evaluator"
	"github.com/ollama/ollama/api"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// openTemp opens a new store in a temporary directory.
func openTemp(t testing.TB) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "bench.db")
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

// rawDB opens the file with plain database/sql, the way sqlite3 users see it.
func rawDB(t testing.TB, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func testRun() *Run {
	return &Run{
		ID:              "run-1",
		Name:            "smoke",
		CreatedAt:       t0,
		Model:           "qwen3:4b",
		Options:         map[string]any{"temperature": 0.0, "num_ctx": 8192.0, "num_predict": 1024.0},
		Seed:            42,
		AttemptsPerTask: 4,
		Suite:           "examples",
		SuiteDir:        "tasks/suites/examples",
		Config:          `{"model":"qwen3:4b"}`,
		Status:          RunRunning,
		BenchVersion:    "v0.1.0",
		Arms: []Arm{
			{Name: "baseline", Index: 0, Config: `{"profile":"default"}`},
			{Name: "strict", Index: 1, Config: `{"profile":"strict"}`},
		},
		Tasks: []TaskInfo{
			{ID: "recipe-trailing-dot", Dir: "tasks/suites/examples/recipe-trailing-dot", Hash: "sha256:aa", Instruction: "Fix the recipe."},
			{ID: "csv-sum", Dir: "tasks/suites/examples/csv-sum", Hash: "sha256:bb", Instruction: "Sum the column."},
		},
	}
}

// createAtVersion makes a bench database at an older schema version, by
// the migrations up to it: a file as an older bench left it.
func createAtVersion(t testing.TB, path string, version int) {
	t.Helper()
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	db := rawDB(t, path)
	defer db.Close()
	for _, m := range ms[:version] {
		if _, err := db.Exec(m.sql); err != nil {
			t.Fatalf("%s: %v", m.name, err)
		}
	}
	if _, err := db.Exec(fmt.Sprintf("PRAGMA user_version = %d; PRAGMA application_id = %d", version, ApplicationID)); err != nil {
		t.Fatal(err)
	}
}

func createRun(t testing.TB, s *Store) *Run {
	t.Helper()
	r := testRun()
	if err := s.CreateRun(context.Background(), r); err != nil {
		t.Fatalf("CreateRun: %v", err)
	}
	return r
}

// trajectory builds a trajectory of n turns, each asking for one call
// except the last, which answers.
func trajectory(turns, calls int) *agent.Trajectory {
	var tools []api.Tool
	if err := json.Unmarshal([]byte(`[{"type":"function","function":{"name":"read_file","description":"Read a file.",
		"parameters":{"type":"object","required":["path"],"properties":{"path":{"type":"string","description":"file path"}}}}}]`), &tools); err != nil {
		panic(err)
	}
	tr := &agent.Trajectory{
		Tools:    tools,
		Messages: []api.Message{{Role: "system", Content: "You are an agent."}, {Role: "user", Content: "Fix the recipe."}},
		Stop:     agent.StopAnswered,
		Wall:     time.Duration(turns) * 1500 * time.Millisecond,
	}
	for i := range turns {
		tr.Turns = append(tr.Turns, agent.Turn{
			Index: i, PromptTokens: 1000 + 100*i, CompletionTokens: 50,
			TotalDuration: 1400 * time.Millisecond, LoadDuration: 5 * time.Millisecond,
			PromptDuration: 300 * time.Millisecond, EvalDuration: 1000 * time.Millisecond,
			Wall: 1500 * time.Millisecond, DoneReason: "stop",
		})
	}
	for i := range calls {
		turn := min(i, turns-1)
		tr.Turns[turn].ToolCalls++
		args := api.NewToolCallFunctionArguments()
		args.Set("path", fmt.Sprintf("file%d.txt", i))
		tr.Messages = append(tr.Messages,
			api.Message{Role: "assistant", Thinking: "look", ToolCalls: []api.ToolCall{{ID: fmt.Sprintf("call_%d", i),
				Function: api.ToolCallFunction{Index: 0, Name: "read_file", Arguments: args}}}},
			api.Message{Role: "tool", Content: "contents", ToolName: "read_file", ToolCallID: fmt.Sprintf("call_%d", i)},
		)
		tr.Calls = append(tr.Calls, agent.CallRecord{
			Turn: turn, Index: i, Tool: "read_file", Origin: agent.OriginBuiltin, Class: agent.ClassRead,
			Decision: agent.Allow, Rule: "read:*", Arguments: fmt.Sprintf(`{"path":"file%d.txt"}`, i),
			Result: "contents", Duration: 3 * time.Millisecond,
		})
	}
	tr.Messages = append(tr.Messages, api.Message{Role: "assistant", Content: "Done."})
	return tr
}

func reward(v int) *int { return &v }

func finishedAttempt(runID string, key AttemptKey, r int) *Attempt {
	return &Attempt{
		RunID: runID, Key: key, Seed: 42 + int64(key.Index), Status: StatusFinished, Reward: reward(r),
		Trajectory: trajectory(3, 2),
		Test: &evaluator.TestResult{Command: "sh tests/test.sh", ExitCode: 1 - r, Passed: r == 1,
			Output: "ok\n", Duration: 250 * time.Millisecond},
		StartedAt: t0, FinishedAt: t0.Add(6 * time.Second), Tries: 1,
		Servers: []ServerLog{{Name: "files", ProtocolVersion: "2025-06-18", ServerName: "fs", ServerVersion: "1.2.3", Stderr: "started\n"}},
	}
}

func infraAttempt(runID string, key AttemptKey) *Attempt {
	tr := trajectory(2, 1)
	tr.Stop, tr.Err = agent.StopInfraError, "model server: connection refused"
	return &Attempt{RunID: runID, Key: key, Seed: 7, Status: StatusInfraError, Trajectory: tr,
		StartedAt: t0, FinishedAt: t0.Add(time.Second), Tries: 1}
}

func TestOpenInitialisesAndIsIdempotent(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{filepath.Join(dir, "new.db"), empty} {
		for i := range 2 { // the second Open finds the schema in place
			s, err := Open(ctx, path)
			if err != nil {
				t.Fatalf("Open %s (#%d): %v", path, i+1, err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
		}
		db := rawDB(t, path)
		var appID, version int64
		var mode string
		var tables int
		if err := db.QueryRow("PRAGMA application_id").Scan(&appID); err != nil {
			t.Fatal(err)
		}
		if err := db.QueryRow("PRAGMA user_version").Scan(&version); err != nil {
			t.Fatal(err)
		}
		if err := db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil {
			t.Fatal(err)
		}
		if err := db.QueryRow("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").Scan(&tables); err != nil {
			t.Fatal(err)
		}
		if appID != ApplicationID || version != SchemaVersion || mode != "wal" || tables != 18 {
			t.Errorf("%s: application_id %#x, user_version %d, journal_mode %s, %d tables; want %#x, %d, wal, 18",
				filepath.Base(path), appID, version, mode, tables, ApplicationID, SchemaVersion)
		}
	}
}

func TestOpenRefusesOtherFiles(t *testing.T) {
	ctx := context.Background()
	sqliteFile := func(t *testing.T, path string, stmts ...string) {
		db, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		for _, s := range stmts {
			if _, err := db.Exec(s); err != nil {
				t.Fatal(err)
			}
		}
	}
	tests := []struct {
		name   string
		make   func(t *testing.T, path string)
		reason string
	}{
		{"text file", func(t *testing.T, path string) {
			os.WriteFile(path, []byte(strings.Repeat("model = \"qwen3\"\n", 100)), 0o644)
		}, "not an SQLite file"},
		{"short text file", func(t *testing.T, path string) {
			os.WriteFile(path, []byte("hello\n"), 0o644)
		}, "not an SQLite file"},
		{"another application's tables", func(t *testing.T, path string) {
			sqliteFile(t, path, "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)", "INSERT INTO notes (body) VALUES ('keep me')")
		}, "another application"},
		{"another application id", func(t *testing.T, path string) {
			sqliteFile(t, path, "PRAGMA application_id = 1234", "CREATE TABLE x (y)")
		}, "application_id 0x4d2"},
		{"another application id, no tables", func(t *testing.T, path string) {
			sqliteFile(t, path, "PRAGMA application_id = 1234")
		}, "application_id 0x4d2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "file.db")
			tt.make(t, path)
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, open := range []func(context.Context, string) (*Store, error){Open, OpenReadOnly} {
				s, err := open(ctx, path)
				if err == nil {
					s.Close()
					t.Fatal("opened a file that is not a bench database")
				}
				want := path + " is not a bench database ("
				if !errors.Is(err, ErrNotBenchDatabase) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), tt.reason) {
					t.Errorf("error %q: want ErrNotBenchDatabase, %q and %q", err, want, tt.reason)
				}
			}
			after, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(before, after) {
				t.Error("the file was modified")
			}
			if _, err := os.Stat(path + "-wal"); err == nil {
				t.Error("a -wal file was left beside the file")
			}
		})
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	s, path := openTemp(t)
	s.Close()
	if _, err := rawDB(t, path).Exec("PRAGMA user_version = 99"); err != nil {
		t.Fatal(err)
	}
	_, err := Open(context.Background(), path)
	if err == nil || !strings.Contains(err.Error(), "schema version 99 is newer") {
		t.Fatalf("Open of a version 99 file: %v, want a newer-version error", err)
	}
}

func TestOpenReadOnly(t *testing.T) {
	ctx := context.Background()
	s, path := openTemp(t)
	r := createRun(t, s)
	ro, err := OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatalf("OpenReadOnly: %v", err)
	}
	defer ro.Close()
	if _, err := ro.GetRun(ctx, r.ID); err != nil {
		t.Errorf("GetRun on a read-only store: %v", err)
	}
	if err := ro.FinishRun(ctx, r.ID, RunFinished); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("FinishRun on a read-only store: %v, want a read-only error", err)
	}
	if _, err := OpenReadOnly(ctx, filepath.Join(t.TempDir(), "missing.db")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("OpenReadOnly of a missing file: %v, want ErrNotExist", err)
	}
}

func TestMigrationsAreConsistent(t *testing.T) {
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) == 0 || ms[len(ms)-1].version != SchemaVersion {
		t.Fatalf("last migration is not SchemaVersion %d: %+v", SchemaVersion, ms)
	}
}

func TestRunRoundTrip(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	want := createRun(t, s)
	got, err := s.GetRun(ctx, want.ID)
	if err != nil {
		t.Fatalf("GetRun: %v", err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("GetRun:\n got %+v\nwant %+v", got, want)
	}

	later := testRun()
	later.ID, later.CreatedAt, later.Arms, later.Tasks, later.Options = "", t0.Add(time.Hour), nil, nil, nil
	if err := s.CreateRun(ctx, later); err != nil {
		t.Fatalf("CreateRun without id: %v", err)
	}
	if later.ID == "" {
		t.Fatal("CreateRun did not fill in the id")
	}
	latest, err := s.LatestRun(ctx)
	if err != nil || latest.ID != later.ID {
		t.Fatalf("LatestRun = %v, %v; want %s", latest, err, later.ID)
	}
	runs, err := s.RunStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[0].ID != later.ID || runs[1].ID != want.ID || runs[1].Arms != 2 {
		t.Errorf("RunStats = %+v", runs)
	}

	if err := s.FinishRun(ctx, want.ID, RunInterrupted); err != nil {
		t.Fatal(err)
	}
	got, _ = s.GetRun(ctx, want.ID)
	if got.Status != RunInterrupted || got.FinishedAt == nil {
		t.Errorf("after FinishRun(interrupted): status %s, finished %v", got.Status, got.FinishedAt)
	}
	if err := s.FinishRun(ctx, want.ID, RunRunning); err != nil {
		t.Fatal(err)
	}
	got, _ = s.GetRun(ctx, want.ID)
	if got.Status != RunRunning || got.FinishedAt != nil {
		t.Errorf("after FinishRun(running): status %s, finished %v", got.Status, got.FinishedAt)
	}

	if _, err := s.GetRun(ctx, "nope"); !errors.Is(err, ErrNoRun) {
		t.Errorf("GetRun(nope) = %v, want ErrNoRun", err)
	}
	if err := s.FinishRun(ctx, "nope", RunFinished); !errors.Is(err, ErrNoRun) {
		t.Errorf("FinishRun(nope) = %v, want ErrNoRun", err)
	}
	var noRun *NoRunError
	if _, err := s.GetRun(ctx, "nope"); !errors.As(err, &noRun) || noRun.ID != "nope" {
		t.Errorf("GetRun(nope) = %v, want a *NoRunError naming nope", err)
	}
	if err := s.FinishRun(ctx, want.ID, "done"); err == nil || !strings.Contains(err.Error(), `status "done"`) {
		t.Errorf("FinishRun(done) = %v, want a status error", err)
	}
}

func TestLatestRunEmpty(t *testing.T) {
	s, _ := openTemp(t)
	if _, err := s.LatestRun(context.Background()); !errors.Is(err, ErrNoRun) {
		t.Errorf("LatestRun on an empty store = %v, want ErrNoRun", err)
	}
}

func TestCreateRunRejects(t *testing.T) {
	tests := []struct {
		name   string
		change func(r *Run)
		want   string
	}{
		{"no model", func(r *Run) { r.Model = "" }, "model: empty"},
		{"no attempts", func(r *Run) { r.AttemptsPerTask = 0 }, "attempts per task: 0"},
		{"bad status", func(r *Run) { r.Status = "paused" }, `status "paused"`},
		{"bad config", func(r *Run) { r.Config = "{" }, "config: not valid JSON"},
		{"arm twice", func(r *Run) { r.Arms[1].Name = r.Arms[0].Name }, `arm "baseline": name used twice`},
		{"task twice", func(r *Run) { r.Tasks[1].ID = r.Tasks[0].ID }, `task "recipe-trailing-dot": id used twice`},
		{"same id", func(r *Run) {}, "a run with this id already exists"},
	}
	s, _ := openTemp(t)
	createRun(t, s)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := testRun()
			if tt.name != "same id" {
				r.ID = "other"
			}
			tt.change(r)
			err := s.CreateRun(context.Background(), r)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("CreateRun = %v, want an error containing %q", err, tt.want)
			}
		})
	}
	runs, _ := s.RunStats(context.Background())
	if len(runs) != 1 {
		t.Errorf("%d runs after rejected creations, want 1", len(runs))
	}
}

func TestSaveAttemptRoundTrip(t *testing.T) {
	ctx := context.Background()
	s, path := openTemp(t)
	r := createRun(t, s)
	a := finishedAttempt(r.ID, AttemptKey{Arm: "baseline", Task: "csv-sum", Index: 2}, 1)
	id, err := s.SaveAttempt(ctx, a)
	if err != nil {
		t.Fatalf("SaveAttempt: %v", err)
	}
	db := rawDB(t, path)

	var row struct {
		runID, arm, task, status, stop, started, finished, errText, tools string
		idx, turns, calls, prompt, compl, tries                           int
		seed, wall                                                        int64
		reward                                                            sql.NullInt64
		adv                                                               sql.NullFloat64
	}
	err = db.QueryRow(`SELECT run_id, arm, task_id, a.idx, seed, status, stop_reason, reward, advantage, turns,
		tool_calls, prompt_tokens, completion_tokens, wall_ms, started_at, finished_at, tries, error, l.tools_json
		FROM attempts a JOIN tool_lists l ON l.id = a.tool_list_id WHERE a.id = ?`, id).Scan(&row.runID, &row.arm, &row.task, &row.idx, &row.seed, &row.status,
		&row.stop, &row.reward, &row.adv, &row.turns, &row.calls, &row.prompt, &row.compl, &row.wall,
		&row.started, &row.finished, &row.tries, &row.errText, &row.tools)
	if err != nil {
		t.Fatal(err)
	}
	if row.runID != r.ID || row.arm != "baseline" || row.task != "csv-sum" || row.idx != 2 || row.seed != 44 ||
		row.status != "finished" || row.stop != "answered" || row.reward.Int64 != 1 || !row.reward.Valid || row.adv.Valid ||
		row.turns != 3 || row.calls != 2 || row.prompt != 1000+1100+1200 || row.compl != 150 || row.wall != 4500 ||
		row.started != "2025-03-01T12:00:00.000Z" || row.finished != "2025-03-01T12:00:06.000Z" || row.tries != 1 || row.errText != "" {
		t.Errorf("attempt row: %+v", row)
	}
	var tools []api.Tool
	if err := json.Unmarshal([]byte(row.tools), &tools); err != nil || len(tools) != 1 || tools[0].Function.Name != "read_file" {
		t.Errorf("tools_json %s: %v", row.tools, err)
	}

	var turns []string
	rows, err := db.Query(`SELECT idx, prompt_tokens, completion_tokens, total_ns, load_ns, prompt_eval_ns, eval_ns,
		wall_ms, done_reason, tool_calls, truncated FROM turns WHERE attempt_id = ? ORDER BY idx`, id)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var idx, p, c, tw, wall, calls, trunc int64
		var load, pe, ev int64
		var done string
		if err := rows.Scan(&idx, &p, &c, &tw, &load, &pe, &ev, &wall, &done, &calls, &trunc); err != nil {
			t.Fatal(err)
		}
		turns = append(turns, strings.TrimSpace(fmt.Sprintln(idx, p, c, tw, load, pe, ev, wall, done, calls, trunc)))
	}
	wantTurns := []string{
		"0 1000 50 1400000000 5000000 300000000 1000000000 1500 stop 1 0",
		"1 1100 50 1400000000 5000000 300000000 1000000000 1500 stop 1 0",
		"2 1200 50 1400000000 5000000 300000000 1000000000 1500 stop 0 0",
	}
	if !reflect.DeepEqual(turns, wantTurns) {
		t.Errorf("turns:\n got %q\nwant %q", turns, wantTurns)
	}

	// Read as people read it: the conversation view, with each tool
	// message's text.
	var msgs []string
	rows, err = db.Query(`SELECT idx, role, content, thinking, coalesce(tool_calls_json, 'NULL'), tool_name, tool_call_id
		FROM conversation WHERE attempt_id = ? ORDER BY idx`, id)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var idx int
		var role, content, thinking, calls, toolName, callID string
		if err := rows.Scan(&idx, &role, &content, &thinking, &calls, &toolName, &callID); err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, strings.Join([]string{fmt.Sprint(idx), role, content, thinking, calls, toolName, callID}, "|"))
	}
	wantMsgs := []string{
		"0|system|You are an agent.||NULL||",
		"1|user|Fix the recipe.||NULL||",
		`2|assistant||look|[{"id":"call_0","function":{"index":0,"name":"read_file","arguments":{"path":"file0.txt"}}}]||`,
		"3|tool|contents||NULL|read_file|call_0",
		`4|assistant||look|[{"id":"call_1","function":{"index":0,"name":"read_file","arguments":{"path":"file1.txt"}}}]||`,
		"5|tool|contents||NULL|read_file|call_1",
		"6|assistant|Done.||NULL||",
	}
	if !reflect.DeepEqual(msgs, wantMsgs) {
		t.Errorf("messages:\n got %q\nwant %q", msgs, wantMsgs)
	}
	// Stored once: the tool messages' text is their calls' results.
	var stored []string
	rows, err = db.Query(`SELECT idx, content, coalesce(tool_call_idx, 'NULL') FROM messages
		WHERE attempt_id = ? AND role = 'tool' ORDER BY idx`, id)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var idx int
		var content, call string
		if err := rows.Scan(&idx, &content, &call); err != nil {
			t.Fatal(err)
		}
		stored = append(stored, fmt.Sprintf("%d|%s|%s", idx, content, call))
	}
	if want := []string{"3||0", "5||1"}; !reflect.DeepEqual(stored, want) {
		t.Errorf("tool messages stored as %q, want %q (text in tool_calls.result)", stored, want)
	}

	var calls []string
	rows, err = db.Query(`SELECT idx, turn_idx, tool, origin, class, decision, rule, approver, arguments_json, result,
		is_error, error_kind, duration_ms FROM tool_calls WHERE attempt_id = ? ORDER BY idx`, id)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var idx, turn, isErr, ms int
		var tool, origin, class, decision, rule, approver, args, result, kind string
		if err := rows.Scan(&idx, &turn, &tool, &origin, &class, &decision, &rule, &approver, &args, &result, &isErr, &kind, &ms); err != nil {
			t.Fatal(err)
		}
		calls = append(calls, strings.TrimSpace(fmt.Sprintln(idx, turn, tool, origin, class, decision, rule, approver, args, result, isErr, kind, ms)))
	}
	wantCalls := []string{
		`0 0 read_file builtin read allow read:*  {"path":"file0.txt"} contents 0  3`,
		`1 1 read_file builtin read allow read:*  {"path":"file1.txt"} contents 0  3`,
	}
	if !reflect.DeepEqual(calls, wantCalls) {
		t.Errorf("tool calls:\n got %q\nwant %q", calls, wantCalls)
	}

	var test string
	if err := db.QueryRow(`SELECT command || '|' || exit_code || '|' || passed || '|' || timed_out || '|' || output || '|' || duration_ms
		FROM test_results WHERE attempt_id = ?`, id).Scan(&test); err != nil {
		t.Fatal(err)
	}
	if want := "sh tests/test.sh|0|1|0|ok\n|250.0"; test != want {
		t.Errorf("test result %q, want %q", test, want)
	}
	var server string
	if err := db.QueryRow(`SELECT name || '|' || protocol_version || '|' || server_name || '|' || server_version || '|' || stderr
		FROM attempt_servers WHERE attempt_id = ?`, id).Scan(&server); err != nil {
		t.Fatal(err)
	}
	if want := "files|2025-06-18|fs|1.2.3|started\n"; server != want {
		t.Errorf("server %q, want %q", server, want)
	}
}

// count returns the rows of a table, or of its rows belonging to attempt id.
func count(t *testing.T, db *sql.DB, table string, attemptID int64) int {
	t.Helper()
	var n int
	if err := db.QueryRow("SELECT count(*) FROM "+table+" WHERE attempt_id = ?", attemptID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestSaveAttemptRetryAndExists(t *testing.T) {
	ctx := context.Background()
	s, path := openTemp(t)
	r := createRun(t, s)
	db := rawDB(t, path)
	key := AttemptKey{Arm: "strict", Task: "recipe-trailing-dot", Index: 0}

	infra := infraAttempt(r.ID, key)
	infra.Servers = []ServerLog{{Name: "files"}}
	first, err := s.SaveAttempt(ctx, infra)
	if err != nil {
		t.Fatalf("SaveAttempt(infra_error): %v", err)
	}
	var stop, errText string
	if err := db.QueryRow("SELECT stop_reason, error FROM attempts WHERE id = ?", first).Scan(&stop, &errText); err != nil {
		t.Fatal(err)
	}
	if stop != "infra_error" || errText != "model server: connection refused" {
		t.Errorf("infra attempt: stop %q error %q", stop, errText)
	}
	canceled := &Attempt{RunID: r.ID, Key: key, Status: StatusCanceled, StartedAt: t0, FinishedAt: t0, Error: "interrupted"}
	second, err := s.SaveAttempt(ctx, canceled)
	if err != nil {
		t.Fatalf("SaveAttempt(canceled) over infra_error: %v", err)
	}
	done := finishedAttempt(r.ID, key, 0)
	done.Tries = 1
	third, err := s.SaveAttempt(ctx, done)
	if err != nil {
		t.Fatalf("SaveAttempt(finished) over canceled: %v", err)
	}
	if first == second || second == third || first == third {
		t.Errorf("attempt ids reused: %d, %d, %d", first, second, third)
	}
	for _, table := range []string{"turns", "messages", "tool_calls", "test_results", "attempt_servers"} {
		if n := count(t, db, table, first) + count(t, db, table, second); n != 0 {
			t.Errorf("%s: %d rows of replaced attempts left", table, n)
		}
	}
	var n, tries int
	if err := db.QueryRow("SELECT count(*), max(tries) FROM attempts").Scan(&n, &tries); err != nil {
		t.Fatal(err)
	}
	if n != 1 || tries != 3 {
		t.Errorf("after two retries: %d attempts with %d tries, want 1 with 3", n, tries)
	}

	again := finishedAttempt(r.ID, key, 1)
	if _, err := s.SaveAttempt(ctx, again); !errors.Is(err, ErrAttemptExists) {
		t.Fatalf("SaveAttempt over a finished attempt = %v, want ErrAttemptExists", err)
	}
	if _, err := s.SaveAttempt(ctx, infraAttempt(r.ID, key)); !errors.Is(err, ErrAttemptExists) {
		t.Fatalf("SaveAttempt(infra_error) over a finished attempt = %v, want ErrAttemptExists", err)
	}
	var rew int
	if err := db.QueryRow("SELECT reward FROM attempts WHERE id = ?", third).Scan(&rew); err != nil || rew != 0 {
		t.Errorf("finished attempt changed: reward %d, %v", rew, err)
	}
	if c := count(t, db, "turns", third); c != 3 {
		t.Errorf("finished attempt has %d turns, want 3", c)
	}
}

func TestSaveAttemptRejects(t *testing.T) {
	s, _ := openTemp(t)
	r := createRun(t, s)
	key := AttemptKey{Arm: "baseline", Task: "csv-sum"}
	tests := []struct {
		name   string
		change func(a *Attempt)
		want   string
		is     error // the error matches it, when not nil
	}{
		{"unknown run", func(a *Attempt) { a.RunID = "nope" }, "no such run", ErrNoRun},
		{"unknown arm", func(a *Attempt) { a.Key.Arm = "wide" }, `arm "wide" is not an arm of the run`, ErrNoArm},
		{"unknown task", func(a *Attempt) { a.Key.Task = "nope" }, `task "nope" is not a task of the run`, nil},
		{"bad status", func(a *Attempt) { a.Status = "ok" }, `status "ok"`, nil},
		{"reward 2", func(a *Attempt) { a.Reward = reward(2) }, "reward 2: expected 0 or 1", nil},
		{"reward on infra", func(a *Attempt) { a.Status = StatusInfraError }, "reward set on a infra_error attempt", nil},
		{"reward on canceled", func(a *Attempt) { a.Status = StatusCanceled }, "reward set on a canceled attempt", nil},
		{"finished without reward", func(a *Attempt) { a.Reward = nil }, "reward: not set on a finished attempt", nil},
		{"negative index", func(a *Attempt) { a.Key.Index = -1 }, "index -1", nil},
		{"no start", func(a *Attempt) { a.StartedAt = time.Time{} }, "started at: not set", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := finishedAttempt(r.ID, key, 1)
			tt.change(a)
			_, err := s.SaveAttempt(context.Background(), a)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("SaveAttempt = %v, want an error containing %q", err, tt.want)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("SaveAttempt = %v, want an error matching %v", err, tt.is)
			}
		})
	}
	keys, err := s.FinishedKeys(context.Background(), r.ID)
	if err != nil || len(keys) != 0 {
		t.Errorf("FinishedKeys after rejected saves = %v, %v", keys, err)
	}
}

func TestAttemptMetricsAndAdvantages(t *testing.T) {
	ctx := context.Background()
	s, path := openTemp(t)
	r := createRun(t, s)
	ids := map[AttemptKey]int64{}
	for i, rew := range []int{1, 0, 1} {
		k := AttemptKey{Arm: "baseline", Task: "recipe-trailing-dot", Index: i}
		id, err := s.SaveAttempt(ctx, finishedAttempt(r.ID, k, rew))
		if err != nil {
			t.Fatal(err)
		}
		ids[k] = id
	}
	infraKey := AttemptKey{Arm: "baseline", Task: "recipe-trailing-dot", Index: 3}
	infraID, err := s.SaveAttempt(ctx, infraAttempt(r.ID, infraKey))
	if err != nil {
		t.Fatal(err)
	}

	keys, err := s.FinishedKeys(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 3 || keys[infraKey] || !keys[AttemptKey{Arm: "baseline", Task: "recipe-trailing-dot", Index: 1}] {
		t.Errorf("FinishedKeys = %v", keys)
	}

	rews, err := s.AttemptMetrics(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, rw := range rews {
		v := "nil"
		if rw.Reward != nil {
			v = fmt.Sprint(*rw.Reward)
		}
		got = append(got, fmt.Sprintf("%s %s %s", rw.Key, rw.Status, v))
	}
	want := []string{
		"baseline/recipe-trailing-dot#0 finished 1",
		"baseline/recipe-trailing-dot#1 finished 0",
		"baseline/recipe-trailing-dot#2 finished 1",
		"baseline/recipe-trailing-dot#3 infra_error nil",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("AttemptMetrics:\n got %q\nwant %q", got, want)
	}

	adv := map[int64]float64{}
	for _, rw := range rews[:3] {
		adv[rw.ID] = float64(*rw.Reward) - 2.0/3
	}
	if err := s.SetAdvantages(ctx, "grpo", adv); err != nil {
		t.Fatalf("SetAdvantages: %v", err)
	}
	db := rawDB(t, path)
	var a float64
	var m string
	if err := db.QueryRow("SELECT advantage, advantage_method FROM attempts WHERE id = ?", ids[AttemptKey{Arm: "baseline", Task: "recipe-trailing-dot", Index: 1}]).Scan(&a, &m); err != nil {
		t.Fatal(err)
	}
	if a != -2.0/3 || m != "grpo" {
		t.Errorf("advantage %v method %q", a, m)
	}

	// One bad id fails the whole call: nothing is written.
	bad := map[int64]float64{ids[AttemptKey{Arm: "baseline", Task: "recipe-trailing-dot", Index: 0}]: 9, infraID: 1}
	if err := s.SetAdvantages(ctx, "other", bad); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("attempt %d: no finished attempt", infraID)) {
		t.Errorf("SetAdvantages with an infra_error id = %v", err)
	}
	var n int
	if err := db.QueryRow("SELECT count(*) FROM attempts WHERE advantage_method = 'other'").Scan(&n); err != nil || n != 0 {
		t.Errorf("%d advantages written by a failed call (%v)", n, err)
	}
}

// TestConcurrentWriters has two stores on one file, as two bench processes
// would, each saving from many goroutines at once.
func TestConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "bench.db")
	stores := make([]*Store, 2)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range stores { // both initialise the new file at once
		wg.Go(func() { stores[i], errs[i] = Open(ctx, path) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Open #%d: %v", i, err)
		}
		defer stores[i].Close()
	}
	r := testRun()
	r.AttemptsPerTask = 50
	if err := stores[0].CreateRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	const perStore = 50
	saveErrs := make(chan error, 2*perStore)
	for si, s := range stores {
		for i := range perStore {
			wg.Go(func() {
				key := AttemptKey{Arm: r.Arms[si].Name, Task: r.Tasks[i%2].ID, Index: i}
				if _, err := s.SaveAttempt(ctx, finishedAttempt(r.ID, key, i%2)); err != nil {
					saveErrs <- err
				}
			})
		}
	}
	wg.Wait()
	close(saveErrs)
	for err := range saveErrs {
		t.Error(err)
	}
	var n, turns int
	db := rawDB(t, path)
	if err := db.QueryRow("SELECT count(*), (SELECT count(*) FROM turns) FROM attempts").Scan(&n, &turns); err != nil {
		t.Fatal(err)
	}
	if n != 2*perStore || turns != 3*2*perStore {
		t.Errorf("%d attempts and %d turns, want %d and %d", n, turns, 2*perStore, 3*2*perStore)
	}
}

// TestTwoProcesses runs this test binary twice at once, each process
// saving attempts into one file, the way two bench processes would.
func TestTwoProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts subprocesses")
	}
	ctx := context.Background()
	s, path := openTemp(t)
	r := testRun()
	r.AttemptsPerTask = 30
	if err := s.CreateRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	cmds := make([]*exec.Cmd, 2)
	for i := range cmds {
		cmds[i] = exec.Command(os.Args[0], "-test.run=^TestHelperWriter$", "-test.count=1")
		cmds[i].Env = append(os.Environ(), "BENCH_RESULTS_HELPER_DB="+path, fmt.Sprintf("BENCH_RESULTS_HELPER_ARM=%s", r.Arms[i].Name))
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Errorf("writer process %d: %v", i, err)
		}
	}
	var n int
	if err := rawDB(t, path).QueryRow("SELECT count(*) FROM attempts").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 2*30 {
		t.Errorf("%d attempts after two writer processes, want 60", n)
	}
}

// TestHelperWriter is TestTwoProcesses's child: it saves 30 attempts from
// 30 goroutines. It does nothing when run normally.
func TestHelperWriter(t *testing.T) {
	path, arm := os.Getenv("BENCH_RESULTS_HELPER_DB"), os.Getenv("BENCH_RESULTS_HELPER_ARM")
	if path == "" {
		t.Skip("helper process for TestTwoProcesses")
	}
	ctx := context.Background()
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var wg sync.WaitGroup
	for i := range 30 {
		wg.Go(func() {
			key := AttemptKey{Arm: arm, Task: "csv-sum", Index: i}
			if _, err := s.SaveAttempt(ctx, finishedAttempt("run-1", key, i%2)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}

func BenchmarkSaveAttempt(b *testing.B) {
	ctx := context.Background()
	s, _ := openTemp(b)
	r := createRun(b, s)
	a := finishedAttempt(r.ID, AttemptKey{Arm: "baseline", Task: "csv-sum"}, 1)
	a.Trajectory = trajectory(5, 5)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		a.Key.Index = i
		if _, err := s.SaveAttempt(ctx, a); err != nil {
			b.Fatal(err)
		}
	}
}

func TestArgumentsJSON(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "{}"},
		{`{"path":"a.txt"}`, `{"path":"a.txt"}`},
		{`{path`, `"{path"`},
	}
	for _, tt := range tests {
		if got := argumentsJSON(tt.in); got != tt.want {
			t.Errorf("argumentsJSON(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// BenchmarkSaveAttempts stores attempts 64 to a transaction, as the
// runner's saver does when attempts finish together and as scripts/gendb
// does: ns/op is per attempt.
func BenchmarkSaveAttempts(b *testing.B) {
	ctx := context.Background()
	s, _ := openTemp(b)
	r := createRun(b, s)
	const batch = 64
	var pending []*Attempt
	i := 0
	for b.Loop() {
		a := finishedAttempt(r.ID, AttemptKey{Arm: "baseline", Task: "csv-sum", Index: i}, 1)
		a.Trajectory = trajectory(5, 5)
		i++
		pending = append(pending, a)
		if len(pending) == batch {
			if _, err := s.SaveAttempts(ctx, pending); err != nil {
				b.Fatal(err)
			}
			pending = pending[:0]
		}
	}
	if _, err := s.SaveAttempts(ctx, pending); err != nil && len(pending) > 0 {
		b.Fatal(err)
	}
}

// TestSaveAttemptManyRows: an attempt's turns, messages and tool calls are
// written several rows to a statement; every count around the statement's
// size comes back whole and in order.
func TestSaveAttemptManyRows(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	r := createRun(t, s)
	for i, n := range []int{1, 2, 7, 8, 9, 16, 17, 25} {
		a := finishedAttempt(r.ID, AttemptKey{Arm: "baseline", Task: "csv-sum", Index: i}, 1)
		a.Trajectory = trajectory(n, n)
		for k := range a.Trajectory.Calls {
			a.Trajectory.Calls[k].Result = fmt.Sprintf("contents %d", k) // each its own
		}
		id, err := s.SaveAttempt(ctx, a)
		if err != nil {
			t.Fatalf("%d rows: %v", n, err)
		}
		got, err := s.LoadAttempt(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.ModelTurns) != n || len(got.Calls) != n || len(got.Messages) != len(a.Trajectory.Messages) {
			t.Fatalf("%d rows: %d turns, %d calls, %d messages back (want %d, %d, %d)", n,
				len(got.ModelTurns), len(got.Calls), len(got.Messages), n, n, len(a.Trajectory.Messages))
		}
		for k := range n {
			if tu := got.ModelTurns[k]; tu.Index != k || tu.PromptTokens != 1000+100*k {
				t.Errorf("%d rows: turn %d back as %+v", n, k, tu)
			}
			if c := got.Calls[k]; c.Index != k || c.Arguments != fmt.Sprintf(`{"path":"file%d.txt"}`, k) || c.Result != fmt.Sprintf("contents %d", k) {
				t.Errorf("%d rows: call %d back as %+v", n, k, c)
			}
		}
		for k, m := range got.Messages {
			if want := a.Trajectory.Messages[k]; m.Role != want.Role {
				t.Errorf("%d rows: message %d is %s, want %s", n, k, m.Role, want.Role)
			}
		}
	}
}

// attemptColumnCount is kept by hand beside attemptColumns: the scan of
// the report's rows splits them by it.
func TestAttemptColumnCount(t *testing.T) {
	if n := strings.Count(attemptColumns, ",") + 1; n != attemptColumnCount {
		t.Errorf("attemptColumns has %d columns, attemptColumnCount says %d", n, attemptColumnCount)
	}
}

// What an MCP call recorded beside its observation is stored with the call
// (tool_calls.details_json, version 11), and NULL for a call that kept
// nothing.
func TestCallDetailsStored(t *testing.T) {
	s, path := openTemp(t)
	r := createRun(t, s)
	a := finishedAttempt(r.ID, AttemptKey{Arm: "baseline", Task: "csv-sum", Index: 0}, 1)
	a.Trajectory.Calls[0].Details = []byte(`{"progress":{"progress":3,"total":4,"count":3}}`)
	if _, err := s.SaveAttempt(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	rows, err := rawDB(t, path).Query(`SELECT details_json FROM tool_calls ORDER BY idx`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []sql.NullString
	for rows.Next() {
		var d sql.NullString
		if err := rows.Scan(&d); err != nil {
			t.Fatal(err)
		}
		got = append(got, d)
	}
	if len(got) != 2 || got[0].String != `{"progress":{"progress":3,"total":4,"count":3}}` || got[1].Valid {
		t.Errorf("details_json = %+v", got)
	}
}

// A turn sent with a tool list an MCP server changed has that list
// (turns.tool_list_id, version 11), shared with every attempt that sent
// the same; the turns before the change have NULL: the attempt's own.
func TestTurnToolListAfterAChange(t *testing.T) {
	s, path := openTemp(t)
	r := createRun(t, s)
	a := finishedAttempt(r.ID, AttemptKey{Arm: "baseline", Task: "csv-sum", Index: 0}, 1)
	a.Trajectory.ToolChanges = []agent.ToolChange{{Turn: 1, Origin: "mcp:x", Added: []string{"x__new"}, ToolsJSON: []byte(`[{"type":"function","function":{"name":"x__new"}}]`)}}
	if _, err := s.SaveAttempt(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	rows, err := rawDB(t, path).Query(`SELECT t.idx, coalesce(l.tools_json, '') FROM turns t LEFT JOIN tool_lists l ON l.id = t.tool_list_id ORDER BY t.idx`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var idx int
		var list string
		if err := rows.Scan(&idx, &list); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%d:%s", idx, list))
	}
	want := []string{"0:", `1:[{"type":"function","function":{"name":"x__new"}}]`, `2:[{"type":"function","function":{"name":"x__new"}}]`}
	if !slices.Equal(got, want) {
		t.Errorf("turns' lists %q, want %q", got, want)
	}
}
