package harbor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/benchhq/bench/image"
	"github.com/benchhq/bench/internal/tree"
	"github.com/benchhq/bench/sandbox"
	"github.com/benchhq/bench/tasks"
)

// SolutionPath is where solution/ is shown to solve.sh.
const SolutionPath = "/solution"

// offlineEnv are set for the verifier when it grades offline, so that
// the tools it fetched at preparation use their caches instead of failing
// on the network (uv, pip).
var offlineEnv = map[string]string{
	"UV_OFFLINE":                    "1",
	"PIP_NO_INDEX":                  "1",
	"PIP_DISABLE_PIP_VERSION_CHECK": "1",
}

// Attempt is one attempt's private copy of a prepared environment.
type Attempt struct {
	p   *Prepared
	dir string
	// Root is the host path of the attempt's root file system.
	Root string
	// User runs the attempt's processes.
	User sandbox.User
	rt   *Runtime
}

// NewAttempt makes a private copy of the prepared environment under
// tmpDir ("" for the system's): what the attempt changes reaches no other
// attempt nor the master.
func (r *Runtime) NewAttempt(p *Prepared, tmpDir string) (*Attempt, error) {
	dir, err := os.MkdirTemp(tmpDir, "bench-harbor-"+p.Task.Task.ID+"-")
	if err != nil {
		return nil, &InfraError{Err: fmt.Errorf("task %s: attempt folder: %w", p.Task.Task.ID, err)}
	}
	root := filepath.Join(dir, "root")
	if err := image.Copy(p.Root, root); err != nil {
		tree.Remove(dir) //nolint:errcheck // best effort
		return nil, &InfraError{Err: fmt.Errorf("task %s: %w", p.Task.Task.ID, err)}
	}
	return &Attempt{p: p, dir: dir, Root: root, User: r.Sandbox.NewUser(), rt: r}, nil
}

// Close removes the attempt's copy.
func (a *Attempt) Close() error { return tree.Remove(a.dir) }

// Workspace is the host path of the agent's working folder in the
// attempt's root: where bench's file tools work.
func (a *Attempt) Workspace() string {
	return filepath.Join(a.Root, filepath.FromSlash(a.p.Meta.Workdir))
}

// Spec is the sandbox of the agent's commands: the attempt's root as "/",
// root of a user namespace of its own, in the task's working folder,
// network as network says (the run's permission profile), never when the
// task says allow_internet = false.
func (a *Attempt) Spec(network bool) sandbox.Spec {
	if ai := a.p.Task.AllowInternet; ai != nil && !*ai {
		network = false
	}
	return sandbox.Spec{
		Root: a.Root, Dir: a.p.Meta.Workdir, Home: filepath.Join(a.Root, homeInRoot),
		AsRoot: true, Network: network, Limits: a.rt.Limits, User: a.User,
	}
}

// Env is the environment of the agent's commands: the image's and the
// Dockerfile's.
func (a *Attempt) Env() []string { return newEnv(a.p.Meta.Env).list(nil) }

// Solve runs solution/solve.sh in the attempt, as Harbor's oracle agent
// does (solution/ shown at /solution), with the network when the task
// allows internet access. Its failure is the reference solution's, which
// the verifier then judges.
func (a *Attempt) Solve(ctx context.Context) (StepLog, error) {
	t := a.p.Task
	if fi, err := os.Stat(filepath.Join(t.Task.Dir, SolveScript)); err != nil || !fi.Mode().IsRegular() {
		return StepLog{}, &tasks.FieldError{File: filepath.Join(t.Task.Dir, SolveScript), Msg: "missing: the reference solution bench validate runs"}
	}
	spec := a.Spec(t.AllowInternet == nil || *t.AllowInternet)
	spec.Mounts = []sandbox.Mount{{Src: filepath.Join(t.Task.Dir, "solution"), Dst: SolutionPath, ReadOnly: true}}
	ctx, cancel := context.WithTimeout(ctx, t.Task.Limits.WallTimeOr())
	defer cancel()
	start := time.Now()
	env := newEnv(a.p.Meta.Env).list(t.SolutionEnv)
	exit, out, err := a.rt.run(ctx, spec, []string{shell(a.Root), SolutionPath + "/solve.sh"}, env)
	log := StepLog{Op: "solve", Exit: exit, Took: time.Since(start), Output: out}
	if err != nil {
		return log, &InfraError{Err: fmt.Errorf("task %s: solve.sh: %w", t.Task.ID, err)}
	}
	return log, nil
}

