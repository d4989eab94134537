package results

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/evaluator"
	"github.com/benchhq/bench/evaluator/testreport"
)

// This file holds the queries of the web view (`bench view`): every SQL
// statement the view runs is here, so that a change of the store's shape
// is adapted in one place. They only read.

// ErrNoAttempt is matched (errors.Is) by the error returned for an attempt
// id that the store does not hold, a *NoAttemptError.
var ErrNoAttempt = errors.New("no such attempt")

// NoAttemptError is the error for an attempt id the store does not hold.
type NoAttemptError struct {
	// ID is the attempt asked for.
	ID int64
}

// Error names the attempt.
func (e *NoAttemptError) Error() string { return fmt.Sprintf("no attempt %d", e.ID) }

// Unwrap returns ErrNoAttempt.
func (e *NoAttemptError) Unwrap() error { return ErrNoAttempt }

// RunListing is one line of the view's list of runs: the progress of
// RunStats with the arms' names and the run's end.
type RunListing struct {
	RunStat
	// ArmNames names the arms, in the run's order.
	ArmNames []string
	// FinishedAt is when the run ended; nil while it runs (or if its
	// process died).
	FinishedAt *time.Time
	// Isolation is how the run's commands were isolated (runs.isolation):
	// "bubblewrap VERSION", "none" for an unisolated run (--sandbox off),
	// "" for a run stored before bench said.
	Isolation string
}

// RunList lists every run, newest first, as RunStats does, with the
// names of their arms and their end.
func (s *Store) RunList(ctx context.Context) ([]RunListing, error) {
	stats, err := s.RunStats(ctx)
	if err != nil {
		return nil, err
	}
	var arms []struct {
		RunID string `db:"run_id"`
		Name  string `db:"name"`
	}
	if err := s.db.SelectContext(ctx, &arms, `SELECT run_id, name FROM arms ORDER BY run_id, idx, name`); err != nil {
		return nil, fmt.Errorf("list runs in %s: arms: %w", s.path, err)
	}
	var ends []struct {
		ID        string         `db:"id"`
		Finished  sql.NullString `db:"finished_at"`
		Isolation string         `db:"isolation"`
	}
	if err := s.db.SelectContext(ctx, &ends, `SELECT id, finished_at, isolation FROM runs`); err != nil {
		return nil, fmt.Errorf("list runs in %s: ends: %w", s.path, err)
	}
	names := map[string][]string{}
	for _, a := range arms {
		names[a.RunID] = append(names[a.RunID], a.Name)
	}
	end := map[string]*time.Time{}
	isolation := map[string]string{}
	for _, e := range ends {
		isolation[e.ID] = e.Isolation
		if !e.Finished.Valid {
			continue
		}
		t, err := parseTime("runs.finished_at", e.Finished.String)
		if err != nil {
			return nil, fmt.Errorf("list runs in %s: run %q: %w", s.path, e.ID, err)
		}
		end[e.ID] = &t
	}
	out := make([]RunListing, len(stats))
	for i, st := range stats {
		out[i] = RunListing{RunStat: st, ArmNames: names[st.ID], FinishedAt: end[st.ID], Isolation: isolation[st.ID]}
	}
	return out, nil
}

// RunReport is a run's report together with what it was computed from:
// the run and its attempts (AttemptMetrics, in arm, task, index order).
// The web view shows the report's numbers and draws the attempts.
type RunReport struct {
	Run      *Run
	Attempts []AttemptMetrics
	Report   *Report
}

