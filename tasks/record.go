package tasks

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// RecordFile is the name of the record of a task's hidden tests, in the
// task folder, written by `bench validate` and checked when the task loads.
const RecordFile = "recorded-tests.json"

// RecordFormat is the version of the record file's shape.
const RecordFormat = 1

// Record says which hidden tests decide a task's reward: those that fail
// on the untouched workspace and pass with the reference solution
// (FailToPass), and those that pass on both (PassToPass), as SWE-bench
// names them. A reward is 1 only when every one of them reports a pass.
// Files maps each file the record depends on (workspace/, tests/,
// solution/ and the [tests] settings) to its digest, so that a change to
// any of them is caught when the task loads.
type Record struct {
	Format     int               `json:"format"`
	Report     string            `json:"report"`
	FailToPass []string          `json:"fail_to_pass"`
	PassToPass []string          `json:"pass_to_pass"`
	Files      map[string]string `json:"files"`
}

// Tests are the recorded tests, sorted: every one must pass for reward 1.
func (r *Record) Tests() []string {
	if r == nil {
		return nil
	}
	out := append(slices.Clone(r.FailToPass), r.PassToPass...)
	sort.Strings(out)
	return slices.Compact(out)
}

// RecordPath is where the task's record is.
func (t *Task) RecordPath() string { return filepath.Join(t.Dir, RecordFile) }

// RecordCommand is the command that writes (or refreshes) the task's record.
func (t *Task) RecordCommand() string { return "bench validate --record " + t.Dir }

// RecordDigests digests what a record depends on: every file of
// workspace/, tests/ and solution/, and the [tests] settings (as
// "task.toml [tests]").
func (t *Task) RecordDigests() (map[string]string, error) {
	out := map[string]string{}
	for _, sub := range []string{"workspace", "tests", "solution"} {
		if err := digestFolder(t.Dir, sub, out); err != nil {
			return nil, fmt.Errorf("digest %s of task %s: %w", sub, t.ID, err)
		}
	}
	settings, _ := json.Marshal(struct {
		Command, Report, ReportFile string
		Result                      []string
		Env                         map[string]string
	}{t.Tests.Command, t.Tests.Report, t.Tests.ReportFile, t.Tests.Result, t.Tests.Env})
	sum := sha256.Sum256(settings)
	out["task.toml [tests]"] = hex.EncodeToString(sum[:8])
	return out, nil
}

// fileDigest is a short digest of a regular file or a link ("" for others).
func fileDigest(p string, d fs.DirEntry) (string, error) {
	h := sha256.New()
	switch {
	case d.Type()&fs.ModeSymlink != 0:
		target, err := os.Readlink(p)
		if err != nil {
			return "", err
		}
		h.Write([]byte("link:" + target))
	case d.Type().IsRegular():
		f, err := os.Open(p)
		if err != nil {
			return "", err
		}
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return "", err
		}
	default:
		return "", nil
	}
	return hex.EncodeToString(h.Sum(nil)[:8]), nil
}

// WriteRecord writes r as the task's record (RecordFile), with the
// digests of what it depends on now, and keeps it as t.Record.
func (t *Task) WriteRecord(r *Record) error {
	files, err := t.RecordDigests()
	if err != nil {
		return err
	}
	rec := *r
	rec.Format, rec.Report, rec.Files = RecordFormat, t.Tests.Report, files
	sort.Strings(rec.FailToPass)
	sort.Strings(rec.PassToPass)
	if rec.FailToPass == nil {
		rec.FailToPass = []string{}
	}
	if rec.PassToPass == nil {
		rec.PassToPass = []string{}
	}
	b, err := json.MarshalIndent(&rec, "", "  ")
	if err != nil {
		return err
	}
	tmp := t.RecordPath() + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write the test record of task %s: %w", t.ID, err)
	}
	if err := os.Rename(tmp, t.RecordPath()); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write the test record of task %s: %w", t.ID, err)
	}
	t.Record = &rec
	return nil
}

// loadRecord reads the task's record, if it has one, and refuses it when
// what it was recorded from has changed since, naming the files and, where
// the test files tell, the tests that changed.
func (t *Task) loadRecord() error {
	path := t.RecordPath()
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("load task %s: %w", t.ID, err)
	}
	var r Record
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return &FieldError{File: path, Msg: fmt.Sprintf("not a test record bench can read (%v); write it again with: %s", err, t.RecordCommand())}
	}
	if r.Format != RecordFormat {
		return &FieldError{File: path, Field: "format", Msg: fmt.Sprintf("expected %d, got %d; write it again with: %s", RecordFormat, r.Format, t.RecordCommand())}
	}
	if t.Tests.Report == "" {
		return &FieldError{File: path, Msg: fmt.Sprintf("task.toml sets no [tests] report, so its tests cannot be checked one by one: set report = %q (or another form) or remove the record", r.Report)}
	}
	if r.Report != t.Tests.Report {
		return &FieldError{File: path, Field: "report", Msg: fmt.Sprintf("recorded from a %q report, but task.toml now says %q; write it again with: %s", r.Report, t.Tests.Report, t.RecordCommand())}
	}
	now, err := t.RecordDigests()
	if err != nil {
		return err
	}
	if changed := diffDigests(r.Files, now); len(changed) > 0 {
		msg := "the recorded tests no longer match the task: "
		if names := t.staleTests(&r); names != "" {
			msg += names + "; "
		}
		msg += "changed since the record: " + strings.Join(changed, ", ") + "; refresh the record with: " + t.RecordCommand()
		return &FieldError{File: path, Msg: msg}
	}
	t.Record = &r
	return nil
}

