// Package evaluator scores attempts: it runs a task's hidden tests on the
// agent's result after the agent stops, turns their report into a reward,
// and computes the statistics built on rewards (group-relative advantages,
// pass@k, intervals, comparisons).
package evaluator

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/benchhq/bench/evaluator/testreport"
	"github.com/benchhq/bench/internal/procio"
	"github.com/benchhq/bench/internal/tree"
	"github.com/benchhq/bench/sandbox"
	"github.com/benchhq/bench/tasks"
)

// MaxTestOutput caps the hidden-test output kept, head and tail.
const MaxTestOutput = 64 << 10

// maxReport bounds each stream (and the report file) read for a per-test
// report: a larger one is a report that cannot be read, and scores 0.
const maxReport = 32 << 20

// The bases of a reward (TestResult.Basis).
const (
	// BasisTests is a reward that rests on per-test verdicts: the command
	// exited 0 and every recorded test reported a pass.
	BasisTests = "tests"
	// BasisExitStatus is a reward that rests on the exit status alone: the
	// task's tests give no per-test report.
	BasisExitStatus = "exit_status"
)

// TestResult is the outcome of one run of a task's hidden tests.
type TestResult struct {
	// Command is the shell command that ran.
	Command string
	// ExitCode is the command's exit status; -1 if it did not exit (timeout, signal).
	ExitCode int
	// Passed is the verdict: reward 1. With a per-test report it needs exit
	// status 0 and a pass for every recorded test; otherwise exit status 0.
	Passed bool
	// TimedOut marks a test killed at its timeout.
	TimedOut bool
	// Output is stdout and stderr interleaved, capped at MaxTestOutput.
	Output string
	// Duration is how long the tests ran.
	Duration time.Duration
	// CanaryDuration is how long the canary run took, when there was one
	// (passing tests with canaries bench could plant; not stored).
	CanaryDuration time.Duration
	// CanaryTimedOut says that the timeout was the canary run's, the
	// first run having passed: the reference is then timed the same way.
	CanaryTimedOut bool
	// CanaryNote says why a canary run could not tell a real report from
	// a forged one (a property of the task's tests); "" otherwise.
	CanaryNote string
	// RefDuration is, for tests that timed out, how long the reference
	// solution's tests took in the same prepared environment.
	RefDuration time.Duration
	// Basis says what the reward rests on: BasisTests or BasisExitStatus.
	Basis string
	// Verdict is the kind of evidence the reward rests on: who judged,
	// and whether the agent's code could reach the judgment.
	Verdict Verdict
	// Unjudged says that nothing could be judged: a golden task being
	// recorded has no expected observations yet (reward 0).
	Unjudged bool
	// CasesTotal and CasesPassed count the out-of-process cases (golden
	// cases, black-box checks) and those that passed; 0 without any.
	CasesTotal, CasesPassed int
	// Cases are the tests the report gave, sorted by ID.
	Cases []testreport.Case
	// ReportError says why the per-test report could not be read (the
	// reward is then 0).
	ReportError string
	// Failed are the recorded tests that did not report a pass.
	Failed []string
	// Change is what of the agent's workspace was carried into scoring.
	Change *Change
	// Suspicions are what in the carried change a genuine solution rarely
	// does (nil when it was not read). They never change the reward.
	Suspicions *Suspicions
	// Record is the task's record the verdict checked the cases against
	// (nil for none).
	Record *tasks.Record
	// Value is the reward as a task's own verifier wrote it (Harbor's
	// reward files: a fraction, Passed is it at bench's threshold); nil
	// for bench's own tests. Metrics are the verifier's other numbers.
	Value   *float64
	Metrics map[string]float64
}

// Reward is 1 if the hidden tests passed, 0 otherwise.
func (r *TestResult) Reward() int {
	if r != nil && r.Passed {
		return 1
	}
	return 0
}