// ReportWithAttempts builds the report of a run, as Report does, and
// returns it with the run and the attempts it was computed from.
func (s *Store) ReportWithAttempts(ctx context.Context, runID string, opts ReportOptions) (*RunReport, error) {
	run, err := s.GetRun(ctx, runID)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	attempts, err := s.AttemptMetrics(ctx, run.ID)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	rep, err := BuildReport(run, attempts, opts)
	if err != nil {
		return nil, fmt.Errorf("report of run %q: %w", run.ID, err)
	}
	ovs, err := s.overhead(ctx, run.ID)
	if err != nil {
		return nil, fmt.Errorf("report: overhead of run %q in %s: %w", run.ID, s.path, err)
	}
	rep.setToolTokens(ovs)
	if rep.TaskServers, err = s.taskServers(ctx, run, ovs); err != nil {
		return nil, fmt.Errorf("report: servers of run %q in %s: %w", run.ID, s.path, err)
	}
	if rep.Run.RewardValues, err = s.rewardValues(ctx, run); err != nil {
		return nil, fmt.Errorf("report: reward values of run %q in %s: %w", run.ID, s.path, err)
	}
	return &RunReport{Run: run, Attempts: attempts, Report: rep}, nil
}

// StoredAttempt is one attempt read back whole: what SaveAttempt wrote,
// with the advantage stored since, and whatever later schema versions
// added that this bench does not know (Extra).
type StoredAttempt struct {
	AttemptMetrics
	// RunID is the attempt's run; Seed the seed the model was sent.
	RunID string
	Seed  int64
	// StartedAt and FinishedAt bound the whole attempt; Tries counts the
	// tries of its key; Error describes an infrastructure failure.
	StartedAt  time.Time
	FinishedAt time.Time
	Tries      int
	Error      string
	// Messages is the conversation as sent, in order; Tools the tool
	// definitions as sent (a JSON array).
	Messages []ExportMessage
	Tools    json.RawMessage
	// ModelTurns and Calls are the model turns and tool calls, in order.
	ModelTurns []agent.Turn
	Calls      []agent.CallRecord
	// Test is the hidden tests' result as test_results holds it (its
	// basis, report error and the reference solution's time included);
	// nil if they did not run. Its Cases, Failed, Change and Record are
	// not filled: the store keeps them as Cases and Change below.
	Test *evaluator.TestResult
	// TestsTotal and TestsPassed count the tests the reward rests on (the
	// task's recorded tests, or the reported ones for a task without a
	// record) and those that passed; nil when the reward rests on the exit
	// status alone.
	TestsTotal, TestsPassed *int
	// Cases are the outcome of each test, sorted by test: every test the
	// report gave, and every recorded test it left out (CaseMissing).
	Cases []TestCase
	// Suspicions are the suspicion flags of the carried change, as
	// attempt_flags holds them (docs/flags.md); they never change the
	// reward.
	Suspicions []evaluator.Suspicion
	// Change is what of the agent's workspace was carried into scoring,
	// and what was left out; nil when the store holds none (the tests did
	// not run, or the attempt was stored before bench kept it).
	Change *evaluator.Change
	// Servers are the MCP servers attached to the attempt.
	Servers []ServerLog
	// Extra holds, for this attempt, the rows of tables and the values of
	// columns that this bench does not know (a later schema version's):
	// shown as they are rather than hidden.
	Extra []ExtraTable
}

// CaseMissing is the outcome of a recorded test that the report did not
// name (test_cases.outcome): it counts as not passed.
const CaseMissing testreport.Outcome = "missing"

// TestCase is one test's outcome in an attempt (a row of test_cases).
type TestCase struct {
	// Test names the test as its report does.
	Test string
	// Outcome is testreport.Pass, Fail, Skip, or CaseMissing.
	Outcome testreport.Outcome
	// Recorded says which list of the task's record holds the test:
	// "fail_to_pass", "pass_to_pass", or "" (on none).
	Recorded string
	// Duration is the test's own time, when the report gives it.
	Duration time.Duration
	// Message is the start of the failure's text, when the report gives it.
	Message string
}

// ExtraTable is a table, or the unknown columns of a known table, with
// the rows that belong to one attempt, every value as text ("" for NULL).
type ExtraTable struct {
	Name    string
	Columns []string
	Rows    [][]string
}

