package tasks

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// Golden says how a task is judged out of the agent's reach: the agent's
// result runs on hidden cases (the task's cases/ folder) and produces one
// observation per case; bench compares each, in its own process, with the
// observation the reference solution produced, recorded by `bench validate`
// (ExpectedFile) and kept outside every sandbox.
type Golden struct {
	// Command runs once in the scoring folder and writes one observation
	// per case: the file $BENCH_OBSERVATIONS/<case>, the cases being in
	// $BENCH_CASES (a copy of the task's cases/). Exactly one of Command
	// and Each is set.
	Command string `toml:"command"`
	// Each runs once per case in the scoring folder, with the case file on
	// standard input (empty for a case folder) and $BENCH_CASE naming the
	// case; its standard output is the observation.
	Each string `toml:"each"`
	// Compare is how an observation is compared with the expected one:
	// one of the Compare* kinds (default CompareLines).
	Compare string `toml:"compare"`
	// Tolerance is the largest difference between two numbers that still
	// counts as equal, for CompareNumbers and CompareJSON: |a-b| <=
	// Tolerance * max(1, |a|, |b|). 0 asks for equal values. NaN never
	// equals anything.
	Tolerance float64 `toml:"tolerance"`
	// Checker, with Compare = CompareChecker, is a shell command that runs
	// in a fresh sandbox holding a copy of the task's checker/ folder, the
	// observations and the expected ones, and none of the agent's code or
	// files; it writes a verdict per case (docs/tasks.md).
	Checker string `toml:"checker"`
	// Timeout bounds the whole observation run (and the checker's run).
	Timeout Duration `toml:"timeout"`
}

// The comparison kinds of Golden.Compare.
const (
	// CompareExact: the same bytes.
	CompareExact = "exact"
	// CompareLines: the same lines, with "\r\n" read as "\n", trailing
	// blanks of each line and blank lines at the end ignored.
	CompareLines = "lines"
	// CompareUnorderedLines: the same lines as CompareLines reads them, in
	// any order (as a multiset).
	CompareUnorderedLines = "unordered_lines"
	// CompareJSON: one JSON value each, equal as values (object keys in
	// any order; numbers by value, within Tolerance). A duplicate key, a
	// second value or trailing bytes make an observation unreadable.
	CompareJSON = "json"
	// CompareNumbers: the same whitespace-separated words, those that are
	// numbers equal within Tolerance, the others equal as text.
	CompareNumbers = "numbers"
	// CompareChecker: the task's checker program judges each case.
	CompareChecker = "checker"
)

// CompareKinds lists the comparison kinds.
func CompareKinds() []string {
	return []string{CompareExact, CompareLines, CompareUnorderedLines, CompareJSON, CompareNumbers, CompareChecker}
}

// Check says how a task whose result is a state (files, a configuration)
// is judged out of the agent's reach: a checker of the task's own (its
// checks/ folder) runs after every process of the attempt has ended, in a
// fresh sandbox that shows the agent's result read-only
// ($BENCH_RESULT) and runs none of it; its verdict is the reward.
type Check struct {
	// Command runs in a copy of the task's checks/ folder. It must load
	// nothing of $BENCH_RESULT as code (Python with -I -S, a Go checker
	// built from checks/ alone).
	Command string `toml:"command"`
	// Report is the form of its per-check report, as Tests.Report; "" for
	// its exit status alone (trusted: the checker runs none of the
	// agent's code).
	Report string `toml:"report"`
	// ReportFile is the file a ReportJUnit checker writes, relative to its
	// folder.
	ReportFile string `toml:"report_file"`
	// Timeout bounds the checker (default 2 minutes).
	Timeout Duration `toml:"timeout"`
}

// Folders and files of a golden task.
const (
	// CasesFolder holds a golden task's hidden cases: one file or folder
	// per case, named by the case's ID.
	CasesFolder = "cases"
	// CheckerFolder holds a CompareChecker task's checker.
	CheckerFolder = "checker"
	// ChecksFolder holds a [check] task's checker.
	ChecksFolder = "checks"
	// ExpectedFile is the record of a golden task's expected observations,
	// in the task folder, written by `bench validate` from the reference
	// solution and never shown to any sandbox.
	ExpectedFile = "expected-observations.json"
	// ExpectedFormat is the version of ExpectedFile's shape.
	ExpectedFormat = 1
	// MaxObservation bounds one observation: a larger one fails its case.
	MaxObservation = 1 << 20
	// MaxCases bounds the cases of a task.
	MaxCases = 10_000
	// MaxTolerance bounds a golden task's tolerance: at 0.5, 1 would
	// equal 2.
	MaxTolerance = 0.1
)

