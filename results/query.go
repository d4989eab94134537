package results

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/benchhq/bench/evaluator"
)

// runColumns are the runs columns runRow scans, named so that a later
// schema version adding columns does not break older readers.
const runColumns = `id, name, created_at, model, options_json, seed, attempts_per_task,
	suite, suite_dir, config_json, status, finished_at, bench_version, shard, model_digest, isolation`

type runRow struct {
	ID              string         `db:"id"`
	Name            string         `db:"name"`
	CreatedAt       string         `db:"created_at"`
	Model           string         `db:"model"`
	OptionsJSON     string         `db:"options_json"`
	Seed            int64          `db:"seed"`
	AttemptsPerTask int            `db:"attempts_per_task"`
	Suite           string         `db:"suite"`
	SuiteDir        string         `db:"suite_dir"`
	ConfigJSON      string         `db:"config_json"`
	Status          string         `db:"status"`
	FinishedAt      sql.NullString `db:"finished_at"`
	BenchVersion    string         `db:"bench_version"`
	Shard           string         `db:"shard"`
	ModelDigest     string         `db:"model_digest"`
	Isolation       string         `db:"isolation"`
}

func (r *runRow) run() (*Run, error) {
	run := &Run{
		ID: r.ID, Name: r.Name, Model: r.Model, Seed: r.Seed, AttemptsPerTask: r.AttemptsPerTask,
		Suite: r.Suite, SuiteDir: r.SuiteDir, Config: r.ConfigJSON, Status: r.Status,
		BenchVersion: r.BenchVersion, Shard: r.Shard, ModelDigest: r.ModelDigest, Isolation: r.Isolation,
	}
	var err error
	if run.CreatedAt, err = parseTime("runs.created_at", r.CreatedAt); err != nil {
		return nil, fmt.Errorf("run %q: %w", r.ID, err)
	}
	if r.FinishedAt.Valid {
		t, err := parseTime("runs.finished_at", r.FinishedAt.String)
		if err != nil {
			return nil, fmt.Errorf("run %q: %w", r.ID, err)
		}
		run.FinishedAt = &t
	}
	if err := json.Unmarshal([]byte(r.OptionsJSON), &run.Options); err != nil {
		return nil, fmt.Errorf("run %q: column runs.options_json: %w", r.ID, err)
	}
	return run, nil
}

type armRow struct {
	RunID  string `db:"run_id"`
	Name   string `db:"name"`
	Index  int    `db:"idx"`
	Config string `db:"config_json"`
}

// GetRun returns a run with its arms and tasks, or a *NoRunError
// (matching ErrNoRun).
func (s *Store) GetRun(ctx context.Context, id string) (*Run, error) {
	run, err := s.getRun(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("get run %q from %s: %w", id, s.path, err)
	}
	return run, nil
}