// Verify runs the verifier on the attempt as Harbor does, once the agent
// has stopped: tests/ copied afresh to /tests, an empty /logs/verifier,
// `bash /tests/test.sh` in the working folder, without network, then the
// reward files read. Whatever the verifier does or fails to do is a
// Verdict (0 with its reason); an error is bench's own failure only.
func (a *Attempt) Verify(ctx context.Context) (Verdict, StepLog, error) {
	log, v, err := a.rt.verify(ctx, a.p, a.Root, false)
	return v, log, err
}

// verify runs the verifier in root (an attempt's copy, or the master at
// preparation, with the network, to provision what it fetches).
func (r *Runtime) verify(ctx context.Context, p *Prepared, root string, provision bool) (StepLog, Verdict, error) {
	t := p.Task
	dir, err := os.MkdirTemp("", "bench-verifier-"+t.Task.ID+"-")
	if err != nil {
		return StepLog{}, Verdict{}, &InfraError{Err: err}
	}
	defer tree.Remove(dir) //nolint:errcheck // best effort
	testsDir, logs := filepath.Join(dir, "tests"), filepath.Join(dir, "logs")
	if err := os.Mkdir(logs, 0o755); err != nil {
		return StepLog{}, Verdict{}, &InfraError{Err: err}
	}
	if err := tasks.CopyTree(t.Task.TestsDir(), testsDir); err != nil {
		return StepLog{}, Verdict{}, &InfraError{Err: fmt.Errorf("task %s: copy tests/: %w", t.Task.ID, err)}
	}
	spec := sandbox.Spec{
		Root: root, Dir: p.Meta.Workdir, Home: filepath.Join(root, homeInRoot), AsRoot: true,
		Network: provision, Limits: r.Limits, User: r.Sandbox.NewUser(),
		Mounts: []sandbox.Mount{{Src: testsDir, Dst: TestsPath}, {Src: logs, Dst: LogsPath}},
	}
	extra := map[string]string{}
	for k, v := range t.Task.Tests.Env {
		extra[k] = v
	}
	if !provision {
		for k, v := range offlineEnv {
			if _, set := extra[k]; !set {
				extra[k] = v
			}
		}
	}
	timeout := t.Task.Tests.TimeoutOr()
	if provision {
		timeout += t.Task.Environment.TimeoutOr() // downloads
	}
	ctx2, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	exit, out, err := r.run(ctx2, spec, []string{shell(root), TestsPath + "/test.sh"}, newEnv(p.Meta.Env).list(extra))
	log := StepLog{Op: "verifier", Exit: exit, Took: time.Since(start), Output: out}
	if err != nil {
		return log, Verdict{}, &InfraError{Err: fmt.Errorf("task %s: verifier: %w", t.Task.ID, err)}
	}
	if ctx.Err() != nil {
		return log, Verdict{}, &InfraError{Err: fmt.Errorf("task %s: verifier: %w", t.Task.ID, ctx.Err())}
	}
	v := ReadVerdict(logs)
	if errors.Is(ctx2.Err(), context.DeadlineExceeded) {
		v = Verdict{Kind: v.Kind, TimedOut: true, Reason: fmt.Sprintf("the verifier ran past its timeout (%s; [verifier] timeout_sec)", timeout)}
	}
	return log, v, nil
}

// shell is the interpreter of test.sh and solve.sh: bash as Harbor runs
// them, or /bin/sh in an image without bash. Links are followed inside
// root only.
func shell(root string) string {
	r, err := os.OpenRoot(root)
	if err != nil {
		return "/bin/sh"
	}
	defer r.Close()
	for _, p := range []string{"bin/bash", "usr/bin/bash"} {
		if fi, err := r.Stat(p); err == nil && fi.Mode().IsRegular() {
			return "/" + p
		}
	}
	return "/bin/sh"
}
