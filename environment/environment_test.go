package environment_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/benchhq/bench/environment"
	"github.com/benchhq/bench/internal/sandboxtest"
	"github.com/benchhq/bench/sandbox"
	"github.com/benchhq/bench/tasks"
)

// writeTask makes a task whose set-up step and hidden tests leave files in
// HOME, and whose tests and solution hold secrets.
func writeTask(t *testing.T, setup string) *tasks.Task {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "warm-task")
	files := map[string]string{
		"task.toml": "format = 1\ninstruction = \"x\"\n[tests]\ncommand = 'grep -q fixed answer.txt && cat secret.txt > /dev/null && echo scored > \"$HOME/scoring-only\"'\n" +
			"result = [\"answer.txt\"]\n[environment]\nsetup = '" + setup + "'\n",
		"workspace/answer.txt": "broken\n",
		"tests/secret.txt":     "HIDDEN-TEST-SECRET\n",
		"solution/solve.sh":    "echo fixed SOLUTION-SECRET > answer.txt\n",
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	task, err := tasks.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return task
}

func TestPrepareLayersAndViews(t *testing.T) {
	ctx := context.Background()
	sb := sandboxtest.New(t)
	task := writeTask(t, `mkdir -p "$HOME/.cache/tool" && echo warm > "$HOME/.cache/tool/entry"`)
	cache := &environment.Cache{Dir: t.TempDir(), Sandbox: sb, TempDir: t.TempDir()}
	env, err := cache.Prepare(ctx, task)
	if err != nil {
		t.Fatal(err)
	}
	if !env.Fresh || !env.Meta.RefPassed || env.Meta.RefTest <= 0 {
		t.Errorf("meta %+v: want a fresh environment whose reference tests passed, timed", env.Meta)
	}
	has := func(layer, rel string) bool {
		_, err := os.Stat(filepath.Join(env.Dir, layer, rel))
		return err == nil
	}
	if !has(environment.HomeLayer, ".cache/tool/entry") || has(environment.HomeLayer, "scoring-only") {
		t.Error("the home layer must hold what the set-up step left, and nothing of the hidden tests")
	}
	if !has(environment.ScoringLayer, ".cache/tool/entry") || !has(environment.ScoringLayer, "scoring-only") {
		t.Error("the scoring layer must hold the home layer and what the hidden tests left")
	}
	// Nothing of the hidden tests' or the solution's files is kept.
	filepath.WalkDir(env.Dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if b, _ := os.ReadFile(p); strings.Contains(string(b), "SECRET") {
				t.Errorf("%s holds a hidden test's or the solution's content", p)
			}
		}
		return nil
	})

	// A view is private: what it writes reaches neither the master nor
	// another view.
	view, release, err := env.HomeView()
	if err != nil {
		t.Fatal(err)
	}
	entry := filepath.Join(view, ".cache", "tool", "entry")
	if os.Geteuid() == 0 {
		fi, err := os.Stat(entry)
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		if st.Nlink < 2 || st.Uid != 0 || fi.Mode().Perm()&0o222 != 0 {
			t.Errorf("a root view's file: links %d, owner %d, mode %v; want a read-only hard link owned by root", st.Nlink, st.Uid, fi.Mode())
		}
	} else if err := os.WriteFile(entry, []byte("poison\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(view, "added"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	other, releaseOther, err := env.HomeView()
	if err != nil {
		t.Fatal(err)
	}
	defer releaseOther()
	if b, _ := os.ReadFile(filepath.Join(other, ".cache", "tool", "entry")); string(b) != "warm\n" {
		t.Errorf("another view reads %q: a view's write reached it", b)
	}
	if _, err := os.Stat(filepath.Join(other, "added")); err == nil {
		t.Error("a file added in one view is in another")
	}
	release()
	if _, err := os.Stat(view); err == nil {
		t.Error("release left the view")
	}

	// Read back from the cache by another Cache; a changed set-up step is
	// another environment.
	second := &environment.Cache{Dir: cache.Dir, Sandbox: sb}
	again, err := second.Prepare(ctx, task)
	if err != nil || again.Fresh || again.Meta.Key != env.Meta.Key {
		t.Errorf("second Prepare: %+v, %v; want the cached environment", again, err)
	}
	changed := writeTask(t, `echo other > "$HOME/other"`)
	if cache.Key(ctx, changed) == env.Meta.Key {
		t.Error("a changed set-up step kept the key")
	}
	if off, err := sandbox.New(ctx, sandbox.Off); err == nil {
		if (&environment.Cache{Dir: cache.Dir, Sandbox: off}).Key(ctx, task) == env.Meta.Key {
			t.Error("a sandbox that does not isolate shares the isolated environment's key")
		}
	}
	list, err := environment.List(cache.Dir)
	if err != nil || len(list) != 1 || list[0].Bytes == 0 {
		t.Fatalf("List = %+v, %v; want the one environment with its size", list, err)
	}
	// In use (two Caches hold it, as two runs would): left alone, and
	// still whole, its views too, however old; let go of, removed.
	old := time.Now().Add(-7 * time.Hour)
	if err := os.Chtimes(other, old, old); err != nil {
		t.Fatal(err)
	}
	if c, err := environment.Clear(cache.Dir, nil); err != nil || c.Removed != 0 || len(c.InUse) != 1 {
		t.Errorf("Clear of an environment in use = %+v, %v; want it left alone", c, err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("Clear removed an old view of an environment in use: %v", err)
	}
	if _, err := os.Stat(filepath.Join(env.Dir, "env.json")); err != nil {
		t.Errorf("Clear touched the environment in use: %v", err)
	}
	cache.Close()
	if c, err := environment.Clear(cache.Dir, nil); err != nil || c.Removed != 0 {
		t.Errorf("Clear while another Cache holds it = %+v, %v; want it left alone", c, err)
	}
	second.Close()
	if c, err := environment.Clear(cache.Dir, nil); err != nil || c.Removed != 1 || c.Freed == 0 {
		t.Errorf("Clear = %+v, %v", c, err)
	}
	if _, err := os.Stat(other); err == nil {
		t.Error("Clear left an old view of an environment no bench holds")
	}
}

// TestPrepareFailingSetup: a set-up step that fails stops with its output.
func TestPrepareFailingSetup(t *testing.T) {
	task := writeTask(t, `echo cannot set up >&2; exit 7`)
	cache := &environment.Cache{Dir: t.TempDir(), Sandbox: sandboxtest.New(t), TempDir: t.TempDir()}
	_, err := cache.Prepare(context.Background(), task)
	if err == nil || !strings.Contains(err.Error(), "exit 7") || !strings.Contains(err.Error(), "cannot set up") {
		t.Fatalf("Prepare = %v, want the set-up step's failure with its output", err)
	}
	if list, _ := environment.List(cache.Dir); len(list) != 0 {
		t.Errorf("a failed preparation left %d environments", len(list))
	}
}
