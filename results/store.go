// Package results is bench's store: one SQLite file holding runs, arms,
// tasks, attempts, turns, messages, tool calls, hidden-test results and the
// MCP servers attached to each attempt. Its schema is a public contract
// (docs/schema.md), versioned with PRAGMA user_version and migrated on Open.
//
// The store is safe for concurrent use by goroutines, and several processes
// may write one file at once: the file is in WAL mode, every write
// transaction takes the write lock when it begins, and a writer waits up to
// BusyTimeout for another one to finish.
package results

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/benchhq/bench/agent"
	"github.com/jmoiron/sqlx"
	"modernc.org/sqlite"
)

// BusyTimeout is how long a write waits for another writer (another
// goroutine's or another process's transaction) before it fails.
const BusyTimeout = 10 * time.Second

// SQLite's primary result codes that Open tells apart.
const (
	sqliteBusy   = 5  // SQLITE_BUSY: another connection holds a lock
	sqliteLocked = 6  // SQLITE_LOCKED: a lock conflict within one connection
	sqliteNotADB = 26 // SQLITE_NOTADB: the file is not a database
)

// timeLayout is how times are stored: UTC, millisecond precision, fixed
// width so that text order is time order.
const timeLayout = "2006-01-02T15:04:05.000Z"

// ErrNotBenchDatabase is matched (errors.Is) by the error Open returns for a
// file that is not a bench database: not SQLite at all, or another
// application's SQLite database. Such a file is never modified.
var ErrNotBenchDatabase = errors.New("not a bench database")

// ErrAttemptExists is returned by SaveAttempt for an attempt that already
// finished: a finished attempt is never run twice nor overwritten.
var ErrAttemptExists = errors.New("attempt already finished")

// ErrNoRun is matched (errors.Is) by the error returned when a run asked
// for is not in the store. When the run was asked for by id, the error is
// a *NoRunError that names it.
var ErrNoRun = errors.New("no such run")

// ErrNoArm is matched (errors.Is) by the error returned when an arm asked
// for is not an arm of the run, a *NoArmError.
var ErrNoArm = errors.New("no such arm")

// NoRunError is the error for a run id that the store does not hold. It
// matches ErrNoRun and has its message: the errors wrapping it say which
// store and what was being done with the run.
type NoRunError struct {
	// ID is the run asked for.
	ID string
}

// Error returns ErrNoRun's message.
func (e *NoRunError) Error() string { return ErrNoRun.Error() }

// Unwrap returns ErrNoRun.
func (e *NoRunError) Unwrap() error { return ErrNoRun }

// NoArmError is the error for an arm that the run does not have. It
// matches ErrNoArm.
type NoArmError struct {
	// Arm is the arm asked for.
	Arm string
	// Arms are the arms of the run (or runs), when the error lists them.
	Arms []string
}

// Error names the arm, and the run's arms when known.
func (e *NoArmError) Error() string {
	msg := fmt.Sprintf("arm %q is not an arm of the run", e.Arm)
	if len(e.Arms) > 0 {
		msg += " (arms: " + strings.Join(e.Arms, ", ") + ")"
	}
	return msg
}

// Unwrap returns ErrNoArm.
func (e *NoArmError) Unwrap() error { return ErrNoArm }

type notBenchError struct {
	path   string
	reason string
}

func (e *notBenchError) Error() string {
	return fmt.Sprintf("%s is not a bench database (%s)", e.path, e.reason)
}

func (e *notBenchError) Unwrap() error { return ErrNotBenchDatabase }

// Store is an open bench database.
type Store struct {
	db       *sqlx.DB
	path     string
	readOnly bool
	// writeSem serialises this Store's write transactions, so that its
	// goroutines queue in Go rather than spin on SQLite's busy handler;
	// other processes are kept out by SQLite's lock.
	writeSem chan struct{}
	// tempDir holds the migrated copy an older file is read through
	// (OpenReadOnly); Close removes it.
	tempDir string
	// stmts are the write path's statements, prepared once (see prepared).
	stmtMu sync.Mutex
	stmts  map[string]*sql.Stmt
}

// Open opens the bench database at path, creating and initialising it if
// the file does not exist or is empty, and migrating it to SchemaVersion.
// A file that is not a bench database is refused with an error matching
// ErrNotBenchDatabase, and left untouched.
func Open(ctx context.Context, path string) (*Store, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return nil, &notBenchError{path: path, reason: "a directory, expected a database file"}
	} else if _, err := os.Stat(filepath.Dir(path)); err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	s, err := openDB(path, false)
	if err != nil {
		return nil, err
	}
	if err := s.init(ctx); err != nil {
		s.db.Close()
		return nil, err
	}
	return s, nil
}

