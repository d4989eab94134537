package results

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/benchhq/bench/evaluator"
)

// How an export reads and writes a large run: the groups to write are
// jobs, read from the store (one query per group) and encoded by a few
// workers at once, each on its own connection, and written in order as
// they come back. SQLite reading is most of an export's cost, and a
// read-only WAL file takes concurrent readers.

// exportAttempt is what a line needs of an attempt beyond its metrics.
type exportAttempt struct {
	seed     int64
	toolList sql.NullInt64
	wallMS   float64
	// basis, testsTotal and testsPassed are the hidden tests' (test_results).
	basis                   sql.NullString
	testsTotal, testsPassed sql.NullInt64
	// casesTotal and casesPassed are the out-of-process cases'.
	casesTotal, casesPassed sql.NullInt64
}

// exporter is what an export keeps from run to run.
type exporter struct {
	s    *Store
	w    io.Writer
	msgs *sql.Stmt
	// workers is how many groups are read and encoded at once.
	workers int
	// free holds line buffers written and ready for reuse.
	free chan []byte
	// tasks is how many tasks are read at a time (exportTasks).
	tasks int
}

// messagesQuery reads the conversations of a group's attempts (their ids
// as a JSON array), in attempt then message order, each tool message with
// its call's result when that is where its text is kept (as the view
// conversation does). One query per group, not per attempt.
//
// Reading a column costs SQLite's driver three calls, each under the
// connection's lock, and a NULL one call: the texts that are mostly empty
// come as NULL when empty.
const messagesQuery = `SELECT m.attempt_id, m.role,
		CASE WHEN m.tool_call_idx IS NULL THEN m.content ELSE coalesce(c.result, m.content) END AS content,
		nullif(m.thinking, ''), m.tool_calls_json, nullif(m.tool_name, ''), nullif(m.tool_call_id, '')
	FROM messages m
	LEFT JOIN tool_calls c ON c.attempt_id = m.attempt_id AND c.idx = m.tool_call_idx
	WHERE m.attempt_id IN (SELECT value FROM json_each(?))
	ORDER BY m.attempt_id, m.idx`

func (s *Store) newExporter(ctx context.Context, w io.Writer) (*exporter, error) {
	st, err := s.db.PrepareContext(ctx, messagesQuery)
	if err != nil {
		return nil, fmt.Errorf("prepare messages query: %w", err)
	}
	n := min(runtime.GOMAXPROCS(0), 4)
	return &exporter{s: s, w: w, msgs: st, workers: n, free: make(chan []byte, 4*n), tasks: exportTasks}, nil
}

func (ex *exporter) close() { ex.msgs.Close() }

// exportJob is one group to write: its attempts kept by the filters, and,
// once a worker is done, its lines.
type exportJob struct {
	group    *group
	kept     []AttemptMetrics
	finished int
	done     chan exportResult
}

type exportResult struct {
	lines []byte
	err   error
}

// runJob is what every line of a run shares.
type runJob struct {
	run     *Run
	options map[string]any
	byID    map[int64]exportAttempt
	lists   map[int64]json.RawMessage
}

// exportTasks is how many of a run's tasks an export reads at a time,
// under one arm: its memory holds their attempts, not the run's.
const exportTasks = 256

// exportColumns are the columns an export reads of an attempt besides
// attemptColumns, in the order exportRun's conversion takes them.
func exportColumns() []string {
	return []string{"a.seed", "a.tool_list_id",
		"(SELECT basis FROM test_results WHERE attempt_id = a.id)",
		"(SELECT tests_total FROM test_results WHERE attempt_id = a.id)",
		"(SELECT tests_passed FROM test_results WHERE attempt_id = a.id)",
		"(SELECT cases_total FROM test_results WHERE attempt_id = a.id)",
		"(SELECT cases_passed FROM test_results WHERE attempt_id = a.id)",
		"a.verdict", "a.flags"}
}