// DefaultGoldenTimeout bounds a golden task's observation run.
const DefaultGoldenTimeout = 2 * time.Minute

// TimeoutOr returns the observation run's timeout, with the default.
func (g *Golden) TimeoutOr() time.Duration {
	if g.Timeout.Duration > 0 {
		return g.Timeout.Duration
	}
	return DefaultGoldenTimeout
}

// CompareOr returns the comparison kind, with the default.
func (g *Golden) CompareOr() string {
	if g.Compare == "" {
		return CompareLines
	}
	return g.Compare
}

// TimeoutOr returns the checker's timeout, with the default.
func (c *Check) TimeoutOr() time.Duration {
	if c.Timeout.Duration > 0 {
		return c.Timeout.Duration
	}
	return DefaultTestTimeout
}

func (g *Golden) validate(file string) error {
	switch {
	case strings.TrimSpace(g.Command) == "" && strings.TrimSpace(g.Each) == "":
		return &FieldError{File: file, Field: "golden.command", Msg: "missing: the command that runs the agent's result on every case (or golden.each, run once per case)"}
	case g.Command != "" && g.Each != "":
		return &FieldError{File: file, Field: "golden.each", Msg: "set golden.command (one run over all cases) or golden.each (one run per case), not both"}
	case !slices.Contains(CompareKinds(), g.CompareOr()):
		return &FieldError{File: file, Field: "golden.compare", Msg: fmt.Sprintf("expected one of %s, got %q", strings.Join(CompareKinds(), ", "), g.Compare)}
	case g.Tolerance < 0 || g.Tolerance >= MaxTolerance || math.IsNaN(g.Tolerance) || math.IsInf(g.Tolerance, 0):
		return &FieldError{File: file, Field: "golden.tolerance", Msg: fmt.Sprintf("expected a number ≥ 0 and below %g (a relative tolerance: 1e-9 is a usual one), got %v", MaxTolerance, g.Tolerance)}
	case g.Tolerance > 0 && g.CompareOr() != CompareNumbers && g.CompareOr() != CompareJSON:
		return &FieldError{File: file, Field: "golden.tolerance", Msg: fmt.Sprintf("only compare = %q or %q compares numbers; drop it or change compare", CompareNumbers, CompareJSON)}
	case g.CompareOr() == CompareChecker && strings.TrimSpace(g.Checker) == "":
		return &FieldError{File: file, Field: "golden.checker", Msg: fmt.Sprintf("missing: compare = %q needs the command that judges the observations (run in the task's %s/ folder)", CompareChecker, CheckerFolder)}
	case g.CompareOr() != CompareChecker && g.Checker != "":
		return &FieldError{File: file, Field: "golden.checker", Msg: fmt.Sprintf("set only with compare = %q", CompareChecker)}
	case g.Timeout.Duration < 0:
		return &FieldError{File: file, Field: "golden.timeout", Msg: "must not be negative"}
	}
	return nil
}

func (c *Check) validate(file string) error {
	if strings.TrimSpace(c.Command) == "" {
		return &FieldError{File: file, Field: "check.command", Msg: fmt.Sprintf("missing: the command that judges the agent's result, run in a copy of the task's %s/ folder", ChecksFolder)}
	}
	if c.Timeout.Duration < 0 {
		return &FieldError{File: file, Field: "check.timeout", Msg: "must not be negative"}
	}
	t := Tests{Report: c.Report, ReportFile: c.ReportFile}
	if err := t.validate(file); err != nil {
		var fe *FieldError
		if errors.As(err, &fe) {
			fe.Field = "check." + strings.TrimPrefix(fe.Field, "tests.")
		}
		return err
	}
	return nil
}

// CasesDir is the folder of the task's golden cases.
func (t *Task) CasesDir() string { return filepath.Join(t.Dir, CasesFolder) }

// CheckerDir is the folder of a CompareChecker task's checker.
func (t *Task) CheckerDir() string { return filepath.Join(t.Dir, CheckerFolder) }

// ChecksDir is the folder of a [check] task's checker.
func (t *Task) ChecksDir() string { return filepath.Join(t.Dir, ChecksFolder) }

// ExpectedPath is where the task's expected observations are recorded.
func (t *Task) ExpectedPath() string { return filepath.Join(t.Dir, ExpectedFile) }