// OpenReadOnly opens an existing bench database for reading only (reports,
// exports). It never writes the file: one at an older schema version is
// copied (VACUUM INTO, which reads only) to a temporary file that is
// migrated and read instead, and removed by Close; one from a newer bench
// is refused with an error matching ErrNewerSchema. Write methods of a
// read-only Store fail.
func OpenReadOnly(ctx context.Context, path string) (*Store, error) {
	if fi, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	} else if fi.IsDir() {
		return nil, &notBenchError{path: path, reason: "a directory, expected a database file"}
	}
	s, err := openDB(path, true)
	if err != nil {
		return nil, err
	}
	st, err := s.inspectFile(ctx)
	if err == nil {
		switch why := st.foreignReason(); {
		case why != "":
			err = &notBenchError{path: path, reason: why}
		case st.fresh():
			err = &notBenchError{path: path, reason: "empty file"}
		case st.version > SchemaVersion:
			err = &newerSchemaError{path: path, version: st.version}
		case st.version < SchemaVersion:
			var old *Store
			old, s = s, nil
			s, err = old.migratedCopy(ctx, st.version)
			old.db.Close()
		}
	}
	if err != nil {
		if s != nil {
			s.db.Close()
		}
		return nil, err
	}
	return s, nil
}

// ErrNewerSchema is matched (errors.Is) by the error for a database
// written by a newer bench, at a schema version this one does not know.
// Such a file is never modified.
var ErrNewerSchema = errors.New("schema newer than this bench")

type newerSchemaError struct {
	path    string
	version int
}

func (e *newerSchemaError) Error() string {
	return fmt.Sprintf("open %s: schema version %d is newer than this bench supports (%d): use a newer bench", e.path, e.version, SchemaVersion)
}

func (e *newerSchemaError) Unwrap() error { return ErrNewerSchema }

// migratedCopy copies the database, at schema version from, to a fresh
// temporary file (VACUUM INTO reads the source only), migrates the copy to
// SchemaVersion with the same migrations Open applies, and returns a
// read-only Store on it. Messages still name the original file; Close
// removes the copy.
func (s *Store) migratedCopy(ctx context.Context, from int) (*Store, error) {
	dir, err := os.MkdirTemp("", "bench-read-")
	if err != nil {
		return nil, fmt.Errorf("open %s (schema version %d): temporary copy: %w", s.path, from, err)
	}
	copyPath := filepath.Join(dir, "copy.db")
	fail := func(what string, err error) (*Store, error) {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("open %s (schema version %d, read through a migrated copy): %s: %w", s.path, from, what, err)
	}
	if _, err := s.db.ExecContext(ctx, `VACUUM INTO ?`, copyPath); err != nil {
		return fail("copy", err)
	}
	c, err := openDB(copyPath, false)
	if err != nil {
		return fail("open the copy", err)
	}
	if err := c.migrate(ctx); err != nil {
		c.db.Close()
		return fail("migrate the copy", err)
	}
	c.path, c.readOnly, c.tempDir = s.path, true, dir
	return c, nil
}

// The WAL's bounds during a run (see openDB): a checkpoint every 128
// pages (512 KB of 4 KB pages), a few attempts' commits, and the file cut
// back to 1 MB after one.
const (
	walCheckpointPages = 128
	walSizeLimit       = 1 << 20
)

// openDB prepares the connection pool; nothing touches the file until the
// first query.
func openDB(path string, readOnly bool) (*Store, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", BusyTimeout.Milliseconds()))
	q.Add("_pragma", "foreign_keys(1)")
	if readOnly {
		q.Set("mode", "ro")
	} else {
		// In WAL mode, NORMAL keeps every commit atomic and the file
		// consistent after a crash; only the last commits may be lost
		// on power failure.
		q.Add("_pragma", "synchronous(NORMAL)")
		// The WAL is checkpointed into the file every walCheckpointPages
		// pages and cut back to walSizeLimit after: left at SQLite's
		// default (1000 pages, never cut), a run's WAL grew to ten times
		// its database and filled a small disk before it did.
		q.Add("_pragma", fmt.Sprintf("wal_autocheckpoint(%d)", walCheckpointPages))
		q.Add("_pragma", fmt.Sprintf("journal_size_limit(%d)", walSizeLimit))
		q.Set("_txlock", "immediate")
	}
	u := url.URL{Scheme: "file", Path: abs, RawQuery: q.Encode()}
	db, err := sqlx.Open("sqlite", u.String())
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	db.SetMaxIdleConns(4)
	return &Store{db: db, path: path, readOnly: readOnly, writeSem: make(chan struct{}, 1)}, nil
}

// init checks that the file is a bench database (or empty), switches it to
// WAL and migrates it.
func (s *Store) init(ctx context.Context) error {
	st, err := s.inspectFile(ctx)
	if err != nil {
		return err
	}
	if why := st.foreignReason(); why != "" {
		return &notBenchError{path: s.path, reason: why}
	}
	if st.version > SchemaVersion {
		return &newerSchemaError{path: s.path, version: st.version}
	}
	if err := s.setWAL(ctx); err != nil {
		return err
	}
	return s.migrate(ctx)
}