// exportRun writes a run's lines, a slice of its tasks at a time under
// each arm in turn (the lines' order: arm, task, index), so that memory
// holds a slice's attempts whatever the run's size.
func (s *Store) exportRun(ctx context.Context, ex *exporter, run *Run, opts ExportOptions, stats *ExportStats, methods map[string]bool) error {
	rj := &runJob{run: run, options: run.Options}
	if rj.options == nil {
		rj.options = map[string]any{}
	}
	// A run is written a slice at a time: an attempt that every reader
	// refuses is found before its first line.
	if err := s.checkRewards(ctx, run.ID); err != nil {
		return err
	}
	missing, stored, err := s.advantageMethods(ctx, run.ID)
	if err != nil {
		return err
	}
	var adv map[int64]float64
	recompute, ok := recomputeFrom(opts.Method, missing, stored)
	if ok {
		// Advantages are computed over the whole run at once (a batch
		// method scales by every group's rewards): from the rewards alone.
		if adv, err = s.runAdvantages(ctx, run, recompute); err != nil {
			return err
		}
		stats.Computed = append(stats.Computed, run.ID)
	}
	if rj.lists, err = s.toolLists(ctx, run.ID); err != nil {
		return err
	}
	type withLine struct {
		AttemptMetrics
		exportAttempt
	}
	conv := func(r *attemptRow, x *columnReader) (withLine, error) {
		m, err := r.metrics()
		l := exportAttempt{seed: x.int64(0), toolList: x.nullInt64(1), wallMS: r.WallMS,
			basis: x.nullText(2), testsTotal: x.nullInt64(3), testsPassed: x.nullInt64(4),
			casesTotal: x.nullInt64(5), casesPassed: x.nullInt64(6)}
		m.Verdict, m.Flags = evaluator.Verdict(x.text(7)), splitFlags(x.text(8))
		return withLine{m, l}, err
	}
	for _, arm := range run.Arms {
		if len(opts.Arms) > 0 && !slices.Contains(opts.Arms, arm.Name) {
			continue
		}
		for start := 0; start < len(run.Tasks); start += ex.tasks {
			part := *run
			part.Arms = []Arm{arm}
			part.Tasks = run.Tasks[start:min(start+ex.tasks, len(run.Tasks))]
			rows, err := partAttempts(ctx, s, &part, exportColumns(), conv)
			if err != nil {
				return fmt.Errorf("read attempts: %w", err)
			}
			attempts := make([]AttemptMetrics, len(rows))
			rj.byID = make(map[int64]exportAttempt, len(rows))
			for i, r := range rows {
				attempts[i] = r.AttemptMetrics
				rj.byID[r.ID] = r.exportAttempt
				if r.Status != StatusFinished {
					stats.Unscored++
				}
			}
			rows = nil
			groups, err := groupAttempts(&part, attempts)
			if err != nil {
				return err
			}
			if ok {
				for _, g := range groups {
					for i := range g.attempts {
						if v, ok := adv[g.attempts[i].ID]; ok {
							g.attempts[i].Advantage, g.attempts[i].AdvantageMethod = &v, string(recompute)
						}
					}
				}
			}
			var jobs []*exportJob
			for _, g := range groups {
				if opts.OnlySignal && g.zeroVariance() {
					continue
				}
				finished := g.finished()
				j := &exportJob{group: g, finished: len(finished), done: make(chan exportResult, 1)}
				for _, a := range finished {
					if opts.keep(float64(*a.Reward)) {
						j.kept = append(j.kept, a)
					}
				}
				if len(j.kept) > 0 {
					jobs = append(jobs, j)
				}
			}
			if err := ex.run(ctx, rj, jobs, stats, methods); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkRewards returns the error AttemptMetrics gives for a finished
// attempt of the run without a reward, if it holds one.
func (s *Store) checkRewards(ctx context.Context, runID string) error {
	var rows []attemptRow
	if err := s.db.SelectContext(ctx, &rows, `SELECT id, arm, task_id, idx, status FROM attempts
		WHERE run_id = ? AND status = 'finished' AND reward IS NULL ORDER BY id LIMIT 1`, runID); err != nil {
		return fmt.Errorf("rewards of run %q: %w", runID, err)
	}
	for _, r := range rows {
		if _, err := r.metrics(); err != nil {
			return err
		}
	}
	return nil
}

// advantageMethods says whether a finished attempt of the run has no
// advantage, and which methods the stored advantages were computed with:
// what recomputeFrom decides by. The index attempts_report answers it.
func (s *Store) advantageMethods(ctx context.Context, runID string) (missing bool, stored map[string]bool, err error) {
	var rows []struct {
		Method sql.NullString `db:"m"`
		Has    bool           `db:"has"`
	}
	if err := s.db.SelectContext(ctx, &rows, `SELECT DISTINCT advantage_method AS m, advantage IS NOT NULL AS has
		FROM attempts WHERE run_id = ? AND status = 'finished' AND reward IS NOT NULL`, runID); err != nil {
		return false, nil, fmt.Errorf("advantages of run %q: %w", runID, err)
	}
	stored = map[string]bool{}
	for _, r := range rows {
		if !r.Has {
			missing = true
			continue
		}
		stored[r.Method.String] = true
	}
	return missing, stored, nil
}

// runAdvantages computes the advantage of every finished attempt of a
// run with method, by attempt id, from the attempts' rewards alone.
func (s *Store) runAdvantages(ctx context.Context, run *Run, method evaluator.Method) (map[int64]float64, error) {
	keys, err := runAttempts(ctx, s, run.ID, nil, func(r *attemptRow, _ *columnReader) (AttemptMetrics, error) {
		m, err := r.metrics()
		// Only what grouping and the advantage need.
		return AttemptMetrics{ID: m.ID, Key: m.Key, Status: m.Status, Reward: m.Reward}, err
	})
	if err != nil {
		return nil, fmt.Errorf("read rewards: %w", err)
	}
	groups, err := groupAttempts(run, keys)
	if err != nil {
		return nil, err
	}
	return groupAdvantages(groups, method)
}

// partAttempts reads the attempts of part's arms and tasks (a slice of a
// run), attemptColumns then extraColumns, converted by conv, in arm,
// task, index order.
func partAttempts[T any](ctx context.Context, s *Store, part *Run, extraColumns []string, conv func(r *attemptRow, extra *columnReader) (T, error)) ([]T, error) {
	if len(part.Tasks) == 0 {
		return nil, nil
	}
	taskRank := make(map[string]int, len(part.Tasks))
	for i, t := range part.Tasks {
		taskRank[t.ID] = i
	}
	q := `SELECT ` + attemptColumns
	for _, c := range extraColumns {
		q += ", " + c
	}
	q += ` FROM attempts a WHERE a.run_id = ? AND a.arm = ? AND a.task_id IN (?` + strings.Repeat(", ?", len(part.Tasks)-1) + `)`
	type keyed struct {
		task, idx int
		v         T
	}
	var out []T
	for _, arm := range part.Arms {
		args := make([]any, 0, 2+len(part.Tasks))
		args = append(args, part.ID, arm.Name)
		for _, t := range part.Tasks {
			args = append(args, t.ID)
		}
		rows, err := s.db.QueryContext(ctx, q, args...)
		if err != nil {
			return nil, err
		}
		names, err := rows.Columns()
		if err != nil {
			rows.Close()
			return nil, err
		}
		vals := make([]any, len(names))
		dest := make([]any, len(names))
		for i := range vals {
			dest[i] = &vals[i]
		}
		var got []keyed
		r := attemptRow{Arm: arm.Name}
		for rows.Next() {
			if err := rows.Scan(dest...); err != nil {
				rows.Close()
				return nil, err
			}
			c := &columnReader{vals: vals[:attemptColumnCount], names: names[:attemptColumnCount]}
			if err := r.scan(c); err != nil {
				rows.Close()
				return nil, err
			}
			x := &columnReader{vals: vals[attemptColumnCount:], names: names[attemptColumnCount:]}
			v, err := conv(&r, x)
			if err == nil {
				err = x.err
			}
			if err != nil {
				rows.Close()
				return nil, err
			}
			got = append(got, keyed{task: taskRank[r.Task], idx: r.Index, v: v})
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, err
		}
		slices.SortFunc(got, func(a, b keyed) int {
			if a.task != b.task {
				return a.task - b.task
			}
			return a.idx - b.idx
		})
		for _, k := range got {
			out = append(out, k.v)
		}
	}
	return out, nil
}

// run encodes the jobs with the workers and writes their lines in order.
func (ex *exporter) run(ctx context.Context, rj *runJob, jobs []*exportJob, stats *ExportStats, methods map[string]bool) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	queue := make(chan *exportJob)
	var wg sync.WaitGroup
	for range ex.workers {
		w := &exportWorker{ex: ex, rj: rj}
		if err := w.lines.setOptions(rj.options); err != nil {
			return err
		}
		wg.Go(func() {
			for j := range queue {
				j.done <- w.encode(ctx, j)
			}
		})
	}
	// Feed the workers at most a few groups ahead of the writer.
	ahead := make(chan *exportJob, 4*ex.workers)
	go func() {
		defer close(queue)
		defer close(ahead)
		for _, j := range jobs {
			select {
			case ahead <- j:
			case <-ctx.Done():
				return
			}
			select {
			case queue <- j:
			case <-ctx.Done():
				return
			}
		}
	}()
	defer wg.Wait()
	for j := range ahead {
		res := <-j.done
		if res.err != nil {
			return res.err
		}
		if _, err := ex.w.Write(res.lines); err != nil {
			return fmt.Errorf("write group %s/%s: %w", j.group.arm, j.group.task, err)
		}
		select {
		case ex.free <- res.lines[:0]:
		default:
		}
		stats.Lines += len(j.kept)
		stats.Groups++
		for _, a := range j.kept {
			methods[a.AdvantageMethod] = true
		}
	}
	return ctx.Err()
}

// toolLists reads the tool lists of a run's attempts, each checked once.
func (s *Store) toolLists(ctx context.Context, runID string) (map[int64]json.RawMessage, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT l.id, l.tools_json FROM tool_lists l
		WHERE l.id IN (SELECT DISTINCT tool_list_id FROM attempts WHERE run_id = ?)`, runID)
	if err != nil {
		return nil, fmt.Errorf("read tool lists: %w", err)
	}
	defer rows.Close()
	out := map[int64]json.RawMessage{}
	for rows.Next() {
		var id int64
		var tools string
		if err := rows.Scan(&id, &tools); err != nil {
			return nil, fmt.Errorf("read tool lists: %w", err)
		}
		if !json.Valid([]byte(tools)) || !strings.HasPrefix(strings.TrimSpace(tools), "[") {
			return nil, fmt.Errorf("tool list %d: column tool_lists.tools_json: not a JSON array", id)
		}
		out[id] = json.RawMessage(tools)
	}
	return out, rows.Err()
}

// exportWorker reads and encodes groups, keeping its buffers from one to
// the next.
type exportWorker struct {
	ex      *exporter
	rj      *runJob
	lines   lineWriter
	msgs    []ExportMessage
	calls   []ExportToolCall
	owner   []int
	convs   [][]ExportMessage
	ids     []byte
	idIndex map[int64]int
}

// encode returns the lines of a group.
func (w *exportWorker) encode(ctx context.Context, j *exportJob) exportResult {
	if err := w.conversations(ctx, j.kept); err != nil {
		return exportResult{err: err}
	}
	var out []byte
	select {
	case out = <-w.ex.free:
	default:
	}
	run, g := w.rj.run, j.group
	for i, a := range j.kept {
		row := w.rj.byID[a.ID]
		line := ExportLine{
			RunID: run.ID, Arm: a.Key.Arm, TaskID: a.Key.Task, Index: a.Key.Index, AttemptID: a.ID,
			GroupID: run.ID + "/" + g.arm + "/" + g.task, GroupSize: j.finished,
			Model: run.Model, Options: w.rj.options, Seed: row.seed,
			Reward: float64(*a.Reward), AdvantageMethod: a.AdvantageMethod,
			Turns: a.Turns, ToolCalls: a.ToolCalls, PromptTokens: a.PromptTokens, CompletionTokens: a.CompletionTokens,
			StopReason: a.StopReason, WallMS: row.wallMS, Messages: w.convs[i],
			Tools:       json.RawMessage("[]"), // no tool list known (a row bench did not write)
			RewardBasis: row.basis.String, Isolation: run.Isolation,
		}
		line.Verdict, line.Flags = string(a.Verdict), a.Flags
		if line.Flags == nil {
			line.Flags = []string{}
		}
		if row.casesTotal.Valid && row.casesTotal.Int64 > 0 {
			f := float64(row.casesPassed.Int64) / float64(row.casesTotal.Int64)
			line.CasesPassed = &f
		}
		if row.testsTotal.Valid && row.testsTotal.Int64 > 0 {
			f := float64(row.testsPassed.Int64) / float64(row.testsTotal.Int64)
			line.TestsPassed = &f
		}
		if a.Advantage != nil {
			line.Advantage = *a.Advantage
		}
		if row.toolList.Valid {
			tools, ok := w.rj.lists[row.toolList.Int64]
			if !ok {
				return exportResult{err: fmt.Errorf("attempt %d (%s): tool list %d: not in the store", a.ID, a.Key, row.toolList.Int64)}
			}
			line.Tools = tools
		}
		b, err := w.lines.line(&line)
		if err != nil {
			return exportResult{err: fmt.Errorf("encode attempt %d (%s): %w", a.ID, a.Key, err)}
		}
		out = append(out, b...)
	}
	return exportResult{lines: out}
}

// conversations reads the messages of attempts into w.convs, one slice
// per attempt in order, valid until the next call.
func (w *exportWorker) conversations(ctx context.Context, attempts []AttemptMetrics) error {
	ids := append(w.ids[:0], '[')
	if w.idIndex == nil {
		w.idIndex = map[int64]int{}
	}
	clear(w.idIndex)
	for i, a := range attempts {
		if i > 0 {
			ids = append(ids, ',')
		}
		ids = strconv.AppendInt(ids, a.ID, 10)
		w.idIndex[a.ID] = i
	}
	ids = append(ids, ']')
	w.ids = ids
	rows, err := w.ex.msgs.QueryContext(ctx, string(ids))
	if err != nil {
		return fmt.Errorf("read messages: %w", err)
	}
	defer rows.Close()
	msgs, calls, owner := w.msgs[:0], w.calls[:0], w.owner[:0]
	var id, last int64
	idx := 0 // the message's position in its attempt
	for rows.Next() {
		var m ExportMessage
		var thinking, tc, name, callID sql.NullString
		if err := rows.Scan(&id, &m.Role, &m.Content, &thinking, &tc, &name, &callID); err != nil {
			return fmt.Errorf("read messages: %w", err)
		}
		if id != last {
			idx, last = 0, id
		} else {
			idx++
		}
		m.ReasoningContent, m.Name, m.ToolCallID = thinking.String, name.String, callID.String
		if tc.Valid {
			if more, ok := fastToolCalls(tc.String, calls); ok {
				m.ToolCalls = more[len(calls):len(more):len(more)]
				calls = more
			} else {
				if m.ToolCalls, err = decodeToolCalls(tc.String); err != nil {
					return fmt.Errorf("attempt %d: message %d: column messages.tool_calls_json: %w", id, idx, err)
				}
			}
		}
		msgs = append(msgs, m)
		owner = append(owner, w.idIndex[id])
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read messages: %w", err)
	}
	w.msgs, w.calls, w.owner = msgs, calls, owner
	w.convs = slices.Grow(w.convs[:0], len(attempts))[:len(attempts)]
	for i := range w.convs {
		w.convs[i] = []ExportMessage{}
	}
	for start := 0; start < len(msgs); {
		end := start + 1
		for end < len(msgs) && owner[end] == owner[start] {
			end++
		}
		w.convs[owner[start]] = msgs[start:end:end]
		start = end
	}
	return nil
}
