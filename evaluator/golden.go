package evaluator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/benchhq/bench/evaluator/testreport"
	"github.com/benchhq/bench/tasks"
)

// Prefixes of the IDs of out-of-process cases in a TestResult (and in the
// store's test_cases), beside the in-process tests' own IDs.
const (
	// GoldenPrefix starts the ID of a golden case: "golden::<case>".
	GoldenPrefix = "golden::"
	// CheckPrefix starts the ID of a black-box check: "check::<id>".
	CheckPrefix = "check::"
)

// OutOfProcessCase reports whether a case ID of a TestResult is a golden
// case or a black-box check rather than an in-process test.
func OutOfProcessCase(id string) bool {
	return strings.HasPrefix(id, GoldenPrefix) || strings.HasPrefix(id, CheckPrefix)
}

// The folders of a golden run inside its scoring folder, and the variables
// that name them.
const (
	benchDir        = ".bench"
	casesInside     = ".bench/cases"
	observedInside  = ".bench/observations"
	envCases        = "BENCH_CASES"
	envObservations = "BENCH_OBSERVATIONS"
	envCase         = "BENCH_CASE"
)

// eachDriver runs a golden task's Each command once per case, in the
// scoring folder, the case file on standard input and its standard output
// the observation. It runs in the sandbox, beside the agent's code: it
// produces observations, never a judgment.
const eachDriver = `cd "$BENCH_WORKSPACE" || exit 1
for c in "$BENCH_CASES"/*; do
  id=${c##*/}
  if [ -f "$c" ]; then in=$c; else in=/dev/null; fi
  BENCH_CASE=$c /bin/sh -c "$1" < "$in" > "$BENCH_OBSERVATIONS/$id"
done
exit 0`

// Observations are what one golden run wrote, by case: the bytes, or why
// there are none a comparison can use (missing, too large, not a file).
type Observations struct {
	// IDs are the task's cases, sorted, as the run had them.
	IDs     []string
	Got     map[string][]byte
	Problem map[string]string
	// Run is the observation run itself (its output, exit status, time).
	Run *TestResult
}

// observe runs a golden task's observation command on the original
// workspace plus change, in a fresh scoring folder, and reads what it wrote.
func (s *Scorer) observe(ctx context.Context, t *tasks.Task, change *Change, home string) (*Observations, error) {
	ids, err := t.Cases()
	if err != nil {
		return nil, err
	}
	dir, work, err := s.scoringFolder(t, change)
	if err != nil {
		return nil, err
	}
	defer s.remove(dir)
	bdir := filepath.Join(work, benchDir)
	if err := os.RemoveAll(bdir); err != nil {
		return nil, fmt.Errorf("score task %s: %w", t.ID, err)
	}
	cases, observed := filepath.Join(work, casesInside), filepath.Join(work, observedInside)
	for _, d := range []string{bdir, observed} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return nil, fmt.Errorf("score task %s: %w", t.ID, err)
		}
	}
	if err := tasks.CopyTree(t.CasesDir(), cases); err != nil {
		return nil, fmt.Errorf("score task %s: copy the cases: %w", t.ID, err)
	}
	spec := s.Spec
	spec.Dir, spec.Home, spec.Network, spec.User = work, home, false, s.Sandbox.NewUser()
	spec.Harden = s.Sandbox.Isolated()
	env := append(TestEnv(t, spec, work), envCases+"="+cases, envObservations+"="+observed)
	command, argv := t.Golden.Command, []string(nil)
	if t.Golden.Each != "" {
		command, argv = eachDriver, []string{"bench-each", t.Golden.Each}
	}
	res, _, err := s.runArgs(ctx, command, argv, t.Golden.TimeoutOr(), spec, env)
	if err != nil {
		return nil, fmt.Errorf("score task %s: golden cases: %w", t.ID, err)
	}
	if t.Golden.Each != "" {
		res.Command = t.Golden.Each
	}
	obs := &Observations{IDs: ids, Got: map[string][]byte{}, Problem: map[string]string{}, Run: res}
	// Every process of the run has ended: the folders are as it left
	// them. The agent's code may have put a link (to any host folder) in
	// place of .bench or of the observations folder: bench reads only
	// through the folder it made.
	root, problem := openObservations(work, observed)
	if root != nil {
		defer root.Close()
	}
	for _, id := range ids {
		var b []byte
		if problem == "" {
			b, obs.Problem[id] = readObservation(root, id)
		} else {
			obs.Problem[id] = problem
		}
		if obs.Problem[id] != "" {
			continue
		}
		delete(obs.Problem, id)
		obs.Got[id] = b
	}
	return obs, nil
}

// openObservations opens the observations folder of a golden run, checking
// that it and the folder above it in the scoring folder work are still
// the folders bench made, not links; a problem is said in words.
func openObservations(work, observed string) (*os.Root, string) {
	for _, d := range []string{filepath.Join(work, benchDir), observed} {
		fi, err := os.Lstat(d)
		if err != nil || !fi.IsDir() {
			return nil, "the observations folder " + observedInside + " was replaced or removed by the code that ran"
		}
	}
	root, err := os.OpenRoot(observed)
	if err != nil {
		return nil, fmt.Sprintf("the observations folder cannot be read: %v", err)
	}
	return root, ""
}