// Scorer runs hidden tests in fresh scoring folders: a new copy of the
// task's workspace/, the agent's changes to the files that count as its
// result, then tests/; as a fresh sandbox user with a new HOME, the system
// PATH, no network and none of the operator's environment.
type Scorer struct {
	// Sandbox runs the tests.
	Sandbox *sandbox.Sandbox
	// Spec gives the limits, read-only and hidden paths of the tests'
	// sandbox; its Dir, Home, Network and User are the scorer's.
	Spec sandbox.Spec
	// TempDir is where scoring folders are made ("" for the system's).
	TempDir string
	// Home, when set, makes the HOME of a scoring run (a private view of
	// the task's prepared environment) and returns it with what removes
	// it; nil gives an empty HOME.
	Home func(ctx context.Context, t *tasks.Task) (dir string, release func(), err error)
	// Remove removes a scoring folder once its run is over; nil removes it
	// at once (tree.Remove). A runner removes them off the attempt's path.
	Remove func(dir string)
}

// remove removes a scoring folder, as Remove says.
func (s *Scorer) remove(dir string) {
	if s.Remove != nil {
		s.Remove(dir)
		return
	}
	tree.Remove(dir)
}

// Score scores the agent's workspace: the hidden tests run on its result.
// Only a failure of the harness (the disk, a broken task folder, a sandbox
// that cannot be made) is an error; a failing or hanging test, or a report
// that cannot be read, is a result with reward 0.
//
// Hidden tests that pass, with a report bench can plant canaries in, run
// again with them (see canary): a report they show forged scores 0.
func (s *Scorer) Score(ctx context.Context, t *tasks.Task, workspace string) (*TestResult, error) {
	change, err := CollectChange(t, workspace)
	if err != nil {
		return nil, fmt.Errorf("score task %s: %w", t.ID, err)
	}
	// What a genuine solution rarely does is read now, while the
	// attempt's workspace is still there; it never changes the reward.
	flags, ferr := change.Suspicions(t)
	if ferr != nil {
		flags = &Suspicions{List: []Suspicion{{Flag: FlagNotRead, Detail: "the change could not be read for flags: " + ferr.Error()}}}
	}
	res, err := s.RunScored(ctx, t, change)
	if err != nil {
		return nil, err
	}
	res.Change, res.Suspicions = change, flags
	return res, nil
}

// RunScored is Run, then, when the tests passed, the canary run that
// tells a real report from a forged one: the whole of scoring a change. A
// task judged out of the agent's reach (golden cases, a black-box check)
// needs no canary run: its in-process tests, if any, add nothing a forger
// could use.
func (s *Scorer) RunScored(ctx context.Context, t *tasks.Task, change *Change) (*TestResult, error) {
	res, err := s.Run(ctx, t, change)
	if err != nil {
		return nil, err
	}
	if res.Passed && res.Verdict == VerdictCanary {
		if err := s.canaryRun(ctx, t, change, res); err != nil {
			return nil, err
		}
		if res.CanaryNote != "" {
			res.Verdict = VerdictInProcess
		}
	}
	return res, nil
}

// Run runs the scoring of t on the original workspace plus change (nil
// for none), each of its ways of judging with a fresh HOME of its own
// (made by s.Home): the agent's code, which the observation run and the
// hidden tests run, can write its HOME, and a checker must not start with
// what it left there (a Go toolexec in ~/.config/go/env). The canary run
// is RunScored's.
func (s *Scorer) Run(ctx context.Context, t *tasks.Task, change *Change) (*TestResult, error) {
	return s.runParts(ctx, t, change, func() (string, func(), error) { return s.home(ctx, t) })
}

// home makes a fresh HOME for a scoring run.
func (s *Scorer) home(ctx context.Context, t *tasks.Task) (string, func(), error) {
	if s.Home != nil {
		home, release, err := s.Home(ctx, t)
		if err != nil {
			return "", nil, fmt.Errorf("score task %s: make the scoring HOME: %w", t.ID, err)
		}
		return home, release, nil
	}
	home, err := os.MkdirTemp(s.TempDir, "bench-score-home-")
	if err != nil {
		return "", nil, fmt.Errorf("score task %s: make the scoring HOME: %w", t.ID, err)
	}
	return home, func() { s.remove(home) }, nil
}

// RunWithHome is Run with home, a folder of the caller's, as the HOME of
// every way of judging: what preparing an environment needs, to keep what
// the reference solution's scoring leaves there. Never give it an agent's
// change.
func (s *Scorer) RunWithHome(ctx context.Context, t *tasks.Task, change *Change, home string) (*TestResult, error) {
	return s.runParts(ctx, t, change, func() (string, func(), error) { return home, func() {}, nil })
}

