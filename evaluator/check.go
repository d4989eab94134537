package evaluator

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/benchhq/bench/evaluator/testreport"
	"github.com/benchhq/bench/tasks"
)

// envResult names, for a black-box checker, the read-only folder that holds
// the agent's result.
const envResult = "BENCH_RESULT"

// runCheck judges the state the agent left with the task's checker (its
// checks/ folder): after every process of the attempt has ended, in a
// fresh sandbox whose working folder is a copy of checks/, the result (a
// fresh copy of workspace/ plus the change, without tests/) shown
// read-only at $BENCH_RESULT, and nothing that starts any of it. The
// checker is the task author's and runs none of the agent's code, so its
// report, or its exit status alone, is a verdict the agent cannot reach.
// The result's cases are "check::<id>".
func (s *Scorer) runCheck(ctx context.Context, t *tasks.Task, change *Change, home string) (*TestResult, error) {
	dir, result, err := s.resultFolder(t, change, false)
	if err != nil {
		return nil, err
	}
	defer s.remove(dir)
	work := filepath.Join(dir, "checks")
	if err := tasks.CopyTree(t.ChecksDir(), work); err != nil {
		return nil, fmt.Errorf("score task %s: copy the checker: %w", t.ID, err)
	}
	if t.Check.ReportFile != "" {
		if err := os.RemoveAll(filepath.Join(work, filepath.FromSlash(t.Check.ReportFile))); err != nil {
			return nil, fmt.Errorf("score task %s: %w", t.ID, err)
		}
	}
	// The checker's user reads the result (the agent's files may be
	// private to it) through a read-only mount: it can change nothing.
	if err := openToRead(dir, result); err != nil {
		return nil, fmt.Errorf("score task %s: %w", t.ID, err)
	}
	spec := s.Spec
	spec.Dir, spec.Home, spec.Network, spec.User = work, home, false, s.Sandbox.NewUser()
	spec.ReadOnly = append(append([]string(nil), spec.ReadOnly...), result)
	env := checkerEnv(spec, envResult+"="+result)
	res, out, err := s.run(ctx, t.Check.Command, t.Check.TimeoutOr(), spec, env)
	if err != nil {
		return nil, fmt.Errorf("score task %s: black-box check: %w", t.ID, err)
	}
	res.Verdict = VerdictBlackBox
	exitOK := res.ExitCode == 0 && !res.TimedOut
	if t.Check.Report == "" {
		res.Basis = BasisExitStatus
		c := testreport.Case{ID: CheckPrefix + "exit_status", Outcome: testreport.Pass}
		if !exitOK {
			c.Outcome, c.Message = testreport.Fail, fmt.Sprintf("the checker exited %d", res.ExitCode)
			if res.TimedOut {
				c.Message = fmt.Sprintf("the checker ran past its timeout (%s)", t.Check.TimeoutOr())
			}
			res.Failed = []string{c.ID}
		}
		res.Cases = []testreport.Case{c}
		res.CasesTotal, res.Passed = 1, exitOK
		if exitOK {
			res.CasesPassed = 1
		}
		return res, nil
	}
	res.Basis = BasisTests
	var file []byte
	if t.Check.Report == tasks.ReportJUnit {
		var problem string
		if file, problem = readSandboxFile(filepath.Join(work, filepath.FromSlash(t.Check.ReportFile)), maxReport, "the checker's report"); problem != "" {
			res.ReportError = problem
		}
	}
	var cases []testreport.Case
	if res.ReportError == "" {
		if out.stdout.over || out.stderr.over {
			res.ReportError = fmt.Sprintf("the checker's output is larger than %d MiB", maxReport>>20)
		} else if cases, err = testreport.Parse(t.Check.Report, testreport.Output{Stdout: out.stdout.Bytes(), Stderr: out.stderr.Bytes(), File: file}); err != nil {
			res.ReportError = "the checker's report: " + err.Error()
		}
	}
	if res.ReportError == "" && len(cases) == 0 {
		res.ReportError = "the checker reported no check"
	}
	if res.ReportError != "" {
		res.Failed = []string{CheckPrefix + "report"}
		res.Cases = []testreport.Case{{ID: CheckPrefix + "report", Outcome: testreport.Fail, Message: res.ReportError}}
		res.CasesTotal = 1
		res.Output += "\n[bench: " + res.ReportError + "; reward 0]"
		return res, nil
	}
	passed := 0
	for _, c := range cases {
		c.ID = CheckPrefix + c.ID
		switch c.Outcome {
		case testreport.Pass:
			passed++
		case testreport.Skip:
			// The checker is the task author's code: a check it skips
			// is its own choice, and fails nothing.
			passed++
		default:
			res.Failed = append(res.Failed, c.ID)
		}
		res.Cases = append(res.Cases, c)
	}
	res.CasesTotal, res.CasesPassed = len(cases), passed
	res.Passed = exitOK && len(res.Failed) == 0
	return res, nil
}

// openToRead lets any user pass through dir and read every file and folder
// of result (a scoring copy of bench's own, about to be shown read-only).
func openToRead(dir, result string) error {
	if err := os.Chmod(dir, 0o711); err != nil {
		return err
	}
	return filepath.WalkDir(result, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		add := fs.FileMode(0o044)
		if d.IsDir() || fi.Mode()&0o100 != 0 {
			add = 0o055
		}
		return os.Chmod(p, fi.Mode().Perm()|add)
	})
}