// readObservation reads one observation file of root, never through a
// link, without waiting on a pipe, at most tasks.MaxObservation bytes; a
// problem is said in words.
func readObservation(root *os.Root, id string) ([]byte, string) {
	const what = "the observation"
	if fi, err := root.Lstat(id); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return nil, what + " is a symbolic link, which bench never follows"
	}
	f, err := root.OpenFile(id, os.O_RDONLY|syscallNoFollow|syscallNonBlock, 0)
	if err != nil {
		return nil, openProblem(err, what)
	}
	defer f.Close()
	return readOpened(f, tasks.MaxObservation, what)
}

// runGolden scores the golden cases of t: one observation run, then each
// observation compared, in bench's process, with the expected one (or
// judged by the task's checker, in a sandbox of its own). The result's
// cases are "golden::<case>".
func (s *Scorer) runGolden(ctx context.Context, t *tasks.Task, change *Change, home string, homeFor func() (string, func(), error)) (*TestResult, error) {
	obs, err := s.observe(ctx, t, change, home)
	if err != nil {
		return nil, err
	}
	res := obs.Run
	res.Verdict, res.Basis = VerdictGolden, BasisTests
	if t.Expected == nil {
		// Only a task being recorded (bench validate --record, or an
		// environment warmed for it) has none: nothing is judged.
		res.ReportError, res.Unjudged = "no expected observations to compare with: record them with "+t.ExpectedCommand(), true
		res.Output += "\n[bench: " + res.ReportError + "]"
		return res, nil
	}
	ids := obs.IDs
	want := map[string][]byte{}
	for _, id := range ids {
		if want[id], err = t.Expected.Cases[id].Bytes(); err != nil {
			return nil, fmt.Errorf("score task %s: expected observation of case %s: %w", t.ID, id, err)
		}
	}
	verdicts := map[string]string{}
	var checkerNote string
	if t.Golden.CompareOr() == tasks.CompareChecker {
		// The checker gets a HOME of its own: the observation run's is
		// the agent's code's.
		checkerHome, release, err := homeFor()
		if err != nil {
			return nil, err
		}
		verdicts, checkerNote, err = s.judgeByChecker(ctx, t, obs, want, checkerHome)
		release()
		if err != nil {
			return nil, err
		}
	} else {
		for _, id := range ids {
			if _, ok := obs.Got[id]; ok {
				verdicts[id] = Match(t.Golden.CompareOr(), t.Golden.Tolerance, obs.Got[id], want[id])
			}
		}
	}
	passed := 0
	for _, id := range ids {
		c := testreport.Case{ID: GoldenPrefix + id, Outcome: testreport.Pass}
		why, judged := verdicts[id]
		switch {
		case obs.Problem[id] != "":
			why = obs.Problem[id]
		case !judged:
			why = "the checker gave no verdict on this case"
			if checkerNote != "" {
				why = checkerNote
			}
		}
		if why != "" {
			c.Outcome, c.Message = testreport.Fail, why
			res.Failed = append(res.Failed, c.ID)
		} else {
			passed++
		}
		res.Cases = append(res.Cases, c)
	}
	res.CasesTotal, res.CasesPassed = len(ids), passed
	res.Passed = passed == len(ids)
	res.Output += fmt.Sprintf("\n[bench: golden cases: %d of %d observations match the expected ones]", passed, len(ids))
	if !res.Passed {
		for _, c := range res.Cases {
			if c.Outcome != testreport.Pass {
				res.Output += fmt.Sprintf("\n[bench: first failing case %s: %s]", strings.TrimPrefix(c.ID, GoldenPrefix), c.Message)
				break
			}
		}
	}
	return res, nil
}

// Checker verdicts: the file a checker writes, and its shape.
const (
	envVerdicts  = "BENCH_VERDICTS"
	verdictsFile = "verdicts.json"
	// maxVerdicts bounds the verdict file a checker writes.
	maxVerdicts = 16 << 20
)

