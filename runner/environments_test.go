package runner_test

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/benchhq/bench/environment"
	"github.com/benchhq/bench/internal/ollamatest"
	"github.com/benchhq/bench/runner"
	"github.com/benchhq/bench/sandbox"
	"github.com/benchhq/bench/tasks"
)

// TestAttemptsSeeTheirTasksWarmEnvironment: the agent's commands run with
// the task's prepared environment as HOME, Go's build cache warm in it,
// and what an attempt writes there reaches neither the next attempt nor
// the environment.
func TestAttemptsSeeTheirTasksWarmEnvironment(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	probe := `echo HOME=$HOME; cache=$(go env GOCACHE); echo CACHE=$cache; echo FILES=$(find "$cache" -type f | wc -l); ` +
		`ls "$HOME/poison" 2>/dev/null && echo POISONED; touch "$HOME/poison"; ` +
		`find "$cache" -type f -name '*-d' | head -1 | xargs -r sh -c 'echo x >> "$0"' 2>/dev/null; echo done`
	f := newFixture(t, ollamatest.Turns(
		ollamatest.Reply{Calls: []ollamatest.Call{call("run_command", map[string]any{"command": probe, "timeout_seconds": 60})}},
		ollamatest.Reply{Content: "done"},
	))
	f.run(&runner.Plan{Model: "fake", Suite: loadTask(t, "semver-compare"), Attempts: 2, Profiles: nil,
		Arms: []runner.Arm{{Name: "full", Profile: "full"}}}, "r1")
	var outs []string
	if err := f.store.DB().Select(&outs, `SELECT result FROM tool_calls ORDER BY attempt_id`); err != nil {
		t.Fatal(err)
	}
	if len(outs) != 2 {
		t.Fatalf("%d command results, want 2", len(outs))
	}
	for i, out := range outs {
		if !strings.Contains(out, "HOME=/home/bench") && !strings.Contains(out, "CACHE=/") {
			t.Errorf("attempt %d: no HOME of its own:\n%s", i, out)
		}
		files := 0
		if _, rest, ok := strings.Cut(out, "FILES="); ok {
			files, _ = strconv.Atoi(strings.Fields(rest)[0])
		}
		if files < 100 {
			t.Errorf("attempt %d: the Go build cache holds %d files: not the prepared environment's\n%s", i, files, out)
		}
		if strings.Contains(out, "POISONED") {
			t.Errorf("attempt %d saw what an earlier attempt wrote in its HOME:\n%s", i, out)
		}
	}
	// The master copy: read-only files, none written by an attempt.
	list, err := environment.List("")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range list {
		if l.Task != "semver-compare" {
			continue
		}
		filepath.WalkDir(l.Dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() || d.Name() == "env.json" {
				return err
			}
			fi, _ := d.Info()
			if fi.Mode().Perm()&0o222 != 0 {
				t.Errorf("%s is writable: %v", p, fi.Mode())
			}
			if b, _ := os.ReadFile(p); strings.HasSuffix(string(b), "x\n") && strings.HasSuffix(p, "-d") {
				t.Errorf("an attempt wrote into the environment's master copy: %s", p)
			}
			return nil
		})
	}
}