// knownColumns are the columns of the attempt tables that this file
// reads by name; a table with attempt_id that is not listed is shown
// whole in StoredAttempt.Extra, and an unlisted column of attempts or
// test_results alone.
var knownColumns = map[string][]string{
	"attempts": {"id", "run_id", "arm", "task_id", "idx", "seed", "status", "stop_reason", "reward",
		"advantage", "advantage_method", "turns", "tool_calls", "prompt_tokens", "completion_tokens",
		"wall_ms", "started_at", "finished_at", "tries", "error", "tools_json",
		"model_ms", "tool_ms", "test_ms", "harness_ms", "tool_list_id", "denials", "truncated_turns",
		"verdict", "flags"},
	"test_results": {"attempt_id", "command", "exit_code", "passed", "timed_out", "output", "duration_ms",
		"basis", "report_error", "tests_total", "tests_passed", "ref_duration_ms", "cases_total", "cases_passed",
		"reward_value", "metrics"},
	"attempt_flags":   nil,
	"test_cases":      nil,
	"attempt_changes": nil,
	"turns":           nil,
	"messages":        nil,
	"tool_calls":      nil,
	"attempt_servers": nil,
}

// LoadAttempt reads a whole attempt by its row id, or returns a
// *NoAttemptError.
func (s *Store) LoadAttempt(ctx context.Context, id int64) (*StoredAttempt, error) {
	a, err := s.loadAttempt(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("load attempt %d from %s: %w", id, s.path, err)
	}
	return a, nil
}

func (s *Store) loadAttempt(ctx context.Context, id int64) (*StoredAttempt, error) {
	var row struct {
		attemptRow
		RunID     string `db:"run_id"`
		Seed      int64  `db:"seed"`
		Started   string `db:"started_at"`
		Finished  string `db:"finished_at"`
		Tries     int    `db:"tries"`
		Error     string `db:"error"`
		Denials   int    `db:"denials"`
		Truncated int    `db:"truncated"`
		Verdict   string `db:"verdict"`
		Flags     string `db:"flags"`
	}
	err := s.db.GetContext(ctx, &row, `SELECT a.id, a.run_id, a.arm, a.task_id, a.idx, a.seed, a.status,
			a.stop_reason, a.reward, a.advantage, a.advantage_method, a.turns, a.tool_calls,
			a.prompt_tokens, a.completion_tokens, a.wall_ms, a.model_ms, a.tool_ms, a.test_ms, a.harness_ms,
			a.started_at, a.finished_at, a.tries, a.error,
			a.denials, a.truncated_turns AS truncated, a.verdict, a.flags
		FROM attempts a WHERE a.id = ?`, id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, &NoAttemptError{ID: id}
	}
	if err != nil {
		return nil, err
	}
	m, err := row.metrics()
	if err != nil {
		return nil, err
	}
	m.Denials, m.TruncatedTurns = row.Denials, row.Truncated
	m.Verdict, m.Flags = evaluator.Verdict(row.Verdict), splitFlags(row.Flags)
	a := &StoredAttempt{AttemptMetrics: m, RunID: row.RunID, Seed: row.Seed, Tries: row.Tries, Error: row.Error}
	if a.StartedAt, err = parseTime("attempts.started_at", row.Started); err != nil {
		return nil, err
	}
	if a.FinishedAt, err = parseTime("attempts.finished_at", row.Finished); err != nil {
		return nil, err
	}
	if a.Messages, a.Tools, err = s.conversation(ctx, id); err != nil {
		return nil, err
	}
	if a.ModelTurns, err = s.attemptTurns(ctx, id); err != nil {
		return nil, err
	}
	if a.Calls, err = s.attemptCalls(ctx, id); err != nil {
		return nil, err
	}
	if a.Test, a.TestsTotal, a.TestsPassed, err = s.attemptTest(ctx, id); err != nil {
		return nil, err
	}
	if a.Cases, err = s.attemptCases(ctx, id); err != nil {
		return nil, err
	}
	if a.Suspicions, err = s.attemptFlags(ctx, id); err != nil {
		return nil, err
	}
	if a.Change, err = s.attemptChange(ctx, id); err != nil {
		return nil, err
	}
	if a.Servers, err = s.attemptServers(ctx, id); err != nil {
		return nil, err
	}
	if a.Extra, err = s.attemptExtra(ctx, id); err != nil {
		return nil, err
	}
	return a, nil
}

