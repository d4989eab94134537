package results

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// ApplicationID is the value of PRAGMA application_id in every bench
// database ("BNCH" in ASCII). A SQLite file with another value is not a
// bench database and is never modified.
const ApplicationID = 0x424e4348

// SchemaVersion is the schema version this package writes and reads, kept
// in PRAGMA user_version. It is the number of the last migration.
const SchemaVersion = 15

// migrationFiles holds the migrations, one file per version, named
// NNNN_what.sql. A new version is one new file: never edit a released one.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one schema step: the SQL that takes a database from
// version-1 to version.
type migration struct {
	version int
	name    string
	sql     string
}

// migrations returns the embedded migrations ordered by version, checking
// that versions run 1, 2, 3... without gaps.
func migrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return nil, fmt.Errorf("read embedded migrations: %w", err)
	}
	var ms []migration
	for _, e := range entries {
		name := e.Name()
		num, _, ok := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v < 1 {
			return nil, fmt.Errorf("migration %s: name must be NNNN_what.sql with NNNN >= 1", name)
		}
		b, err := migrationFiles.ReadFile(path.Join("migrations", name))
		if err != nil {
			return nil, fmt.Errorf("read migration %s: %w", name, err)
		}
		ms = append(ms, migration{version: v, name: name, sql: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	for i, m := range ms {
		if m.version != i+1 {
			return nil, fmt.Errorf("migration %s: version %d, expected %d (versions must run 1, 2, 3... without gaps)", m.name, m.version, i+1)
		}
	}
	if len(ms) != SchemaVersion {
		return nil, fmt.Errorf("%d migrations embedded but SchemaVersion is %d", len(ms), SchemaVersion)
	}
	return ms, nil
}

// dbState is what Open reads from a file before it trusts it.
type dbState struct {
	appID   int64
	version int
	objects int // schema objects (tables, indexes, views, triggers)
}

// getter is what inspect needs: a *sqlx.DB, *sqlx.Conn or *sqlx.Tx.
type getter interface {
	GetContext(ctx context.Context, dest any, query string, args ...any) error
}

// inspect reads the application id, the schema version and the number of
// schema objects, in one statement so that the three come from one
// snapshot even while another process is migrating. It only reads.
func inspect(ctx context.Context, q getter) (dbState, error) {
	var row struct {
		AppID   int64 `db:"app_id"`
		Version int   `db:"version"`
		Objects int   `db:"objects"`
	}
	err := q.GetContext(ctx, &row, `SELECT
		(SELECT application_id FROM pragma_application_id) AS app_id,
		(SELECT user_version FROM pragma_user_version) AS version,
		(SELECT count(*) FROM sqlite_schema) AS objects`)
	return dbState{appID: row.AppID, version: row.Version, objects: row.Objects}, err
}

// foreignReason returns why a file in state st is not a bench database,
// or "" if it is one or holds no database yet.
func (st dbState) foreignReason() string {
	switch {
	case st.appID == ApplicationID:
		return ""
	case st.appID != 0:
		return fmt.Sprintf("SQLite database of another application, application_id %#x", uint32(st.appID))
	case st.objects > 0 || st.version != 0:
		return fmt.Sprintf("SQLite database of another application: %d schema objects and no bench application_id", st.objects)
	}
	return ""
}

// fresh reports whether the file holds no database yet.
func (st dbState) fresh() bool { return st.appID == 0 && st.objects == 0 && st.version == 0 }

// migrate applies the migrations the database lacks, each in its own
// transaction that also sets user_version and application_id, so a
// database is always at one version or the next. Each step re-reads the
// state inside its transaction: another process may have migrated first.
func (s *Store) migrate(ctx context.Context) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	for _, m := range ms {
		if err := s.applyMigration(ctx, m); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) applyMigration(ctx context.Context, m migration) error {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrate %s to version %d: begin: %w", s.path, m.version, err)
	}
	defer tx.Rollback()
	st, err := inspect(ctx, tx)
	if err != nil {
		return fmt.Errorf("migrate %s to version %d: %w", s.path, m.version, err)
	}
	if why := st.foreignReason(); why != "" {
		return &notBenchError{path: s.path, reason: why}
	}
	if st.version >= m.version {
		return nil
	}
	if _, err := tx.ExecContext(ctx, m.sql); err != nil {
		return fmt.Errorf("migrate %s to version %d (%s): %w", s.path, m.version, m.name, err)
	}
	// PRAGMA takes no bound parameters; both values are integers.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", m.version)); err != nil {
		return fmt.Errorf("migrate %s to version %d: set user_version: %w", s.path, m.version, err)
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA application_id = %d", ApplicationID)); err != nil {
		return fmt.Errorf("migrate %s to version %d: set application_id: %w", s.path, m.version, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migrate %s to version %d: commit: %w", s.path, m.version, err)
	}
	return nil
}