// inspectFile reads the file's state, turning "not a database" into
// ErrNotBenchDatabase.
func (s *Store) inspectFile(ctx context.Context) (dbState, error) {
	st, err := inspect(ctx, s.db)
	if err != nil {
		var se *sqlite.Error
		if errors.As(err, &se) && se.Code()&0xff == sqliteNotADB {
			return st, &notBenchError{path: s.path, reason: "not an SQLite file"}
		}
		return st, fmt.Errorf("open %s: %w", s.path, err)
	}
	return st, nil
}

// setWAL puts the file in WAL journal mode (persistent), needed for
// readers and a writer to work at once. SQLite does not wait for a busy
// database when switching modes, so a switch that finds another process
// at work is retried until BusyTimeout.
func (s *Store) setWAL(ctx context.Context) error {
	deadline := time.Now().Add(BusyTimeout)
	for wait := 5 * time.Millisecond; ; wait = min(2*wait, 200*time.Millisecond) {
		var mode string
		err := s.db.GetContext(ctx, &mode, "PRAGMA journal_mode")
		if err == nil {
			if strings.EqualFold(mode, "wal") {
				return nil
			}
			err = s.db.GetContext(ctx, &mode, "PRAGMA journal_mode = WAL")
		}
		switch {
		case err == nil && strings.EqualFold(mode, "wal"):
			return nil
		case err == nil:
			return fmt.Errorf("open %s: set WAL journal mode: still %q", s.path, mode)
		case !isBusy(err) || time.Now().After(deadline):
			return fmt.Errorf("open %s: set WAL journal mode: %w", s.path, err)
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return fmt.Errorf("open %s: set WAL journal mode: %w", s.path, ctx.Err())
		}
	}
}

// isBusy reports whether err is SQLite's SQLITE_BUSY or SQLITE_LOCKED.
func isBusy(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	code := se.Code() & 0xff
	return code == sqliteBusy || code == sqliteLocked
}

// Close closes the database (and removes the migrated copy an older file
// was read through).
func (s *Store) Close() error {
	s.stmtMu.Lock()
	for _, st := range s.stmts {
		st.Close()
	}
	s.stmts = nil
	s.stmtMu.Unlock()
	err := s.db.Close()
	if s.tempDir != "" {
		os.RemoveAll(s.tempDir)
	}
	if err != nil {
		return fmt.Errorf("close %s: %w", s.path, err)
	}
	return nil
}

// DB returns the underlying database handle, for ad-hoc queries (tests,
// one-off reports). Writes should go through the Store's methods, which
// keep each attempt whole.
func (s *Store) DB() *sqlx.DB { return s.db }