func (s *Store) attemptTurns(ctx context.Context, id int64) ([]agent.Turn, error) {
	var rows []struct {
		Index      int     `db:"idx"`
		Prompt     int     `db:"prompt_tokens"`
		Completion int     `db:"completion_tokens"`
		TotalNS    int64   `db:"total_ns"`
		LoadNS     int64   `db:"load_ns"`
		PromptNS   int64   `db:"prompt_eval_ns"`
		EvalNS     int64   `db:"eval_ns"`
		WallMS     float64 `db:"wall_ms"`
		DoneReason string  `db:"done_reason"`
		ToolCalls  int     `db:"tool_calls"`
		Truncated  bool    `db:"truncated"`
		Endpoint   string  `db:"endpoint"`
	}
	if err := s.db.SelectContext(ctx, &rows, `SELECT idx, prompt_tokens, completion_tokens, total_ns, load_ns,
		prompt_eval_ns, eval_ns, wall_ms, done_reason, tool_calls, truncated, endpoint
		FROM turns WHERE attempt_id = ? ORDER BY idx`, id); err != nil {
		return nil, fmt.Errorf("read turns: %w", err)
	}
	out := make([]agent.Turn, len(rows))
	for i, r := range rows {
		out[i] = agent.Turn{Index: r.Index, PromptTokens: r.Prompt, CompletionTokens: r.Completion,
			TotalDuration: time.Duration(r.TotalNS), LoadDuration: time.Duration(r.LoadNS),
			PromptDuration: time.Duration(r.PromptNS), EvalDuration: time.Duration(r.EvalNS),
			Wall: fromMillis(r.WallMS), DoneReason: r.DoneReason, ToolCalls: r.ToolCalls, Truncated: r.Truncated,
			Endpoint: r.Endpoint}
	}
	return out, nil
}

func (s *Store) attemptCalls(ctx context.Context, id int64) ([]agent.CallRecord, error) {
	var rows []struct {
		Index     int     `db:"idx"`
		Turn      int     `db:"turn_idx"`
		Tool      string  `db:"tool"`
		Origin    string  `db:"origin"`
		Class     string  `db:"class"`
		Decision  string  `db:"decision"`
		Rule      string  `db:"rule"`
		Approver  string  `db:"approver"`
		Arguments string  `db:"arguments_json"`
		Result    string  `db:"result"`
		IsError   bool    `db:"is_error"`
		ErrorKind string  `db:"error_kind"`
		DurMS     float64 `db:"duration_ms"`
	}
	if err := s.db.SelectContext(ctx, &rows, `SELECT idx, turn_idx, tool, origin, class, decision, rule,
		approver, arguments_json, result, is_error, error_kind, duration_ms
		FROM tool_calls WHERE attempt_id = ? ORDER BY idx`, id); err != nil {
		return nil, fmt.Errorf("read tool calls: %w", err)
	}
	out := make([]agent.CallRecord, len(rows))
	for i, r := range rows {
		out[i] = agent.CallRecord{Turn: r.Turn, Index: r.Index, Tool: r.Tool, Origin: r.Origin,
			Class: agent.Class(r.Class), Decision: agent.Decision(r.Decision), Rule: r.Rule, Approver: r.Approver,
			Arguments: r.Arguments, Result: r.Result, IsError: r.IsError, ErrorKind: r.ErrorKind,
			Duration: fromMillis(r.DurMS)}
	}
	return out, nil
}