// judgeByChecker runs a golden task's checker in a fresh sandbox that holds
// a copy of the task's checker/ folder, the cases, the observations
// (observed/<case>) and the expected ones (expected/<case>), and none of
// the agent's code or files. It returns each judged case's reason to fail
// ("" for a pass), and, when the checker gave no usable verdict, why.
func (s *Scorer) judgeByChecker(ctx context.Context, t *tasks.Task, obs *Observations, want map[string][]byte, home string) (map[string]string, string, error) {
	dir, err := os.MkdirTemp(s.TempDir, "bench-checker-")
	if err != nil {
		return nil, "", fmt.Errorf("score task %s: make the checker's folder: %w", t.ID, err)
	}
	defer s.remove(dir)
	work := filepath.Join(dir, "work")
	if err := tasks.CopyTree(t.CheckerDir(), work); err != nil {
		return nil, "", fmt.Errorf("score task %s: copy the checker: %w", t.ID, err)
	}
	for _, sub := range []string{"observed", "expected"} {
		if err := os.Mkdir(filepath.Join(work, sub), 0o755); err != nil {
			return nil, "", fmt.Errorf("score task %s: %w", t.ID, err)
		}
	}
	if err := tasks.CopyTree(t.CasesDir(), filepath.Join(work, "cases")); err != nil {
		return nil, "", fmt.Errorf("score task %s: copy the cases: %w", t.ID, err)
	}
	for id, b := range want {
		if err := os.WriteFile(filepath.Join(work, "expected", id), b, 0o644); err != nil {
			return nil, "", fmt.Errorf("score task %s: %w", t.ID, err)
		}
		if got, ok := obs.Got[id]; ok {
			if err := os.WriteFile(filepath.Join(work, "observed", id), got, 0o644); err != nil {
				return nil, "", fmt.Errorf("score task %s: %w", t.ID, err)
			}
		}
	}
	spec := s.Spec
	spec.Dir, spec.Home, spec.Network, spec.User = work, home, false, s.Sandbox.NewUser()
	env := checkerEnv(spec, envVerdicts+"="+filepath.Join(work, verdictsFile))
	res, _, err := s.run(ctx, t.Golden.Checker, t.Golden.TimeoutOr(), spec, env)
	if err != nil {
		return nil, "", fmt.Errorf("score task %s: golden checker: %w", t.ID, err)
	}
	obs.Run.Output += "\n[bench: the checker's output]\n" + res.Output
	obs.Run.Duration += res.Duration
	if res.TimedOut {
		// Judged as any timeout of scoring: against the reference's
		// time, by the caller (an overloaded machine is no verdict).
		obs.Run.TimedOut = true
		return nil, fmt.Sprintf("the checker ran past its timeout (%s) and judged nothing", t.Golden.TimeoutOr()), nil
	}
	if res.ExitCode != 0 {
		return nil, fmt.Sprintf("the checker failed (exit %d) on these observations", res.ExitCode), nil
	}
	b, problem := readSandboxFile(filepath.Join(work, verdictsFile), maxVerdicts, "the checker's "+verdictsFile)
	if problem != "" {
		return nil, problem, nil
	}
	verdicts, err := parseVerdicts(b)
	if err != nil {
		return nil, "the checker's verdicts cannot be read: " + err.Error(), nil
	}
	return verdicts, "", nil
}

// parseVerdicts reads a checker's verdicts.json: an object mapping each
// case to {"pass": bool, "reason": string}, strictly (a duplicate case, an
// unknown field or a missing pass make it unreadable).
func parseVerdicts(b []byte) (map[string]string, error) {
	v, err := parseJSON(b)
	if err != nil {
		return nil, err
	}
	obj, ok := v.(jsonObject)
	if !ok {
		return nil, fmt.Errorf("expected an object of case verdicts, got %s", jsonType(v))
	}
	out := map[string]string{}
	for _, id := range obj.keys {
		v, ok := obj.vals[id].(jsonObject)
		pass, isBool := v.vals["pass"].(bool)
		reason, isText := v.vals["reason"].(string)
		_, hasReason := v.vals["reason"]
		if !ok || !isBool || (hasReason && !isText) || len(v.keys) > 2 || (len(v.keys) == 2 && !hasReason) {
			return nil, fmt.Errorf("case %s: expected {\"pass\": true|false, \"reason\": \"...\"}", show([]byte(id)))
		}
		switch {
		case pass:
			out[id] = ""
		case reason == "":
			out[id] = "the checker judged it wrong"
		default:
			out[id] = "the checker: " + cut(reason, 500)
		}
	}
	return out, nil
}

func cut(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// readSandboxFile reads a file a sandboxed program wrote (what names it
// in a problem), never through a link, without waiting on a pipe, at most
// limit bytes; a problem is said in words.
func readSandboxFile(p string, limit int, what string) ([]byte, string) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscallNoFollow|syscallNonBlock, 0)
	if err != nil {
		return nil, openProblem(err, what)
	}
	defer f.Close()
	return readOpened(f, limit, what)
}

// openProblem words why a file a sandboxed program wrote could not be
// opened.
func openProblem(err error, what string) string {
	var pe *fs.PathError
	switch {
	case errors.Is(err, os.ErrNotExist):
		return what + " was not written"
	case errors.As(err, &pe) && pe.Err == syscallLoop:
		return what + " is a symbolic link, which bench never follows"
	case errors.As(err, &pe):
		return fmt.Sprintf("%s cannot be read: %v", what, pe.Err)
	}
	return fmt.Sprintf("%s cannot be read: %v", what, err)
}

// readOpened reads an opened file that must be regular, at most limit
// bytes; a problem is said in words.
func readOpened(f *os.File, limit int, what string) ([]byte, string) {
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, what + " is not a regular file"
	}
	b, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return nil, fmt.Sprintf("%s cannot be read: %v", what, err)
	}
	if len(b) > limit {
		return nil, fmt.Sprintf("%s is larger than %d KiB", what, limit>>10)
	}
	return b, ""
}