// runParts runs each way of judging the task, each in a sandbox of its
// own with the HOME homeFor makes: the hidden tests, the golden cases, the
// black-box check. The reward needs them all; its verdict is the
// strongest of them, since a forger must pass them all.
func (s *Scorer) runParts(ctx context.Context, t *tasks.Task, change *Change, homeFor func() (string, func(), error)) (*TestResult, error) {
	var parts []*TestResult
	part := func(run func(home string) (*TestResult, error)) error {
		home, release, err := homeFor()
		if err != nil {
			return err
		}
		defer release()
		res, err := run(home)
		if err != nil {
			return err
		}
		parts = append(parts, res)
		return nil
	}
	if t.Golden != nil {
		if err := part(func(home string) (*TestResult, error) { return s.runGolden(ctx, t, change, home, homeFor) }); err != nil {
			return nil, err
		}
	}
	if t.Check != nil {
		if err := part(func(home string) (*TestResult, error) { return s.runCheck(ctx, t, change, home) }); err != nil {
			return nil, err
		}
	}
	if t.Tests.Command != "" {
		err := part(func(home string) (*TestResult, error) {
			res, _, err := s.runIn(ctx, t, change, home, false)
			return res, err
		})
		if err != nil {
			return nil, err
		}
	}
	if len(parts) == 0 {
		return nil, fmt.Errorf("score task %s: nothing judges it: no [tests] command, [golden] or [check]", t.ID)
	}
	return combine(parts), nil
}

