package results

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestEndpointShardAndDigestAreStored: the endpoint of each turn, the
// shard of a run and the model's digest are written and read back.
func TestEndpointShardAndDigestAreStored(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	r := testRun()
	r.Shard, r.ModelDigest = "1/4", "a80c4f17acd5"
	if err := s.CreateRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	a := finishedAttempt(r.ID, AttemptKey{Arm: "baseline", Task: "csv-sum", Index: 0}, 1)
	a.Trajectory.Turns[0].Endpoint = "http://gpu1:11434"
	a.Trajectory.Turns[1].Endpoint = "http://gpu2:11434"
	if _, err := s.SaveAttempt(ctx, a); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetRun(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Shard != "1/4" || got.ModelDigest != "a80c4f17acd5" {
		t.Errorf("shard %q digest %q, want 1/4 and the digest", got.Shard, got.ModelDigest)
	}
	var eps []string
	if err := s.DB().SelectContext(ctx, &eps, `SELECT endpoint FROM turns ORDER BY idx`); err != nil {
		t.Fatal(err)
	}
	if len(eps) != 3 || eps[0] != "http://gpu1:11434" || eps[1] != "http://gpu2:11434" || eps[2] != "" {
		t.Errorf("turn endpoints %q", eps)
	}
}

// A file at schema version 2 gains the endpoint and shard columns, its
// rows kept with ” in them.
func TestMigrateVersion3ToEndpoints(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v3.db")
	createAtVersion(t, path, 3)
	db := rawDB(t, path)
	if _, err := db.Exec(`INSERT INTO runs (id, created_at, model, seed, attempts_per_task, status)
			VALUES ('old', '2026-01-01T00:00:00.000Z', 'm', 1, 1, 'finished');
		INSERT INTO arms (run_id, name, idx) VALUES ('old', 'baseline', 0);
		INSERT INTO tasks (run_id, id, idx) VALUES ('old', 'csv-sum', 0);
		INSERT INTO attempts (id, run_id, arm, task_id, idx, seed, status, reward, started_at, finished_at)
			VALUES (1, 'old', 'baseline', 'csv-sum', 0, 1, 'finished', 1, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:01.000Z');
		INSERT INTO turns (attempt_id, idx, prompt_tokens, completion_tokens, total_ns, load_ns, prompt_eval_ns, eval_ns, wall_ms)
			VALUES (1, 0, 1, 1, 1, 1, 1, 1, 1), (1, 1, 1, 1, 1, 1, 1, 1, 1), (1, 2, 1, 1, 1, 1, 1, 1, 1)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	run := &Run{ID: "old"}
	s2, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	got, err := s2.GetRun(ctx, run.ID)
	if err != nil || got.Shard != "" || got.ModelDigest != "" {
		t.Fatalf("run after migrating: %+v, %v", got, err)
	}
	var n int
	if err := s2.DB().GetContext(ctx, &n, `SELECT count(*) FROM turns WHERE endpoint = ''`); err != nil || n != 3 {
		t.Errorf("turns with endpoint '': %d (%v), want the 3 stored", n, err)
	}
}

// TestExportRefusesAShard: a shard's groups are partial, and advantages
// computed over them (as export does for a run without them) would be
// wrong training signals.
func TestExportRefusesAShard(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	r := testRun()
	r.Shard = "0/2"
	if err := s.CreateRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SaveAttempt(ctx, finishedAttempt(r.ID, AttemptKey{Arm: "baseline", Task: "csv-sum", Index: 0}, 1)); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	_, err := s.Export(ctx, &b, ExportOptions{})
	if err == nil || !strings.Contains(err.Error(), "shard 0/2") || !strings.Contains(err.Error(), "bench merge") || b.Len() != 0 {
		t.Errorf("export of a shard: %v, %d bytes; want a refusal saying to merge", err, b.Len())
	}
}