// diffDigests names the files that differ between two digest sets.
func diffDigests(was, now map[string]string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(was)) {
		switch v, ok := now[k]; {
		case !ok:
			out = append(out, k+" (removed)")
		case v != was[k]:
			out = append(out, k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(now)) {
		if _, ok := was[k]; !ok {
			out = append(out, k+" (added)")
		}
	}
	const most = 8
	if len(out) > most {
		out = append(out[:most], fmt.Sprintf("and %d more", len(out)-most))
	}
	return out
}

// staleTests compares the recorded tests with the tests the task's files
// define now, where the report form lets them be found in the source (Go
// test functions, Python unittest methods), and words the difference:
// recorded tests that are gone (renamed or removed) and defined tests
// that the record lacks.
func (t *Task) staleTests(r *Record) string {
	defined, ok := t.definedTests(r)
	if !ok {
		return ""
	}
	recorded := map[string]bool{}
	for _, id := range r.Tests() {
		recorded[TopLevelName(r.Report, id)] = true
	}
	var gone, added []string
	for _, n := range slices.Sorted(maps.Keys(recorded)) {
		if !defined[n] {
			gone = append(gone, n)
		}
	}
	for _, n := range slices.Sorted(maps.Keys(defined)) {
		if !recorded[n] {
			added = append(added, n)
		}
	}
	var parts []string
	list := func(names []string) string {
		if len(names) > 5 {
			return strings.Join(names[:5], ", ") + fmt.Sprintf(" and %d more", len(names)-5)
		}
		return strings.Join(names, ", ")
	}
	if len(gone) > 0 {
		parts = append(parts, "recorded but no longer defined (renamed or removed): "+list(gone))
	}
	if len(added) > 0 {
		parts = append(parts, "defined but not recorded (added, or failing with the solution): "+list(added))
	}
	return strings.Join(parts, "; ")
}

// TopLevelName is the part of a recorded test id that the test files name:
// for Go, the test function (package and subtests dropped); for unittest,
// Class.method (module dropped); otherwise the id.
func TopLevelName(report, id string) string {
	switch report {
	case ReportGoTestJSON:
		_, name, _ := strings.Cut(id, "::")
		top, _, _ := strings.Cut(name, "/")
		return top
	case ReportUnittest:
		parts := strings.Split(id, ".")
		if len(parts) >= 2 {
			return strings.Join(parts[len(parts)-2:], ".")
		}
	}
	return id
}

var (
	goTestFunc   = regexp.MustCompile(`(?m)^func\s+(Test[^a-z]\w*|Test)\s*\(\s*\w+\s+\*testing\.T\s*\)`)
	pyClass      = regexp.MustCompile(`^class\s+(\w+)\s*[(:]`)
	pyTestMethod = regexp.MustCompile(`^\s+def\s+(test\w*)\s*\(`)
)

// definedTests finds the tests defined in the task's test files (tests/
// over workspace/, as in the scoring folder), as TopLevelName words them;
// false when the report form gives no way to find them in the source.
func (t *Task) definedTests(r *Record) (map[string]bool, bool) {
	var ext string
	switch t.Tests.Report {
	case ReportGoTestJSON:
		ext = "_test.go"
	case ReportUnittest:
		ext = ".py"
	default:
		return nil, false
	}
	// Python modules of the workspace count only when the record names
	// them: the hidden command may well not run the workspace's own tests.
	modules := map[string]bool{}
	for _, id := range r.Tests() {
		if parts := strings.Split(id, "."); len(parts) >= 3 {
			modules[strings.Join(parts[:len(parts)-2], ".")] = true
		}
	}
	files := map[string]string{} // relative path -> file, tests/ winning
	for _, sub := range []string{"workspace", "tests"} {
		root := filepath.Join(t.Dir, sub)
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error { //nolint:errcheck // a missing folder has no tests
			if err != nil || !d.Type().IsRegular() || !strings.HasSuffix(p, ext) {
				return nil
			}
			rel, _ := filepath.Rel(root, p)
			mod := strings.ReplaceAll(strings.TrimSuffix(filepath.ToSlash(rel), ".py"), "/", ".")
			if sub == "tests" || ext != ".py" || modules[mod] {
				files[rel] = p
			}
			return nil
		})
	}
	out := map[string]bool{}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		if t.Tests.Report == ReportGoTestJSON {
			for _, m := range goTestFunc.FindAllStringSubmatch(string(b), -1) {
				out[m[1]] = true
			}
			continue
		}
		class := ""
		for _, line := range strings.Split(string(b), "\n") {
			if m := pyClass.FindStringSubmatch(line); m != nil {
				class = m[1]
			} else if m := pyTestMethod.FindStringSubmatch(line); m != nil && class != "" {
				out[class+"."+m[1]] = true
			} else if line != "" && !strings.HasPrefix(line, " ") && !strings.HasPrefix(line, "\t") && !strings.HasPrefix(line, "#") && !strings.HasPrefix(line, "@") {
				class = ""
			}
		}
	}
	return out, true
}