// combine makes one result of the results of a task's ways of judging:
// passed when all passed, timed out when one did, its verdict the
// strongest kind among them.
func combine(parts []*TestResult) *TestResult {
	if len(parts) == 1 {
		return parts[0]
	}
	out := &TestResult{Passed: true, Basis: BasisExitStatus, Verdict: VerdictExitStatus}
	rank := func(v Verdict) int { return slices.Index(Verdicts(), v) }
	var commands, outputs []string
	for i, p := range parts {
		commands = append(commands, p.Command)
		outputs = append(outputs, p.Output)
		if i == 0 {
			out.ExitCode = p.ExitCode
		}
		if p.ExitCode != 0 && out.ExitCode == 0 {
			out.ExitCode = p.ExitCode
		}
		out.Passed = out.Passed && p.Passed
		out.TimedOut = out.TimedOut || p.TimedOut
		out.Duration += p.Duration
		if p.Basis == BasisTests {
			out.Basis = BasisTests
		}
		if rank(p.Verdict) < rank(out.Verdict) {
			out.Verdict = p.Verdict
		}
		out.CasesTotal += p.CasesTotal
		out.CasesPassed += p.CasesPassed
		out.Cases = append(out.Cases, p.Cases...)
		out.Failed = append(out.Failed, p.Failed...)
		if out.ReportError == "" {
			out.ReportError = p.ReportError
		}
		out.Unjudged = out.Unjudged || p.Unjudged
		if p.Record != nil {
			out.Record = p.Record
		}
	}
	out.Command = strings.Join(commands, "\n")
	cut := procio.New(MaxTestOutput, MaxTestOutput/2)
	cut.WriteString(strings.Join(outputs, "\n"))
	out.Output = cut.String()
	slices.SortFunc(out.Cases, func(a, b testreport.Case) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// canaryRun runs the hidden tests of res, which passed, once more with
// bench's canaries and amends res with what that run showed.
func (s *Scorer) canaryRun(ctx context.Context, t *tasks.Task, change *Change, res *TestResult) error {
	home, release, err := s.home(ctx, t)
	if err != nil {
		return err
	}
	defer release()
	cres, can, err := s.runIn(ctx, t, change, home, true)
	if err != nil || can == nil {
		return err
	}
	res.CanaryDuration = cres.Duration
	took := cres.Duration.Round(time.Millisecond)
	recorded := t.Record.Tests()
	if recorded == nil {
		// No record yet (bench validate --record): the tests that passed.
		for _, k := range res.Cases {
			if k.Outcome == testreport.Pass {
				recorded = append(recorded, k.ID)
			}
		}
	}
	problem, missing, checked := "", false, 0
	if cres.ReportError == "" {
		problem, missing, checked = can.check(res.Cases, cres.Cases, recorded)
	}
	if cres.TimedOut && missing {
		problem = "" // cut short by the timeout: judged as one
	}
	switch {
	case problem == "" && cres.TimedOut:
		// Judged as any timeout of the hidden tests: against the
		// reference solution's time, by the caller.
		res.Passed, res.TimedOut, res.CanaryTimedOut, res.Cases = false, true, true, nil
		res.Failed = t.Record.Tests()
		res.Output += fmt.Sprintf("\n[bench: the canary run (the same tests, run again instrumented) ran past the timeout (%s); reward 0]\n[bench: the canary run's output]\n%s", took, cres.Output)
		return nil
	case problem == "" && cres.ReportError != "":
		problem = "the canary run's report could not be read (" + cres.ReportError + "), where the first run's could: the test run was tampered with"
	case problem == "" && checked == 0:
		res.CanaryNote = "no recorded test is one bench could instrument (Go test functions of tests/, unittest methods of its test modules): the canary run shows nothing"
		res.Output += fmt.Sprintf("\n[bench: the canary run (%s): %s]", took, res.CanaryNote)
		return nil
	}
	if problem != "" {
		// A forged report's passes are no evidence of anything.
		res.Passed, res.Cases = false, nil
		res.ReportError = problem
		res.Failed = t.Record.Tests()
		res.Output += "\n[bench: " + problem + "; reward 0]\n[bench: the canary run's output]\n" + cres.Output
		return nil
	}
	res.Output += fmt.Sprintf("\n[bench: the canary run (%s): the %d recorded tests bench instrumented failed as planted]", took, checked)
	return nil
}

// runIn runs the hidden tests once, in a scoring folder of their own: a
// copy of the workspace, the change, tests/, and with canary bench's
// canaries (nil when none could be planted: the run is then not made).
func (s *Scorer) runIn(ctx context.Context, t *tasks.Task, change *Change, home string, withCanary bool) (*TestResult, *canary, error) {
	dir, work, err := s.scoringFolder(t, change)
	if err != nil {
		return nil, nil, err
	}
	defer s.remove(dir)
	var can *canary
	if withCanary {
		if can, err = plantCanary(t, work); err != nil || can == nil {
			return nil, nil, err
		}
	}
	if t.Tests.ReportFile != "" {
		// Only the tests write their report.
		if err := os.RemoveAll(filepath.Join(work, filepath.FromSlash(t.Tests.ReportFile))); err != nil {
			return nil, nil, fmt.Errorf("score task %s: %w", t.ID, err)
		}
	}
	spec := s.Spec
	spec.Dir, spec.Home, spec.Network, spec.User = work, home, false, s.Sandbox.NewUser()
	// The agent's code runs inside the test runner that decides its
	// reward: keep it out of that runner's memory.
	spec.Harden = s.Sandbox.Isolated()
	env := TestEnv(t, spec, work)
	// The test command is the first process of its own PID namespace:
	// when run returns, the kernel has ended everything it started, so
	// nothing of the scoring user outlives it (no KillAll needed).
	res, out, err := s.run(ctx, t.Tests.Command, t.Tests.TimeoutOr(), spec, env)
	if err != nil {
		return nil, nil, fmt.Errorf("score task %s: %w", t.ID, err)
	}
	verdict(res, t, out, work)
	return res, can, nil
}

// scoringFolder makes a fresh scoring folder: dir, which the caller
// removes (s.remove), holding work, a new copy of the task's workspace/,
// the change (nil for none), then tests/.
func (s *Scorer) scoringFolder(t *tasks.Task, change *Change) (dir, work string, err error) {
	return s.resultFolder(t, change, true)
}

// resultFolder is scoringFolder, with tests/ copied in or not: a
// black-box check reads the agent's result alone.
func (s *Scorer) resultFolder(t *tasks.Task, change *Change, withTests bool) (dir, work string, err error) {
	dir, err = os.MkdirTemp(s.TempDir, "bench-score-")
	if err != nil {
		return "", "", fmt.Errorf("score task %s: make the scoring folder: %w", t.ID, err)
	}
	fail := func(err error) (string, string, error) {
		s.remove(dir)
		return "", "", err
	}
	work = filepath.Join(dir, "work")
	if err := os.Mkdir(work, 0o700); err != nil {
		return fail(fmt.Errorf("score task %s: %w", t.ID, err))
	}
	if err := t.CopyWorkspace(work); err != nil {
		return fail(err)
	}
	if change != nil {
		if err := change.Apply(work); err != nil {
			return fail(fmt.Errorf("score task %s: %w", t.ID, err))
		}
	}
	if withTests {
		if err := t.CopyTests(work); err != nil {
			return fail(err)
		}
	}
	return dir, work, nil
}

// TestEnv is the whole environment of the hidden tests in folder dir: the
// system PATH (the operator's PATH, but only its folders the sandbox
// shows), LANG, what keeps Python and Go from reading settings of their
// own, and the task's [tests] env. The sandbox adds HOME.
func TestEnv(t *tasks.Task, spec sandbox.Spec, dir string) []string {
	env := append(baseEnv(spec), "BENCH_WORKSPACE="+dir)
	for _, k := range slices.Sorted(maps.Keys(t.Tests.Env)) {
		env = append(env, k+"="+t.Tests.Env[k])
	}
	return env
}

// baseEnv is what every sandboxed scoring command gets: the system PATH,
// LANG, and what keeps Python and Go from reading settings of their own.
func baseEnv(spec sandbox.Spec) []string {
	return []string{"PATH=" + SystemPath(spec), "LANG=C.UTF-8", "PYTHONNOUSERSITE=1", "PYTHONDONTWRITEBYTECODE=1",
		"GOTOOLCHAIN=local", "GOPROXY=off", "GOFLAGS="}
}

// checkerEnv is a checker's environment (a golden task's, a black-box
// check's): baseEnv, no script's folder on Python's path, and more.
func checkerEnv(spec sandbox.Spec, more ...string) []string {
	return append(append(baseEnv(spec), "PYTHONSAFEPATH=1"), more...)
}

// defaultPath is the PATH when the operator's gives nothing usable.
const defaultPath = "/usr/local/bin:/usr/bin:/bin"

// SystemPath is the operator's PATH without the folders a sandbox does not
// show (a home's bin, relative entries): the tools of the system only.
func SystemPath(spec sandbox.Spec) string {
	var keep []string
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if !filepath.IsAbs(d) || slices.Contains(keep, d) {
			continue
		}
		if sandbox.Shows(spec, d) {
			keep = append(keep, d)
		}
	}
	if len(keep) == 0 {
		return defaultPath
	}
	return strings.Join(keep, ":")
}

// streams holds what a test command wrote.
type streams struct {
	stdout, stderr *capped
}

// run runs a shell command of the task's (the hidden tests, a golden
// observation run, a checker) under spec with a timeout.
func (s *Scorer) run(ctx context.Context, command string, timeout time.Duration, spec sandbox.Spec, env []string) (*TestResult, *streams, error) {
	return s.runArgs(ctx, command, nil, timeout, spec, env)
}

// runArgs is run with arguments for the shell script command ($0, $1...).
func (s *Scorer) runArgs(ctx context.Context, command string, args []string, timeout time.Duration, spec sandbox.Spec, env []string) (*TestResult, *streams, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd, err := s.Sandbox.Command(ctx, spec, append([]string{"/bin/sh", "-c", command}, args...), env)
	if err != nil {
		return nil, nil, err
	}
	display := procio.New(MaxTestOutput, MaxTestOutput/2)
	out := &streams{stdout: &capped{limit: maxReport}, stderr: &capped{limit: maxReport}}
	cmd.Stdout = io.MultiWriter(display, out.stdout)
	cmd.Stderr = io.MultiWriter(display, out.stderr)
	start := time.Now()
	err = cmd.Run()
	res := &TestResult{Command: command, Duration: time.Since(start)}
	var exit *exec.ExitError
	switch {
	case err == nil:
		res.ExitCode = 0
	case ctx.Err() == context.DeadlineExceeded:
		res.ExitCode = -1
		res.TimedOut = true
		display.WriteString(fmt.Sprintf("\n[bench: killed after %s]", timeout))
	case errors.As(err, &exit):
		res.ExitCode = exit.ExitCode()
	case errors.Is(err, exec.ErrWaitDelay):
		// The command exited but a child kept its output open.
		res.ExitCode = cmd.ProcessState.ExitCode()
	default:
		if ctx.Err() != nil {
			return nil, nil, fmt.Errorf("run %q: %w", command, ctx.Err())
		}
		return nil, nil, fmt.Errorf("run %q: %w", command, err)
	}
	res.Output = display.String()
	return res, out, nil
}

// verdict reads the per-test report, if the task has one, and decides.
func verdict(res *TestResult, t *tasks.Task, out *streams, work string) {
	exitOK := res.ExitCode == 0 && !res.TimedOut
	if t.Tests.Report == "" {
		res.Basis, res.Verdict = BasisExitStatus, VerdictExitStatus
		res.Passed = exitOK
		return
	}
	res.Basis, res.Verdict = BasisTests, VerdictInProcess
	if t.Tests.CanaryOr() && canaryForm(t.Tests.Report) {
		res.Verdict = VerdictCanary
	}
	res.Record = t.Record
	var file []byte
	var rerr error
	if t.Tests.Report == tasks.ReportJUnit {
		file, rerr = readReportFile(filepath.Join(work, filepath.FromSlash(t.Tests.ReportFile)))
	}
	switch {
	case rerr != nil:
		res.ReportError = rerr.Error()
	case out.stdout.over || out.stderr.over:
		res.ReportError = fmt.Sprintf("the test output is larger than %d MiB: its report cannot be read", maxReport>>20)
	default:
		cases, err := testreport.Parse(t.Tests.Report, testreport.Output{Stdout: out.stdout.Bytes(), Stderr: out.stderr.Bytes(), File: file})
		if err != nil {
			res.ReportError = err.Error()
		}
		res.Cases = cases
	}
	if res.ReportError != "" {
		// Every recorded test counts as failed: none could be seen to pass.
		res.Passed = false
		res.Failed = t.Record.Tests()
		res.Output += "\n[bench: " + res.ReportError + "; reward 0]"
		return
	}
	ok, failed := testreport.Check(res.Cases, t.Record.Tests())
	res.Failed = failed
	res.Passed = exitOK && ok
}

// readReportFile reads a report file the tests wrote, never through a
// link, and at most maxReport bytes.
func readReportFile(p string) ([]byte, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscallNoFollow, 0)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("the tests wrote no report file %s", filepath.Base(p))
		}
		return nil, fmt.Errorf("the report file cannot be read: %v", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, errors.New("the report file is not a regular file")
	}
	b, err := io.ReadAll(io.LimitReader(f, maxReport+1))
	if err != nil {
		return nil, fmt.Errorf("the report file cannot be read: %v", err)
	}
	if len(b) > maxReport {
		return nil, fmt.Errorf("the report file is larger than %d MiB", maxReport>>20)
	}
	return b, nil
}