func (s *Store) attemptTest(ctx context.Context, id int64) (*evaluator.TestResult, *int, *int, error) {
	var r struct {
		Command     string          `db:"command"`
		ExitCode    int             `db:"exit_code"`
		Passed      bool            `db:"passed"`
		TimedOut    bool            `db:"timed_out"`
		Output      string          `db:"output"`
		DurMS       float64         `db:"duration_ms"`
		Basis       string          `db:"basis"`
		ReportError string          `db:"report_error"`
		Total       sql.NullInt64   `db:"tests_total"`
		Passes      sql.NullInt64   `db:"tests_passed"`
		RefMS       sql.NullFloat64 `db:"ref_duration_ms"`
		CasesTotal  sql.NullInt64   `db:"cases_total"`
		CasesPassed sql.NullInt64   `db:"cases_passed"`
		Value       sql.NullFloat64 `db:"reward_value"`
		Metrics     sql.NullString  `db:"metrics"`
	}
	err := s.db.GetContext(ctx, &r, `SELECT command, exit_code, passed, timed_out, output, duration_ms,
		basis, report_error, tests_total, tests_passed, ref_duration_ms, cases_total, cases_passed, reward_value, metrics
		FROM test_results WHERE attempt_id = ?`, id)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, nil, nil, nil
	case err != nil:
		return nil, nil, nil, fmt.Errorf("read test result: %w", err)
	}
	tr := &evaluator.TestResult{Command: r.Command, ExitCode: r.ExitCode, Passed: r.Passed, TimedOut: r.TimedOut,
		Output: r.Output, Duration: fromMillis(r.DurMS), RefDuration: msDuration(r.RefMS),
		Basis: r.Basis, ReportError: r.ReportError,
		CasesTotal: int(r.CasesTotal.Int64), CasesPassed: int(r.CasesPassed.Int64)}
	if r.Value.Valid {
		tr.Value = &r.Value.Float64
	}
	if r.Metrics.Valid {
		if err := json.Unmarshal([]byte(r.Metrics.String), &tr.Metrics); err != nil {
			return nil, nil, nil, fmt.Errorf("read test result: metrics: %w", err)
		}
	}
	count := func(v sql.NullInt64) *int {
		if !v.Valid {
			return nil
		}
		n := int(v.Int64)
		return &n
	}
	return tr, count(r.Total), count(r.Passes), nil
}

func (s *Store) attemptFlags(ctx context.Context, id int64) ([]evaluator.Suspicion, error) {
	var out []evaluator.Suspicion
	if err := s.db.SelectContext(ctx, &out, `SELECT flag, path, line, detail FROM attempt_flags
		WHERE attempt_id = ? ORDER BY idx`, id); err != nil {
		return nil, fmt.Errorf("read suspicion flags: %w", err)
	}
	return out, nil
}

func (s *Store) attemptCases(ctx context.Context, id int64) ([]TestCase, error) {
	var rows []struct {
		Test     string  `db:"test"`
		Outcome  string  `db:"outcome"`
		Recorded string  `db:"recorded"`
		DurMS    float64 `db:"duration_ms"`
		Message  string  `db:"message"`
	}
	if err := s.db.SelectContext(ctx, &rows, `SELECT test, outcome, recorded, duration_ms, message
		FROM test_cases WHERE attempt_id = ? ORDER BY idx`, id); err != nil {
		return nil, fmt.Errorf("read test cases: %w", err)
	}
	out := make([]TestCase, len(rows))
	for i, r := range rows {
		out[i] = TestCase{Test: r.Test, Outcome: testreport.Outcome(r.Outcome), Recorded: r.Recorded,
			Duration: fromMillis(r.DurMS), Message: r.Message}
	}
	return out, nil
}

