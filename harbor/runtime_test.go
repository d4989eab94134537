package harbor

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchhq/bench/image"
	"github.com/benchhq/bench/internal/rootfstest"
	"github.com/benchhq/bench/sandbox"
)

// testRuntime returns a runtime over the machine's bubblewrap, or skips.
func testRuntime(t testing.TB) *Runtime {
	t.Helper()
	sb, err := sandbox.New(context.Background(), sandbox.Required)
	if err != nil {
		if os.Getenv("BENCH_REQUIRE_BWRAP") == "1" {
			t.Fatalf("BENCH_REQUIRE_BWRAP=1 but %v", err)
		}
		t.Skipf("no sandbox here: %v", err)
	}
	dir := t.TempDir()
	return &Runtime{Sandbox: sb, Images: &image.Store{Dir: filepath.Join(dir, "images")}, Dir: filepath.Join(dir, "envs"), Provision: true}
}

// pushRootfs serves an image of the host's progs; see rootfstest.Push.
func pushRootfs(t testing.TB, progs ...string) string { return rootfstest.Push(t, progs...) }

// copyTask copies a task folder of testdata into a temporary folder and
// rewrites its image references to ref.
func copyTask(t testing.TB, src, ref string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		out := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		b = bytes.ReplaceAll(b, []byte("localhost:5000/bench/busybox:1"), []byte(ref))
		b = bytes.ReplaceAll(b, []byte("localhost:5000/bench/python-mini:1"), []byte(ref))
		return os.WriteFile(out, b, 0o755)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// The Dockerfile task: its steps replayed on the pulled base, its verifier
// provisioned, failing untouched, passing the reference solution, scoring
// 0 with a reason when the agent breaks the verifier's interpreter.
func TestRuntimeDockerfileTask(t *testing.T) {
	r := testRuntime(t)
	ref := pushRootfs(t, "bash", "mkdir", "wc", "tr", "cat", "rm")
	tk, err := Load(copyTask(t, "testdata/suite/sh-count", ref), Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	p, err := r.Prepare(ctx, tk)
	if err != nil {
		t.Fatal(err)
	}
	if p.Meta.Workdir != "/app" || len(p.Meta.Steps) != 1 || p.Meta.Steps[0].Exit != 0 {
		t.Errorf("meta: %+v", p.Meta)
	}
	if got, _ := os.ReadFile(filepath.Join(p.Root, "app/out/state")); string(got) != "ready\n" {
		t.Errorf("the RUN step's file: %q", got)
	}
	if got, _ := os.ReadFile(filepath.Join(p.Root, "app/data.txt")); string(got) != "a\nb\nc\n" {
		t.Errorf("the COPY step's file: %q", got)
	}
	env := strings.Join(p.Meta.Env, " ")
	if !strings.Contains(env, "APP=/app") || !strings.Contains(env, "GREETING=hello world") || !strings.Contains(env, "PATH=/bin") {
		t.Errorf("env: %s", env)
	}
	if p.Meta.Untouched == nil || p.Meta.Untouched.Passed {
		t.Errorf("the untouched environment at preparation: %+v", p.Meta.Untouched)
	}

	// Prepared once: a second Prepare is the cache's.
	p2, err := r.Prepare(ctx, tk)
	if err != nil || !p2.Meta.PreparedAt.Equal(p.Meta.PreparedAt) {
		t.Errorf("prepared again: %v %+v", err, p2.Meta)
	}

	val, err := r.Validate(ctx, tk, "")
	if err != nil {
		t.Fatal(err)
	}
	if !val.OK() || !val.Solved.Passed || val.Solved.Metrics["lines_ok"] != 1 || val.Solved.Metrics["style"] != 0.5 {
		t.Errorf("validation: %+v", val)
	}

	// The agent replaces the verifier's interpreter: no reward, a 0 with
	// the reason, not an error.
	a, err := r.NewAttempt(p, "")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	cmd, err := r.Sandbox.Command(ctx, a.Spec(false), []string{"/bin/sh", "-c", "echo 3 > /app/count.sh; printf '#!/bin/sh\\nexit 0\\n' > /bin/bash"}, a.Env())
	if err != nil {
		t.Fatal(err)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	v, _, err := a.Verify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if v.Passed || !strings.Contains(v.Reason, "wrote no reward") {
		t.Errorf("verdict: %+v", v)
	}
	// The master is untouched.
	if b, _ := os.ReadFile(filepath.Join(p.Root, "bin/bash")); bytes.HasPrefix(b, []byte("#!")) {
		t.Error("an attempt wrote to the prepared environment")
	}
}

// A task that names a prebuilt image, whose verifier writes reward.txt.
func TestRuntimeImageTask(t *testing.T) {
	r := testRuntime(t)
	ref := pushRootfs(t, "bash", "cat")
	dir := writeTask(t, map[string]string{
		ConfigFile:      "[environment]\ndocker_image = \"" + ref + "\"\nworkdir = \"/work\"\n[verifier]\ntimeout_sec = 30\n",
		InstructionFile: "Write hello to /work/out.",
		TestScript:      "read l < /work/out; if [ \"$l\" = hello ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi\n",
		SolveScript:     "echo hello > /work/out\n",
	})
	tk, err := Load(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	val, err := r.Validate(context.Background(), tk, "")
	if err != nil {
		t.Fatal(err)
	}
	if !val.OK() || val.Untouched.Passed || val.Untouched.Source != RewardText || !val.Solved.Passed {
		t.Errorf("validation: %+v", val)
	}

	// An image that cannot be pulled is bench's failure, not a score.
	bad, err := Load(writeTask(t, map[string]string{
		ConfigFile:      "[environment]\ndocker_image = \"" + strings.Replace(ref, "mini:1", "absent:1", 1) + "\"\n",
		InstructionFile: "x", TestScript: "exit 0",
	}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Prepare(context.Background(), bad)
	var ie *InfraError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "task-x") {
		t.Errorf("an absent image: %v", err)
	}
}

// A task whose verifier and solution are broken is reported by validate.
func TestRuntimeValidateFindsDefects(t *testing.T) {
	r := testRuntime(t)
	ref := pushRootfs(t, "bash")
	tk, err := Load(writeTask(t, map[string]string{
		ConfigFile:      "[environment]\ndocker_image = \"" + ref + "\"\n",
		InstructionFile: "anything",
		TestScript:      "echo 1 > /logs/verifier/reward.txt\n", // passes everything
		SolveScript:     "exit 3\n",
	}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	val, err := r.Validate(context.Background(), tk, "")
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(val.Problems, "\n")
	for _, want := range []string{"passes the untouched environment", "solve.sh exited 3"} {
		if !strings.Contains(got, want) {
			t.Errorf("problems %q: no %q", got, want)
		}
	}
}

// A verifier past its timeout: the agent's doing when the reference
// solution's verifier is quick (a 0 with the reason), the machine's when
// it is as slow (an error: retried, never scored).
func TestScoreTimeoutComparedWithReference(t *testing.T) {
	r := testRuntime(t)
	ref := pushRootfs(t, "bash", "sleep")
	ctx := context.Background()
	for _, c := range []struct {
		name, test string
		infra      bool
	}{
		{"agent", "if [ -e /app/slow ]; then sleep 30; fi; echo 1 > /logs/verifier/reward.txt\n", false},
		{"machine", "sleep 30\n", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			tk, err := Load(writeTask(t, map[string]string{
				ConfigFile:      "[environment]\ndocker_image = \"" + ref + "\"\nworkdir = \"/app\"\n[verifier]\ntimeout_sec = 1\n",
				InstructionFile: "x",
				TestScript:      c.test,
				SolveScript:     "true\n",
			}), Options{})
			if err != nil {
				t.Fatal(err)
			}
			r.Provision = false
			p, err := r.Prepare(ctx, tk)
			if err != nil {
				t.Fatal(err)
			}
			a, err := r.NewAttempt(p, "")
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			if err := os.WriteFile(filepath.Join(a.Root, "app/slow"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			res, err := a.Score(ctx)
			if c.infra {
				if err == nil || !strings.Contains(err.Error(), "overloaded") {
					t.Errorf("got %+v, %v; want the machine's failure", res, err)
				}
				return
			}
			if err != nil || res.Passed || !res.TimedOut || res.RefDuration <= 0 || !strings.Contains(res.ReportError, "past its timeout") {
				t.Errorf("got %+v, %v; want a 0 with the reason and the reference's time", res, err)
			}
		})
	}
}

// allow_internet = false keeps the network from the agent's commands
// whatever the profile gives; unset, the profile decides.
func TestSpecHonoursAllowInternet(t *testing.T) {
	no, yes := false, true
	for _, c := range []struct {
		allow   *bool
		profile bool
		want    bool
	}{{nil, true, true}, {nil, false, false}, {&no, true, false}, {&yes, false, false}, {&yes, true, true}} {
		a := &Attempt{p: &Prepared{Task: &Task{AllowInternet: c.allow}}, rt: &Runtime{}}
		if got := a.Spec(c.profile).Network; got != c.want {
			t.Errorf("allow_internet %v, profile network %v: network %v, want %v", c.allow, c.profile, got, c.want)
		}
	}
}

// Clear removes prepared environments and images no bench holds, and
// leaves those a Prepare holds.
func TestClearLeavesHeldEnvironments(t *testing.T) {
	r := testRuntime(t)
	r.Provision = false
	ref := pushRootfs(t, "bash")
	ctx := context.Background()
	tk, err := Load(writeTask(t, map[string]string{
		ConfigFile: "[environment]\ndocker_image = \"" + ref + "\"\n", InstructionFile: "x", TestScript: "exit 0",
	}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := r.Prepare(ctx, tk)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Clear(r.Dir, nil)
	if err != nil || c.Removed != 0 || len(c.InUse) != 1 {
		t.Fatalf("while held: %+v %v", c, err)
	}
	p.Release()
	if c, err = Clear(r.Dir, nil); err != nil || c.Removed != 1 {
		t.Fatalf("released: %+v %v", c, err)
	}
	if l, _ := List(r.Dir); len(l) != 0 {
		t.Errorf("left: %+v", l)
	}
	ic, err := image.Clear(r.Images.Dir)
	if err != nil || ic.Removed != 1 || ic.Freed == 0 {
		t.Errorf("images: %+v %v", ic, err)
	}
	// Prepared again from nothing.
	p, err = r.Prepare(ctx, tk)
	if err != nil {
		t.Fatal(err)
	}
	p.Release()
}