var caseID = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$`)

// Cases lists the IDs of the task's golden cases (the names of the entries
// of cases/), sorted.
func (t *Task) Cases() ([]string, error) {
	entries, err := os.ReadDir(t.CasesDir())
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &FieldError{File: filepath.Join(t.Dir, FileName), Field: "golden", Msg: fmt.Sprintf("the task has no %s/ folder: a golden task needs its hidden cases there, one file or folder per case", CasesFolder)}
		}
		return nil, fmt.Errorf("list the cases of task %s: %w", t.ID, err)
	}
	var ids []string
	for _, e := range entries {
		if e.Name() == "__pycache__" {
			continue
		}
		if !caseID.MatchString(e.Name()) {
			return nil, &FieldError{File: filepath.Join(t.CasesDir(), e.Name()), Msg: "a case's name must be letters, digits, '.', '_' or '-' (not starting with '.' or '-'), at most 128 characters"}
		}
		if !e.IsDir() && !e.Type().IsRegular() {
			return nil, &FieldError{File: filepath.Join(t.CasesDir(), e.Name()), Msg: "a case must be a regular file or a folder"}
		}
		ids = append(ids, e.Name())
	}
	if len(ids) == 0 {
		return nil, &FieldError{File: t.CasesDir(), Msg: "no cases: a golden task needs at least one file or folder here"}
	}
	if len(ids) > MaxCases {
		return nil, &FieldError{File: t.CasesDir(), Msg: fmt.Sprintf("%d cases: at most %d", len(ids), MaxCases)}
	}
	sort.Strings(ids)
	return ids, nil
}

// Expected is the record of a golden task's expected observations: what the
// reference solution produced on each case, twice the same, with digests
// of everything it was recorded from (ExpectedDigests).
type Expected struct {
	Format  int    `json:"format"`
	Compare string `json:"compare"`
	// Cases maps each case's ID to the reference's observation.
	Cases map[string]Observation `json:"cases"`
	// Files maps what the record depends on to its digest.
	Files map[string]string `json:"files"`
}

// Observation is what a run wrote for one case: text when it is UTF-8,
// base64 otherwise.
type Observation struct {
	Text   *string `json:"text,omitempty"`
	Base64 *string `json:"base64,omitempty"`
}

// NewObservation wraps the bytes of an observation.
func NewObservation(b []byte) Observation {
	s := string(b)
	if utf8.ValidString(s) {
		return Observation{Text: &s}
	}
	e := base64.StdEncoding.EncodeToString(b)
	return Observation{Base64: &e}
}

// Bytes returns the observation's bytes.
func (o Observation) Bytes() ([]byte, error) {
	switch {
	case o.Text != nil && o.Base64 == nil:
		return []byte(*o.Text), nil
	case o.Base64 != nil && o.Text == nil:
		return base64.StdEncoding.DecodeString(*o.Base64)
	}
	return nil, errors.New("an observation needs exactly one of text and base64")
}

// ExpectedCommand is the command that records (or refreshes) the task's
// expected observations.
func (t *Task) ExpectedCommand() string { return "bench validate --record " + t.Dir }

// ExpectedDigests digests what a golden record depends on: every file of
// workspace/, tests/, solution/, cases/ and checker/, and the task's
// [golden] and [tests] settings.
func (t *Task) ExpectedDigests() (map[string]string, error) {
	out := map[string]string{}
	for _, sub := range []string{"workspace", "tests", "solution", CasesFolder, CheckerFolder} {
		if err := digestFolder(t.Dir, sub, out); err != nil {
			return nil, fmt.Errorf("digest %s of task %s: %w", sub, t.ID, err)
		}
	}
	settings, _ := json.Marshal(struct {
		Golden *Golden
		Result []string
		Env    map[string]string
	}{t.Golden, t.Tests.Result, t.Tests.Env})
	sum := sha256.Sum256(settings)
	out["task.toml [golden]"] = hex.EncodeToString(sum[:8])
	return out, nil
}

// digestFolder adds the digest of every file of dir/sub to out, keyed by
// its path relative to dir; a missing folder adds nothing.
func digestFolder(dir, sub string, out map[string]string) error {
	root := filepath.Join(dir, sub)
	if _, err := os.Stat(root); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "__pycache__" {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		sum, err := fileDigest(p, d)
		if err != nil || sum == "" {
			return err
		}
		out[filepath.ToSlash(rel)] = sum
		return nil
	})
}

// SetExpected makes cases (each case's expected observation) the task's
// expected observations, in memory, with the digests of what they depend
// on now; WriteExpected records them.
func (t *Task) SetExpected(cases map[string][]byte) error {
	files, err := t.ExpectedDigests()
	if err != nil {
		return err
	}
	e := &Expected{Format: ExpectedFormat, Compare: t.Golden.CompareOr(), Cases: map[string]Observation{}, Files: files}
	for id, b := range cases {
		e.Cases[id] = NewObservation(b)
	}
	t.Expected = e
	return nil
}

// WriteExpected records the task's expected observations (t.Expected) as
// its ExpectedFile.
func (t *Task) WriteExpected() error {
	if t.Expected == nil {
		return fmt.Errorf("write the expected observations of task %s: there are none", t.ID)
	}
	b, err := json.MarshalIndent(t.Expected, "", "  ")
	if err != nil {
		return err
	}
	tmp := t.ExpectedPath() + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write the expected observations of task %s: %w", t.ID, err)
	}
	if err := os.Rename(tmp, t.ExpectedPath()); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write the expected observations of task %s: %w", t.ID, err)
	}
	return nil
}

// MissingExpected is the error of a golden task that has no expected
// observations yet, or nil.
func (t *Task) MissingExpected() error {
	if t.Golden == nil || t.Expected != nil {
		return nil
	}
	n := 0
	if ids, err := t.Cases(); err == nil {
		n = len(ids)
	}
	return &FieldError{File: t.ExpectedPath(), Msg: fmt.Sprintf("missing: a golden task is scored against the expected observations of its %d cases, recorded from the reference solution; record them with: %s", n, t.ExpectedCommand())}
}

// loadExpected reads a golden task's expected observations, if it has
// them, and refuses them when the cases or anything they were
// recorded from changed since, naming the cases and the command that
// records them again.
func (t *Task) loadExpected() error {
	path := t.ExpectedPath()
	ids, err := t.Cases()
	if err != nil {
		return err
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // bench validate records it; a run refuses the task (MissingExpected)
	}
	if err != nil {
		return fmt.Errorf("load task %s: %w", t.ID, err)
	}
	var e Expected
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return &FieldError{File: path, Msg: fmt.Sprintf("not a record of expected observations bench can read (%v); write it again with: %s", err, t.ExpectedCommand())}
	}
	if e.Format != ExpectedFormat {
		return &FieldError{File: path, Field: "format", Msg: fmt.Sprintf("expected %d, got %d; write it again with: %s", ExpectedFormat, e.Format, t.ExpectedCommand())}
	}
	for id, o := range e.Cases {
		if _, err := o.Bytes(); err != nil {
			return &FieldError{File: path, Field: "cases." + id, Msg: fmt.Sprintf("%v; write it again with: %s", err, t.ExpectedCommand())}
		}
	}
	if e.Compare != t.Golden.CompareOr() {
		return &FieldError{File: path, Field: "compare", Msg: fmt.Sprintf("recorded for compare = %q, but task.toml now says %q; record again with: %s", e.Compare, t.Golden.CompareOr(), t.ExpectedCommand())}
	}
	var added, removed []string
	for _, id := range ids {
		if _, ok := e.Cases[id]; !ok {
			added = append(added, id)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(e.Cases)) {
		if !slices.Contains(ids, id) {
			removed = append(removed, id)
		}
	}
	now, err := t.ExpectedDigests()
	if err != nil {
		return err
	}
	changed := diffDigests(e.Files, now)
	if len(added)+len(removed)+len(changed) > 0 {
		var parts []string
		if len(added) > 0 {
			parts = append(parts, "cases with no expected observation (added since): "+strings.Join(firstFew(added), ", "))
		}
		if len(removed) > 0 {
			parts = append(parts, "expected observations of cases that are gone (removed or renamed): "+strings.Join(firstFew(removed), ", "))
		}
		if len(changed) > 0 {
			parts = append(parts, "changed since the record: "+strings.Join(changed, ", "))
		}
		return &FieldError{File: path, Msg: "the expected observations no longer match the task: " + strings.Join(parts, "; ") + "; record them again with: " + t.ExpectedCommand()}
	}
	t.Expected = &e
	return nil
}

func firstFew(s []string) []string {
	if len(s) > 5 {
		return append(slices.Clone(s[:5]), fmt.Sprintf("and %d more", len(s)-5))
	}
	return s
}