func (s *Store) attemptChange(ctx context.Context, id int64) (*evaluator.Change, error) {
	var r struct {
		Carried string `db:"carried_json"`
		CMore   int    `db:"carried_more"`
		Diff    string `db:"diff"`
		DiffCut int    `db:"diff_cut"`
		LeftOut string `db:"left_out_json"`
		More    int    `db:"left_out_more"`
	}
	err := s.db.GetContext(ctx, &r, `SELECT carried_json, carried_more, diff, diff_cut, left_out_json, left_out_more
		FROM attempt_changes WHERE attempt_id = ?`, id)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read the change: %w", err)
	}
	c := &evaluator.Change{Diff: r.Diff, DiffCut: r.DiffCut, LeftOutMore: r.More, CarriedMore: r.CMore}
	if err := json.Unmarshal([]byte(r.Carried), &c.Carried); err != nil {
		return nil, fmt.Errorf("read the change: column attempt_changes.carried_json: expected a JSON list of {path, kind, size}: %w", err)
	}
	if err := json.Unmarshal([]byte(r.LeftOut), &c.LeftOut); err != nil {
		return nil, fmt.Errorf("read the change: column attempt_changes.left_out_json: expected a JSON list of {path, reason}: %w", err)
	}
	return c, nil
}

func (s *Store) attemptServers(ctx context.Context, id int64) ([]ServerLog, error) {
	var rows []struct {
		Name     string `db:"name"`
		Protocol string `db:"protocol_version"`
		Server   string `db:"server_name"`
		Version  string `db:"server_version"`
		Stderr   string `db:"stderr"`
		Catalog  string `db:"catalog_json"`
	}
	if err := s.db.SelectContext(ctx, &rows, `SELECT name, protocol_version, server_name, server_version,
		stderr, catalog_json FROM attempt_servers WHERE attempt_id = ? ORDER BY idx`, id); err != nil {
		return nil, fmt.Errorf("read server logs: %w", err)
	}
	out := make([]ServerLog, len(rows))
	for i, r := range rows {
		out[i] = ServerLog{Name: r.Name, ProtocolVersion: r.Protocol, ServerName: r.Server,
			ServerVersion: r.Version, Stderr: r.Stderr, Catalog: r.Catalog}
	}
	return out, nil
}

// attemptExtra reads what later schema versions store of an attempt and
// this file does not know: whole tables keyed by attempt_id, and unknown
// columns of attempts and test_results.
func (s *Store) attemptExtra(ctx context.Context, id int64) ([]ExtraTable, error) {
	var cols []struct {
		Table  string `db:"tbl"`
		Column string `db:"col"`
	}
	if err := s.db.SelectContext(ctx, &cols, `SELECT m.name AS tbl, p.name AS col
		FROM sqlite_schema m, pragma_table_info(m.name) p
		WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%'
		ORDER BY m.name, p.cid`); err != nil {
		return nil, fmt.Errorf("read the schema: %w", err)
	}
	byTable := map[string][]string{}
	var tables []string
	for _, c := range cols {
		if _, ok := byTable[c.Table]; !ok {
			tables = append(tables, c.Table)
		}
		byTable[c.Table] = append(byTable[c.Table], c.Column)
	}
	var out []ExtraTable
	for _, t := range tables {
		all := byTable[t]
		known, isKnown := knownColumns[t]
		var show []string
		key := "attempt_id"
		switch {
		case t == "attempts":
			key = "id"
			fallthrough
		case isKnown && known != nil:
			for _, c := range all {
				if !slices.Contains(known, c) {
					show = append(show, c)
				}
			}
		case isKnown:
			continue
		case slices.Contains(all, "attempt_id"):
			show = all
		}
		if len(show) == 0 {
			continue
		}
		et, err := s.extraRows(ctx, t, key, show, id)
		if err != nil {
			return nil, err
		}
		if len(et.Rows) > 0 {
			out = append(out, et)
		}
	}
	return out, nil
}