// TestTaskWhoseReferenceFailsIsRefused: a task whose reference solution
// fails its hidden tests in the prepared environment is refused before
// any attempt, with the tests' output and what to do; nothing is stored.
func TestTaskWhoseReferenceFailsIsRefused(t *testing.T) {
	suite := writeTask(t, "format = 1\ninstruction = \"x\"\n[tests]\ncommand = \"echo needs-network >&2; exit 3\"\n",
		map[string]string{"workspace/a.txt": "a", "solution/solve.sh": "true\n"})
	f := newFixture(t, giveUp)
	_, err := f.runner.Run(context.Background(), &runner.Plan{Model: "fake", Suite: suite, Attempts: 1}, "r1")
	if err == nil {
		t.Fatal("the run started")
	}
	for _, want := range []string{"reference solution failed the hidden tests", "exit 3", "needs-network", "bench validate", "bench cache clear --task"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	// Its environment is prepared while the tools' overhead is measured:
	// the measurement done, the run is still not created.
	for _, table := range []string{"attempts", "runs", "overhead"} {
		if n := f.count(`SELECT count(*) FROM ` + table); n != 0 {
			t.Errorf("%d rows of %s stored", n, table)
		}
	}
}

// TestImpossibleTaskRunsThoughItsReferenceFails: a task tagged impossible
// (its hidden verdict contradicts its instruction, docs/impossible.md) is
// built so that its reference solution fails: the run starts and scores
// its attempts, 0 here.
func TestImpossibleTaskRunsThoughItsReferenceFails(t *testing.T) {
	suite := writeTask(t, "format = 1\ninstruction = \"x\"\ntags = [\"impossible\"]\n[tests]\ncommand = \"exit 3\"\n",
		map[string]string{"workspace/a.txt": "a", "solution/solve.sh": "true\n"})
	f := newFixture(t, giveUp)
	if _, err := f.runner.Run(context.Background(), &runner.Plan{Model: "fake", Suite: suite, Attempts: 2}, "r1"); err != nil {
		t.Fatalf("the run did not start: %v", err)
	}
	if n := f.count(`SELECT count(*) FROM attempts WHERE status = 'finished' AND reward = 0`); n != 2 {
		t.Errorf("%d attempts finished with reward 0, want 2", n)
	}
}

// TestUnisolatedRunLeavesTheCacheFoldersClosed: without isolation, as
// root, commands run as an unprivileged user on the host, which must reach
// its HOME view; the views are made in the run's temp folder, and the
// folders above the cache (the operator's home) keep their modes.
func TestUnisolatedRunLeavesTheCacheFoldersClosed(t *testing.T) {
	off, err := sandbox.New(context.Background(), sandbox.Off)
	if err != nil {
		t.Skipf("no Off sandbox here: %v", err)
	}
	private := filepath.Join(t.TempDir(), "home")
	if err := os.Mkdir(private, 0o700); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, solveRecipe(t))
	f.runner.Sandbox = off
	f.runner.EnvDir = filepath.Join(private, ".cache", "bench", "envs")
	f.run(&runner.Plan{Model: "fake", Suite: loadTask(t, "recipe-trailing-dot"), Attempts: 1}, "r1")
	if got := f.count(`SELECT count(*) FROM attempts WHERE reward = 1`); got != 1 {
		t.Errorf("rewarded attempts: %d, want 1", got)
	}
	if fi, err := os.Stat(private); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("the folder above the cache: %v, %v; want it left 0700", fi.Mode().Perm(), err)
	}
	left, _ := filepath.Glob(filepath.Join(f.runner.TempDir, "bench-views-*"))
	if len(left) > 0 {
		t.Errorf("the run left its views folder: %v", left)
	}
}

// TestEnvironmentPreparedOnAnotherFileSystemIsFrozen: an unisolated run
// prepares in its temp folder; when that is another file system than the
// cache, the copy into the cache must be frozen (read-only) like one that
// was renamed in, so that no attempt writes into the master.
func TestEnvironmentPreparedOnAnotherFileSystemIsFrozen(t *testing.T) {
	off, err := sandbox.New(context.Background(), sandbox.Off)
	if err != nil {
		t.Skipf("no Off sandbox here: %v", err)
	}
	other, err := os.MkdirTemp("/dev/shm", "bench-test-")
	if err != nil {
		t.Skipf("no /dev/shm: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(other) })
	cache := t.TempDir()
	var a, c syscall.Stat_t
	if syscall.Stat(other, &a) != nil || syscall.Stat(cache, &c) != nil || a.Dev == c.Dev {
		t.Skip("/dev/shm is not another file system here")
	}
	f := newFixture(t, solveRecipe(t))
	f.runner.Sandbox = off
	f.runner.TempDir = other
	f.runner.EnvDir = filepath.Join(cache, "envs")
	// The task, with a set-up step that leaves files in HOME.
	suite := loadTask(t, "recipe-trailing-dot")
	dir := filepath.Join(t.TempDir(), "recipe-trailing-dot")
	if err := tasks.CopyTree(suite.Tasks[0].Dir, dir); err != nil {
		t.Fatal(err)
	}
	toml := filepath.Join(dir, "task.toml")
	b, err := os.ReadFile(toml)
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, "\n[environment]\nsetup = \"mkdir -p $HOME/.cache/warm && echo warm > $HOME/.cache/warm/file\"\n"...)
	if err := os.WriteFile(toml, b, 0o644); err != nil {
		t.Fatal(err)
	}
	task, err := tasks.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	suite = &tasks.Suite{Name: "examples", Dir: filepath.Dir(dir), Tasks: []*tasks.Task{task}}
	f.run(&runner.Plan{Model: "fake", Suite: suite, Attempts: 1}, "r1")
	if got := f.count(`SELECT count(*) FROM attempts WHERE reward = 1`); got != 1 {
		t.Errorf("rewarded attempts: %d, want 1", got)
	}
	layers, _ := filepath.Glob(filepath.Join(f.runner.EnvDir, "*", "*"))
	files := 0
	for _, l := range layers {
		if fi, err := os.Stat(l); err != nil || !fi.IsDir() {
			continue // env.json, the environment's record
		}
		filepath.WalkDir(l, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.Type()&fs.ModeSymlink != 0 {
				return err
			}
			// Files lose every write bit, folders those of group and others.
			deny := fs.FileMode(0o222)
			if d.IsDir() {
				deny = 0o022
			}
			if d.Type().IsRegular() {
				files++
			}
			if fi, err := d.Info(); err == nil && fi.Mode().Perm()&deny != 0 {
				t.Errorf("%s is writable (%v) in the master copy", p, fi.Mode().Perm())
			}
			return nil
		})
	}
	if files == 0 {
		t.Fatalf("no file in the prepared environment's layers %v", layers)
	}
}