func (s *Store) getRun(ctx context.Context, id string) (*Run, error) {
	var row runRow
	err := s.db.GetContext(ctx, &row, `SELECT `+runColumns+` FROM runs WHERE id = ?`, id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, &NoRunError{ID: id}
	}
	if err != nil {
		return nil, err
	}
	run, err := row.run()
	if err != nil {
		return nil, err
	}
	var arms []armRow
	if err := s.db.SelectContext(ctx, &arms, `SELECT run_id, name, idx, config_json FROM arms
		WHERE run_id = ? ORDER BY idx, name`, id); err != nil {
		return nil, fmt.Errorf("arms: %w", err)
	}
	for _, a := range arms {
		run.Arms = append(run.Arms, Arm{Name: a.Name, Index: a.Index, Config: a.Config})
	}
	// A run holds thousands of tasks: scanned by hand rather than through
	// sqlx's reflection, and an empty tag list not decoded.
	rows, err := s.db.QueryContext(ctx, `SELECT id, dir, hash, instruction, report, verdict, tags FROM tasks
		WHERE run_id = ? ORDER BY idx`, id)
	if err != nil {
		return nil, fmt.Errorf("tasks: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var t TaskInfo
		var verdict, tags string
		if err := rows.Scan(&t.ID, &t.Dir, &t.Hash, &t.Instruction, &t.Report, &verdict, &tags); err != nil {
			return nil, fmt.Errorf("tasks: %w", err)
		}
		t.Verdict = evaluator.Verdict(verdict)
		if tags != "[]" {
			if err := json.Unmarshal([]byte(tags), &t.Tags); err != nil {
				return nil, fmt.Errorf("task %s: tags %q: %w", t.ID, tags, err)
			}
			if len(t.Tags) == 0 {
				t.Tags = nil
			}
		}
		run.Tasks = append(run.Tasks, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("tasks: %w", err)
	}
	return run, nil
}

// LatestRun returns the most recently created run, with its arms and
// tasks, or an error matching ErrNoRun when the store holds none.
func (s *Store) LatestRun(ctx context.Context) (*Run, error) {
	var id string
	err := s.db.GetContext(ctx, &id, `SELECT id FROM runs ORDER BY created_at DESC, rowid DESC LIMIT 1`)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("latest run: %s holds no run yet: %w", s.path, ErrNoRun)
	}
	if err != nil {
		return nil, fmt.Errorf("latest run in %s: %w", s.path, err)
	}
	return s.GetRun(ctx, id)
}

// FinishedKeys returns the keys of a run's finished attempts: on resume,
// these are not run again.
func (s *Store) FinishedKeys(ctx context.Context, runID string) (map[AttemptKey]bool, error) {
	var rows []struct {
		Arm   string `db:"arm"`
		Task  string `db:"task_id"`
		Index int    `db:"idx"`
	}
	if err := s.db.SelectContext(ctx, &rows, `SELECT arm, task_id, idx FROM attempts
		WHERE run_id = ? AND status = 'finished'`, runID); err != nil {
		return nil, fmt.Errorf("finished attempts of run %q in %s: %w", runID, s.path, err)
	}
	keys := make(map[AttemptKey]bool, len(rows))
	for _, r := range rows {
		keys[AttemptKey{Arm: r.Arm, Task: r.Task, Index: r.Index}] = true
	}
	return keys, nil
}

// RunStat is one line of the list of runs: a run and how far it got.
type RunStat struct {
	ID        string    `db:"id"`
	Name      string    `db:"name"`
	CreatedAt time.Time `db:"-"`
	Created   string    `db:"created_at"`
	Model     string    `db:"model"`
	Suite     string    `db:"suite"`
	Status    string    `db:"status"`
	// Shard is "I/N" for a shard of a run (runs.shard), "" otherwise.
	Shard string `db:"shard"`
	// AttemptsPerTask is G; Arms and Tasks count the run's arms and tasks,
	// so Planned = Arms × Tasks × G.
	AttemptsPerTask int `db:"attempts_per_task"`
	Arms            int `db:"arms"`
	Tasks           int `db:"tasks"`
	// Finished, Passes and InfraErrors count the stored attempts.
	Finished    int `db:"finished"`
	Passes      int `db:"passes"`
	InfraErrors int `db:"infra_errors"`
	// Stale is true for a run whose status is running while no process
	// holds its lock (RunLock): the bench that ran it was killed.
	Stale bool `db:"-"`
}

// Planned is the number of attempts the run's plan holds.
func (r RunStat) Planned() int { return r.Arms * r.Tasks * r.AttemptsPerTask }

// RunStats lists every run, newest first, with its progress.
func (s *Store) RunStats(ctx context.Context) ([]RunStat, error) {
	var rows []RunStat
	err := s.db.SelectContext(ctx, &rows, `SELECT r.id, r.name, r.created_at, r.model, r.suite, r.status, r.shard,
			r.attempts_per_task,
			(SELECT count(*) FROM arms a WHERE a.run_id = r.id) AS arms,
			(SELECT count(*) FROM tasks t WHERE t.run_id = r.id) AS tasks,
			(SELECT count(*) FROM attempts x WHERE x.run_id = r.id AND x.status = 'finished') AS finished,
			(SELECT count(*) FROM attempts x WHERE x.run_id = r.id AND x.reward = 1) AS passes,
			(SELECT count(*) FROM attempts x WHERE x.run_id = r.id AND x.status = 'infra_error') AS infra_errors
		FROM runs r ORDER BY r.created_at DESC, r.rowid DESC`)
	if err != nil {
		return nil, fmt.Errorf("list runs in %s: %w", s.path, err)
	}
	for i := range rows {
		if t, err := time.Parse(timeLayout, rows[i].Created); err == nil {
			rows[i].CreatedAt = t
		}
		rows[i].Stale = rows[i].Status == RunRunning && !s.runHeld(rows[i].ID)
	}
	return rows, nil
}