// extraRows reads columns of table for one attempt, as text.
func (s *Store) extraRows(ctx context.Context, table, key string, columns []string, id int64) (ExtraTable, error) {
	quoted := make([]string, len(columns))
	for i, c := range columns {
		quoted[i] = quoteIdent(c)
	}
	order := ""
	if key == "attempt_id" {
		order = " ORDER BY rowid"
	}
	q := `SELECT ` + strings.Join(quoted, ", ") + ` FROM ` + quoteIdent(table) + ` WHERE ` + quoteIdent(key) + ` = ?` + order
	rows, err := s.db.QueryContext(ctx, q, id)
	if err != nil {
		// A WITHOUT ROWID table has no rowid to order by.
		if order == "" {
			return ExtraTable{}, fmt.Errorf("read table %s: %w", table, err)
		}
		q = strings.TrimSuffix(q, order)
		if rows, err = s.db.QueryContext(ctx, q, id); err != nil {
			return ExtraTable{}, fmt.Errorf("read table %s: %w", table, err)
		}
	}
	defer rows.Close()
	et := ExtraTable{Name: table, Columns: columns}
	for rows.Next() {
		vals := make([]any, len(columns))
		ptrs := make([]any, len(columns))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return ExtraTable{}, fmt.Errorf("read table %s: %w", table, err)
		}
		row := make([]string, len(vals))
		for i, v := range vals {
			row[i] = sqlText(v)
		}
		et.Rows = append(et.Rows, row)
	}
	if err := rows.Err(); err != nil {
		return ExtraTable{}, fmt.Errorf("read table %s: %w", table, err)
	}
	return et, nil
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// sqlText is a value as SQLite's own text conversion gives it.
func sqlText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case []byte:
		return string(x)
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		if x {
			return "1"
		}
		return "0"
	case time.Time:
		return formatTime(x)
	}
	return fmt.Sprint(v)
}

// AttemptMark is the outcome of one attempt, as the view marks it.
type AttemptMark struct {
	ID         int64
	Key        AttemptKey
	Status     AttemptStatus
	StopReason string
	Reward     *int
}

// Neighbours returns the attempts of a's group (same run, arm and task)
// and the attempts with a's task and index under the run's other arms
// (the same seed: a's pairs), each in the run's order. arms are the run's
// arms in order.
func (s *Store) Neighbours(ctx context.Context, a *StoredAttempt, arms []string) (group, pairs []AttemptMark, err error) {
	type markRow struct {
		ID     int64         `db:"id"`
		Arm    string        `db:"arm"`
		Task   string        `db:"task_id"`
		Index  int           `db:"idx"`
		Status string        `db:"status"`
		Stop   string        `db:"stop_reason"`
		Reward sql.NullInt64 `db:"reward"`
	}
	conv := func(rows []markRow) []AttemptMark {
		out := make([]AttemptMark, len(rows))
		for i, r := range rows {
			out[i] = AttemptMark{ID: r.ID, Key: AttemptKey{Arm: r.Arm, Task: r.Task, Index: r.Index},
				Status: AttemptStatus(r.Status), StopReason: r.Stop}
			if r.Reward.Valid {
				v := int(r.Reward.Int64)
				out[i].Reward = &v
			}
		}
		return out
	}
	const cols = `SELECT id, arm, task_id, idx, status, stop_reason, reward FROM attempts `
	var g []markRow
	if err := s.db.SelectContext(ctx, &g, cols+`WHERE run_id = ? AND arm = ? AND task_id = ? ORDER BY idx`,
		a.RunID, a.Key.Arm, a.Key.Task); err != nil {
		return nil, nil, fmt.Errorf("attempts of the group of attempt %d in %s: %w", a.ID, s.path, err)
	}
	var p []markRow
	for _, arm := range arms {
		if arm == a.Key.Arm {
			continue
		}
		var r []markRow
		if err := s.db.SelectContext(ctx, &r, cols+`WHERE run_id = ? AND arm = ? AND task_id = ? AND idx = ?`,
			a.RunID, arm, a.Key.Task, a.Key.Index); err != nil {
			return nil, nil, fmt.Errorf("pairs of attempt %d in %s: %w", a.ID, s.path, err)
		}
		p = append(p, r...)
	}
	return conv(g), conv(p), nil
}