// lockWrite takes this Store's write turn, or fails when ctx ends first.
func (s *Store) lockWrite(ctx context.Context) error {
	if s.readOnly {
		return fmt.Errorf("%s is opened read-only", s.path)
	}
	select {
	case s.writeSem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *Store) unlockWrite() { <-s.writeSem }

// write runs fn in one write transaction: all of it is committed, or none.
func (s *Store) write(ctx context.Context, fn func(tx *sqlx.Tx) error) error {
	if err := s.lockWrite(ctx); err != nil {
		return err
	}
	defer s.unlockWrite()
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// CreateRun stores a new run with its arms and tasks in one transaction.
// It fills in ID (a new unique id), CreatedAt (now) and Status (RunRunning)
// when they are empty.
func (s *Store) CreateRun(ctx context.Context, r *Run) error {
	if r.ID == "" {
		id, err := newRunID(time.Now())
		if err != nil {
			return fmt.Errorf("create run: %w", err)
		}
		r.ID = id
	}
	if r.CreatedAt.IsZero() {
		r.CreatedAt = time.Now()
	}
	if r.Status == "" {
		r.Status = RunRunning
	}
	if err := validateRun(r); err != nil {
		return fmt.Errorf("create run %q: %w", r.ID, err)
	}
	opts := "{}"
	if r.Options != nil {
		b, err := json.Marshal(r.Options)
		if err != nil {
			return fmt.Errorf("create run %q: options: %w", r.ID, err)
		}
		opts = string(b)
	}
	err := s.write(ctx, func(tx *sqlx.Tx) error {
		var exists bool
		if err := tx.GetContext(ctx, &exists, `SELECT EXISTS (SELECT 1 FROM runs WHERE id = ?)`, r.ID); err != nil {
			return err
		}
		if exists {
			return errors.New("a run with this id already exists")
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO runs (id, name, created_at, model, options_json, seed,
			attempts_per_task, suite, suite_dir, config_json, status, finished_at, bench_version,
			shard, model_digest, isolation)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			r.ID, r.Name, formatTime(r.CreatedAt), r.Model, opts, r.Seed,
			r.AttemptsPerTask, r.Suite, r.SuiteDir, jsonOr(r.Config, "{}"), r.Status,
			formatTimePtr(r.FinishedAt), r.BenchVersion, r.Shard, r.ModelDigest, r.Isolation)
		if err != nil {
			return fmt.Errorf("insert run: %w", err)
		}
		for _, a := range r.Arms {
			if _, err := tx.ExecContext(ctx, `INSERT INTO arms (run_id, name, idx, config_json) VALUES (?, ?, ?, ?)`,
				r.ID, a.Name, a.Index, jsonOr(a.Config, "{}")); err != nil {
				return fmt.Errorf("insert arm %q: %w", a.Name, err)
			}
		}
		for i, t := range r.Tasks {
			if _, err := tx.ExecContext(ctx, `INSERT INTO tasks (run_id, id, idx, dir, hash, instruction, report, verdict, tags)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				r.ID, t.ID, i, t.Dir, t.Hash, t.Instruction, t.Report, string(t.Verdict), tagsJSON(t.Tags)); err != nil {
				return fmt.Errorf("insert task %q: %w", t.ID, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("create run %q in %s: %w", r.ID, s.path, err)
	}
	return nil
}

func validateRun(r *Run) error {
	if r.Model == "" {
		return errors.New("model: empty, expected an Ollama model name")
	}
	if r.AttemptsPerTask < 1 {
		return fmt.Errorf("attempts per task: %d, expected at least 1", r.AttemptsPerTask)
	}
	if err := validRunStatus(r.Status); err != nil {
		return err
	}
	if r.Config != "" && !json.Valid([]byte(r.Config)) {
		return errors.New("config: not valid JSON")
	}
	arms := map[string]bool{}
	for i, a := range r.Arms {
		switch {
		case a.Name == "":
			return fmt.Errorf("arm %d: empty name", i)
		case arms[a.Name]:
			return fmt.Errorf("arm %q: name used twice", a.Name)
		case a.Config != "" && !json.Valid([]byte(a.Config)):
			return fmt.Errorf("arm %q: config is not valid JSON", a.Name)
		}
		arms[a.Name] = true
	}
	tasks := map[string]bool{}
	for i, t := range r.Tasks {
		switch {
		case t.ID == "":
			return fmt.Errorf("task %d: empty id", i)
		case tasks[t.ID]:
			return fmt.Errorf("task %q: id used twice", t.ID)
		}
		tasks[t.ID] = true
	}
	return nil
}

func validRunStatus(status string) error {
	switch status {
	case RunRunning, RunFinished, RunInterrupted:
		return nil
	}
	return fmt.Errorf("status %q: expected %s, %s or %s", status, RunRunning, RunFinished, RunInterrupted)
}

// newRunID returns a sortable, unique id: the UTC time and 6 random hex digits.
func newRunID(now time.Time) (string, error) {
	b := make([]byte, 3)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random run id: %w", err)
	}
	return now.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b), nil
}

// FinishRun sets a run's status and its finish time (now). Setting
// RunRunning again, when a run is resumed, clears the finish time.
// Stopping a run (finished or interrupted) also computes and keeps its
// summary (SaveRunSummary), which bench view reads.
func (s *Store) FinishRun(ctx context.Context, id, status string) error {
	if err := validRunStatus(status); err != nil {
		return fmt.Errorf("finish run %q: %w", id, err)
	}
	var finished *time.Time
	if status != RunRunning {
		now := time.Now()
		finished = &now
	}
	err := s.write(ctx, func(tx *sqlx.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE runs SET status = ?, finished_at = ? WHERE id = ?`,
			status, formatTimePtr(finished), id)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return &NoRunError{ID: id}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("finish run %q in %s: %w", id, s.path, err)
	}
	if status == RunRunning {
		return nil
	}
	// A stopped run's summary is what bench view reads of it: computed
	// now, once, rather than by the first person who looks.
	if err := s.SaveRunSummary(ctx, id); err != nil {
		return fmt.Errorf("finish run %q: %w", id, err)
	}
	return nil
}

// SaveAttempt stores a whole attempt (the attempt row, its turns, messages,
// tool calls, test result and server logs) in one transaction and returns
// its row id. An earlier attempt with the same key that ended in
// infra_error or canceled is replaced, its children with it; one that
// finished is kept and ErrAttemptExists returned. The run, its arm and its
// task must have been created by CreateRun.
func (s *Store) SaveAttempt(ctx context.Context, a *Attempt) (int64, error) {
	ids, err := s.SaveAttempts(ctx, []*Attempt{a})
	if err != nil {
		return 0, err
	}
	return ids[0], nil
}

// SaveAttempts stores attempts as SaveAttempt does, all of them in one
// transaction: all are stored, or none. It returns their row ids, in
// order. Many attempts at once cost much less than one at a time (one
// commit, each statement prepared once): the runner saves the attempts
// that finished together, generators of large databases save thousands.
func (s *Store) SaveAttempts(ctx context.Context, as []*Attempt) ([]int64, error) {
	rows := make([]*attemptRows, len(as))
	for i, a := range as {
		var err error
		if err = validateAttempt(a); err == nil {
			rows[i], err = newAttemptRows(a)
		}
		if err != nil {
			return nil, fmt.Errorf("save attempt %s of run %q in %s: %w", a.Key, a.RunID, s.path, err)
		}
	}
	ids := make([]int64, len(as))
	var failed *Attempt // the attempt whose write failed, if one did
	err := s.write(ctx, func(tx *sqlx.Tx) error {
		w := newTxWriter(s, tx)
		for i, a := range as {
			id, err := w.save(ctx, a, rows[i])
			if err != nil {
				failed = a
				return err
			}
			ids[i] = id
		}
		return nil
	})
	switch {
	case err == nil:
		return ids, nil
	case failed != nil:
		return nil, fmt.Errorf("save attempt %s of run %q in %s: %w", failed.Key, failed.RunID, s.path, err)
	case len(as) == 1:
		return nil, fmt.Errorf("save attempt %s of run %q in %s: %w", as[0].Key, as[0].RunID, s.path, err)
	}
	return nil, fmt.Errorf("save %d attempts (%s...) of run %q in %s: %w", len(as), as[0].Key, as[0].RunID, s.path, err)
}

// txWriter writes in one transaction, each statement prepared once.
type txWriter struct {
	s     *Store
	tx    *sqlx.Tx
	stmts map[string]*sql.Stmt // this transaction's statements, by query
	lists map[string]int64     // tool lists found or added, by JSON
}

func newTxWriter(s *Store, tx *sqlx.Tx) *txWriter {
	return &txWriter{s: s, tx: tx, stmts: map[string]*sql.Stmt{}, lists: map[string]int64{}}
}

// stmt returns query prepared for the transaction: the Store's statement
// of that query (prepared once per connection) made the transaction's.
func (w *txWriter) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := w.stmts[query]; ok {
		return st, nil
	}
	shared, err := w.s.prepared(ctx, query)
	if err != nil {
		return nil, err
	}
	st := w.tx.StmtContext(ctx, shared)
	w.stmts[query] = st
	return st, nil
}

// exec runs query in the transaction.
func (w *txWriter) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := w.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

// prepared returns the Store's prepared statement of query, preparing it
// the first time.
func (s *Store) prepared(ctx context.Context, query string) (*sql.Stmt, error) {
	s.stmtMu.Lock()
	defer s.stmtMu.Unlock()
	if st, ok := s.stmts[query]; ok {
		return st, nil
	}
	st, err := s.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("prepare %q: %w", firstWords(query), err)
	}
	if s.stmts == nil {
		s.stmts = map[string]*sql.Stmt{}
	}
	s.stmts[query] = st
	return st, nil
}

// firstWords is the start of a query, for errors.
func firstWords(q string) string {
	f := strings.Fields(q)
	return strings.Join(f[:min(len(f), 4)], " ")
}

// The statements of the attempt write path.
const (
	qPrevAttempt = `SELECT id, status, tries FROM attempts
		WHERE run_id = ? AND arm = ? AND task_id = ? AND idx = ?`
	qDeleteAttempt = `DELETE FROM attempts WHERE id = ?`
	qToolList      = `SELECT id FROM tool_lists WHERE tools_json = ?`
	qAddToolList   = `INSERT INTO tool_lists (tools_json) VALUES (?)`
	qAttempt       = `INSERT INTO attempts (run_id, arm, task_id, idx, seed, status,
		stop_reason, reward, turns, tool_calls, prompt_tokens, completion_tokens, wall_ms,
		started_at, finished_at, tries, error, tool_list_id, denials, truncated_turns,
		model_ms, tool_ms, test_ms, harness_ms, verdict, flags)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	qTurn = `INSERT INTO turns (attempt_id, idx, prompt_tokens, completion_tokens,
		total_ns, load_ns, prompt_eval_ns, eval_ns, wall_ms, done_reason, tool_calls, truncated, endpoint, model_digest, tool_list_id)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	qMessage = `INSERT INTO messages (attempt_id, idx, role, content, thinking,
		tool_calls_json, tool_name, tool_call_id, tool_call_idx) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`
	qToolCall = `INSERT INTO tool_calls (attempt_id, idx, turn_idx, tool, origin,
		class, decision, rule, approver, arguments_json, result, is_error, error_kind, duration_ms, details_json)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	qServer = `INSERT INTO attempt_servers (attempt_id, idx, name, protocol_version,
		server_name, server_version, stderr, catalog_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`
)

// save writes one attempt, replacing an earlier try of its key.
func (w *txWriter) save(ctx context.Context, a *Attempt, row *attemptRows) (int64, error) {
	st, err := w.stmt(ctx, qPrevAttempt)
	if err != nil {
		return 0, err
	}
	var prev struct {
		id     int64
		status string
		tries  int
	}
	err = st.QueryRowContext(ctx, a.RunID, a.Key.Arm, a.Key.Task, a.Key.Index).Scan(&prev.id, &prev.status, &prev.tries)
	tries := row.tries
	switch {
	case errors.Is(err, sql.ErrNoRows):
		if err := checkPlanned(ctx, w.tx, a.RunID, a.Key.Arm, a.Key.Task); err != nil {
			return 0, err
		}
	case err != nil:
		return 0, fmt.Errorf("look up earlier attempt: %w", err)
	case prev.status == string(StatusFinished):
		return 0, ErrAttemptExists
	default:
		// A retry: the earlier try's children go with it (ON DELETE CASCADE).
		if _, err := w.exec(ctx, qDeleteAttempt, prev.id); err != nil {
			return 0, fmt.Errorf("delete earlier %s attempt: %w", prev.status, err)
		}
		tries += prev.tries
	}
	return row.insert(ctx, w, a, tries)
}

// turnLists returns, for a turn's index, the id of the tool list it was
// sent with when an MCP server changed the list before it
// (Trajectory.ToolChanges), or nil for the attempt's own list.
func (w *txWriter) turnLists(ctx context.Context, t *agent.Trajectory) (func(turn int) any, error) {
	type from struct {
		turn int
		id   int64
	}
	var changes []from
	for _, ch := range t.ToolChanges {
		if len(ch.ToolsJSON) == 0 {
			continue
		}
		id, err := w.toolList(ctx, string(ch.ToolsJSON))
		if err != nil {
			return nil, err
		}
		changes = append(changes, from{ch.Turn, id})
	}
	return func(turn int) any {
		var id any
		for _, c := range changes { // in the order of the turns
			if c.turn <= turn {
				id = c.id
			}
		}
		return id
	}, nil
}

// toolList returns the id of a tool list, adding it the first time.
func (w *txWriter) toolList(ctx context.Context, tools string) (int64, error) {
	if id, ok := w.lists[tools]; ok {
		return id, nil
	}
	st, err := w.stmt(ctx, qToolList)
	if err != nil {
		return 0, err
	}
	var id int64
	err = st.QueryRowContext(ctx, tools).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		var res sql.Result
		if res, err = w.exec(ctx, qAddToolList, tools); err == nil {
			id, err = res.LastInsertId()
		}
	}
	if err != nil {
		return 0, fmt.Errorf("store tool list: %w", err)
	}
	w.lists[tools] = id
	return id, nil
}

// checkPlanned returns a *NoRunError when the store holds no run runID
// and, for an arm or a task that is not "", an error naming the one the
// run lacks (a *NoArmError for the arm): the reasons a foreign key to the
// run's plan would fail, told apart in one query.
func checkPlanned(ctx context.Context, q getter, runID, arm, task string) error {
	var have struct {
		Run  bool `db:"run"`
		Arm  bool `db:"arm"`
		Task bool `db:"task"`
	}
	err := q.GetContext(ctx, &have, `SELECT
		EXISTS (SELECT 1 FROM runs WHERE id = ?) AS run,
		(? = '' OR EXISTS (SELECT 1 FROM arms WHERE run_id = ? AND name = ?)) AS arm,
		(? = '' OR EXISTS (SELECT 1 FROM tasks WHERE run_id = ? AND id = ?)) AS task`,
		runID, arm, runID, arm, task, runID, task)
	switch {
	case err != nil:
		return fmt.Errorf("check run, arm and task: %w", err)
	case !have.Run:
		return &NoRunError{ID: runID}
	case !have.Arm:
		return fmt.Errorf("%w (CreateRun records the arms)", &NoArmError{Arm: arm})
	case !have.Task:
		return fmt.Errorf("task %q is not a task of the run (CreateRun records the tasks)", task)
	}
	return nil
}

func validateAttempt(a *Attempt) error {
	switch {
	case a.RunID == "":
		return errors.New("run id: empty")
	case a.Key.Arm == "":
		return errors.New("key: empty arm")
	case a.Key.Task == "":
		return errors.New("key: empty task")
	case a.Key.Index < 0:
		return fmt.Errorf("key: index %d, expected 0 or more", a.Key.Index)
	case !a.Status.Valid():
		return fmt.Errorf("status %q: expected %s, %s or %s", a.Status, StatusFinished, StatusInfraError, StatusCanceled)
	case a.Reward != nil && *a.Reward != 0 && *a.Reward != 1:
		return fmt.Errorf("reward %d: expected 0 or 1", *a.Reward)
	case a.Reward != nil && a.Status != StatusFinished:
		return fmt.Errorf("reward set on a %s attempt: only finished attempts have a reward", a.Status)
	case a.Reward == nil && a.Status == StatusFinished:
		return errors.New("reward: not set on a finished attempt, expected 0 or 1")
	case a.StartedAt.IsZero():
		return errors.New("started at: not set")
	case a.FinishedAt.IsZero():
		return errors.New("finished at: not set")
	}
	return nil
}

// attemptRows is an attempt turned into column values, ready to insert;
// everything that can fail (JSON encoding) is done before the transaction.
type attemptRows struct {
	stop      string
	errText   string
	toolsJSON string
	turns     int
	calls     int
	prompt    int
	compl     int
	wallMS    float64
	tries     int
	denials   int
	truncated int
	msgCalls  []sql.NullString // tool_calls_json per message
	msgCall   []sql.NullInt64  // tool_call_idx per message: the call whose result is its text
	args      []string         // arguments_json per tool call
	traj      *agent.Trajectory
}

func newAttemptRows(a *Attempt) (*attemptRows, error) {
	r := &attemptRows{toolsJSON: "[]", tries: max(a.Tries, 1), errText: a.Error}
	t := a.Trajectory
	switch {
	case t != nil && t.Stop != "":
		r.stop = string(t.Stop)
	case a.Status != StatusFinished:
		r.stop = string(a.Status)
	}
	if t == nil {
		return r, nil
	}
	r.traj = t
	if r.errText == "" {
		r.errText = t.Err
	}
	switch {
	case t.ToolsJSON != nil:
		if !json.Valid(t.ToolsJSON) {
			return nil, errors.New("encode tools: ToolsJSON is not JSON")
		}
		r.toolsJSON = string(t.ToolsJSON)
	case t.Tools != nil:
		b, err := json.Marshal(t.Tools)
		if err != nil {
			return nil, fmt.Errorf("encode tools: %w", err)
		}
		r.toolsJSON = string(b)
	}
	r.turns, r.calls = len(t.Turns), len(t.Calls)
	r.prompt, r.compl = t.PromptTokens(), t.CompletionTokens()
	r.truncated = t.TruncatedTurns()
	r.wallMS = millis(t.Wall)
	r.msgCalls = make([]sql.NullString, len(t.Messages))
	r.msgCall = make([]sql.NullInt64, len(t.Messages))
	k := 0 // the k-th tool message answers the k-th call
	for i, m := range t.Messages {
		if m.Role == "tool" {
			if k < len(t.Calls) && t.Calls[k].Result == m.Content {
				r.msgCall[i] = sql.NullInt64{Int64: int64(t.Calls[k].Index), Valid: true}
			}
			k++
		}
		if len(m.ToolCalls) == 0 {
			continue
		}
		b, err := json.Marshal(m.ToolCalls)
		if err != nil {
			return nil, fmt.Errorf("encode tool calls of message %d: %w", i, err)
		}
		r.msgCalls[i] = sql.NullString{String: string(b), Valid: true}
	}
	r.args = make([]string, len(t.Calls))
	for i, c := range t.Calls {
		r.args[i] = argumentsJSON(c.Arguments)
		if c.Decision == agent.Deny {
			r.denials++
		}
	}
	return r, nil
}

// argumentsJSON keeps a call's arguments as sent when they are JSON (the
// usual case: Ollama parses them) and otherwise stores the raw text as a
// JSON string, so that arguments_json is always JSON and a call is never lost.
func argumentsJSON(args string) string {
	switch {
	case args == "":
		return "{}"
	case json.Valid([]byte(args)):
		return args
	}
	b, _ := json.Marshal(args) // a string always encodes
	return string(b)
}

// insert writes the attempt row and its children. A tool message whose
// text is its call's result is stored with content ” and the call's
// index: the text is stored once, in tool_calls.result.
func (r *attemptRows) insert(ctx context.Context, w *txWriter, a *Attempt, tries int) (int64, error) {
	times := a.Times()
	list, err := w.toolList(ctx, r.toolsJSON)
	if err != nil {
		return 0, err
	}
	res, err := w.exec(ctx, qAttempt,
		a.RunID, a.Key.Arm, a.Key.Task, a.Key.Index, a.Seed, string(a.Status),
		r.stop, a.Reward, r.turns, r.calls, r.prompt, r.compl, r.wallMS,
		formatTime(a.StartedAt), formatTime(a.FinishedAt), tries, r.errText, list, r.denials, r.truncated,
		millis(times.Model), millis(times.Tools), millis(times.Tests), millis(times.Harness),
		a.verdict(), a.flags())
	if err != nil {
		return 0, fmt.Errorf("insert attempt: %w", err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, fmt.Errorf("insert attempt: %w", err)
	}
	if t := r.traj; t != nil {
		lists, err := w.turnLists(ctx, t)
		if err != nil {
			return 0, err
		}
		err = insertEach(ctx, w, "turn", qTurn, len(t.Turns), func(i int) []any {
			u := t.Turns[i]
			return []any{id, u.Index, u.PromptTokens, u.CompletionTokens, u.TotalDuration.Nanoseconds(),
				u.LoadDuration.Nanoseconds(), u.PromptDuration.Nanoseconds(), u.EvalDuration.Nanoseconds(),
				millis(u.Wall), u.DoneReason, u.ToolCalls, u.Truncated, u.Endpoint, u.ModelDigest, lists(u.Index)}
		})
		if err != nil {
			return 0, err
		}
		if err := saveTurnTokens(ctx, w, id, t.Turns); err != nil {
			return 0, err
		}
		err = insertEach(ctx, w, "message", qMessage, len(t.Messages), func(i int) []any {
			m := t.Messages[i]
			content := m.Content
			if r.msgCall[i].Valid {
				content = ""
			}
			return []any{id, i, m.Role, content, m.Thinking, r.msgCalls[i], m.ToolName, m.ToolCallID, r.msgCall[i]}
		})
		if err != nil {
			return 0, err
		}
		err = insertEach(ctx, w, "tool call", qToolCall, len(t.Calls), func(i int) []any {
			c := t.Calls[i]
			return []any{id, c.Index, c.Turn, c.Tool, c.Origin, string(c.Class), string(c.Decision), c.Rule,
				c.Approver, r.args[i], c.Result, c.IsError, c.ErrorKind, millis(c.Duration), nullJSON(c.Details)}
		})
		if err != nil {
			return 0, err
		}
	}
	if tr := a.Test; tr != nil {
		if err := saveTestResult(ctx, w, id, tr); err != nil {
			return 0, err
		}
	}
	err = insertEach(ctx, w, "server log", qServer, len(a.Servers), func(i int) []any {
		v := a.Servers[i]
		catalog := v.Catalog
		if catalog == "" {
			catalog = "[]"
		}
		return []any{id, i, v.Name, v.ProtocolVersion, v.ServerName, v.ServerVersion, v.Stderr, catalog}
	})
	if err != nil {
		return 0, err
	}
	return id, nil
}

// insertEach runs one insert n times with args(i).
func insertEach(ctx context.Context, w *txWriter, what, query string, n int, args func(i int) []any) error {
	if n == 0 {
		return nil
	}
	stmt, err := w.stmt(ctx, query)
	if err != nil {
		return fmt.Errorf("prepare %s insert: %w", what, err)
	}
	for i := range n {
		if _, err := stmt.ExecContext(ctx, args(i)...); err != nil {
			return fmt.Errorf("insert %s %d: %w", what, i, err)
		}
	}
	return nil
}

// SetAdvantages stores the advantage of each finished attempt, by attempt
// id, with the method that computed it, in one transaction. An id that is
// not a finished attempt fails the whole call.
func (s *Store) SetAdvantages(ctx context.Context, method string, adv map[int64]float64) error {
	if method == "" {
		return errors.New("set advantages: empty method name")
	}
	ids := make([]int64, 0, len(adv))
	for id, v := range adv {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("set advantages (%s): attempt %d: advantage %v is not a finite number", method, id, v)
		}
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	err := s.write(ctx, func(tx *sqlx.Tx) error {
		stmt, err := tx.PrepareContext(ctx, `UPDATE attempts SET advantage = ?, advantage_method = ?
			WHERE id = ? AND status = 'finished'`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for _, id := range ids {
			res, err := stmt.ExecContext(ctx, adv[id], method, id)
			if err != nil {
				return fmt.Errorf("attempt %d: %w", id, err)
			}
			if n, err := res.RowsAffected(); err != nil {
				return fmt.Errorf("attempt %d: %w", id, err)
			} else if n == 0 {
				return fmt.Errorf("attempt %d: no finished attempt with this id", id)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("set advantages (%s) in %s: %w", method, s.path, err)
	}
	return nil
}

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

func formatTimePtr(t *time.Time) any {
	if t == nil {
		return nil
	}
	return formatTime(*t)
}

func parseTime(column, s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("column %s: time %q: %w", column, s, err)
	}
	return t, nil
}

// jsonOr returns s, or def when s is empty.
func jsonOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// millis is a duration in milliseconds with microsecond precision: the
// stored unit of every _ms column.
func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// nullJSON is raw JSON as a column's value: NULL when empty.
func nullJSON(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return string(b)
}