// capped keeps what is written up to a limit, and notes whether more came.
type capped struct {
	bytes.Buffer
	limit int
	over  bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.limit - c.Len(); room < len(p) {
		c.over = true
		if room > 0 {
			c.Buffer.Write(p[:room])
		}
		return len(p), nil
	}
	return c.Buffer.Write(p)
}

// RunCommand runs a shell command on the host in dir with a timeout, the
// way a reference solution runs (it is the task author's, trusted), with
// the operator's environment plus BENCH_WORKSPACE and env ("KEY=value").
// The whole process group is killed at the timeout.
func RunCommand(ctx context.Context, command, dir string, timeout time.Duration, env ...string) (*TestResult, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", command)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "BENCH_WORKSPACE="+dir), env...)
	procio.KillGroupOnCancel(cmd, 2*time.Second)
	out := procio.New(MaxTestOutput, MaxTestOutput/2)
	cmd.Stdout, cmd.Stderr = out, out
	start := time.Now()
	err := cmd.Run()
	res := &TestResult{Command: command, Duration: time.Since(start), Output: out.String()}
	var exit *exec.ExitError
	switch {
	case err == nil:
		res.Passed = true
	case ctx.Err() == context.DeadlineExceeded:
		res.ExitCode, res.TimedOut = -1, true
		res.Output += fmt.Sprintf("\n[bench: killed after %s]", timeout)
	case errors.As(err, &exit):
		res.ExitCode = exit.ExitCode()
	case errors.Is(err, exec.ErrWaitDelay):
		res.ExitCode = cmd.ProcessState.ExitCode()
		res.Passed = res.ExitCode == 0
	default:
		return nil, fmt.Errorf("run %q: %w", command, err)
	}
	return res, nil
}