// fromMillis is the inverse of millis.
func fromMillis(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

// PassRate is Passes / Finished, as a report pools it; nil when nothing
// finished.
func (r RunStat) PassRate() *float64 {
	if r.Finished == 0 {
		return nil
	}
	return ptr(float64(r.Passes) / float64(r.Finished))
}

// RunVersion returns a value that changes whenever anything a run's
// report is computed from changes: an attempt saved or replaced, an
// advantage stored, the run's status, its measurements. The view keeps a
// report while its run's version stays the same, and a run's summary is
// used only at the version it was computed at. It is the run's status,
// finish time and revision (runs.revision, which the store's triggers
// raise at every change of the run's attempts and tool overhead): one
// row's read, whatever the run's size. It is an error matching ErrNoRun
// for a run the store does not hold.
func (s *Store) RunVersion(ctx context.Context, runID string) (string, error) {
	var v struct {
		Status   string         `db:"status"`
		Finished sql.NullString `db:"finished_at"`
		Revision int64          `db:"revision"`
	}
	err := s.db.GetContext(ctx, &v, `SELECT status, finished_at, revision FROM runs WHERE id = ?`, runID)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("version of run %q in %s: %w", runID, s.path, &NoRunError{ID: runID})
	}
	if err != nil {
		return "", fmt.Errorf("version of run %q in %s: %w", runID, s.path, err)
	}
	return fmt.Sprintf("%s/%s/%d", v.Status, v.Finished.String, v.Revision), nil
}

// conversation reads one attempt's messages, each with its whole text
// (the conversation view), and the tool list it was offered.
func (s *Store) conversation(ctx context.Context, attemptID int64) ([]ExportMessage, json.RawMessage, error) {
	var tools sql.NullString
	if err := s.db.GetContext(ctx, &tools, `SELECT l.tools_json FROM attempts a
		LEFT JOIN tool_lists l ON l.id = a.tool_list_id WHERE a.id = ?`, attemptID); err != nil {
		return nil, nil, fmt.Errorf("read tools: %w", err)
	}
	list := json.RawMessage("[]")
	if tools.Valid {
		if !json.Valid([]byte(tools.String)) || !strings.HasPrefix(strings.TrimSpace(tools.String), "[") {
			return nil, nil, errors.New("column tool_lists.tools_json: not a JSON array")
		}
		list = json.RawMessage(tools.String)
	}
	var rows []struct {
		Index      int            `db:"idx"`
		Role       string         `db:"role"`
		Content    string         `db:"content"`
		Thinking   string         `db:"thinking"`
		ToolCalls  sql.NullString `db:"tool_calls_json"`
		ToolName   string         `db:"tool_name"`
		ToolCallID string         `db:"tool_call_id"`
	}
	if err := s.db.SelectContext(ctx, &rows, `SELECT idx, role, content, thinking, tool_calls_json,
		tool_name, tool_call_id FROM conversation WHERE attempt_id = ? ORDER BY idx`, attemptID); err != nil {
		return nil, nil, fmt.Errorf("read messages: %w", err)
	}
	msgs := make([]ExportMessage, len(rows))
	for i, r := range rows {
		m := ExportMessage{Role: r.Role, Content: r.Content, ReasoningContent: r.Thinking,
			Name: r.ToolName, ToolCallID: r.ToolCallID}
		if r.ToolCalls.Valid {
			calls, err := exportToolCalls(r.ToolCalls.String)
			if err != nil {
				return nil, nil, fmt.Errorf("message %d: column messages.tool_calls_json: %w", r.Index, err)
			}
			m.ToolCalls = calls
		}
		msgs[i] = m
	}
	return msgs, list, nil
}
