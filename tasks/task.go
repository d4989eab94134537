// Package tasks loads and validates benchmark tasks and suites.
//
// A task is a folder:
//
//	task.toml   what the agent is asked, limits, hidden-test command, MCP servers
//	workspace/  copied afresh for every attempt: the agent's whole world
//	tests/      hidden: copied into the attempt's copy only after the agent stops
//	solution/   the reference solution (solve.sh), checked by `bench validate`
//	data/       anything else (an MCP server's data), outside the workspace
//
// A suite is a folder of task folders. The format is documented in
// docs/tasks.md and versioned by the format field of task.toml.
package tasks

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// FormatVersion is the task format this package reads.
const FormatVersion = 1

// FileName is the name of a task's description file.
const FileName = "task.toml"

// Defaults for limits a task leaves unset.
const (
	DefaultMaxTurns    = 30
	DefaultMaxTokens   = 200_000
	DefaultWallTime    = 10 * time.Minute
	DefaultTestTimeout = 2 * time.Minute
)

// Task is one benchmark task, loaded and validated.
type Task struct {
	// ID is the task's folder name; it identifies the task in a suite and in the store.
	ID string
	// Dir is the absolute path of the task folder.
	Dir string
	// Format is the task format version the file declares.
	Format int
	// Instruction is what the agent is asked to do.
	Instruction string
	// Tags are free labels for filtering and reports.
	Tags []string
	// Limits bound an attempt.
	Limits Limits
	// Tests is the hidden test that scores an attempt.
	Tests Tests
	// Servers are the MCP servers this task attaches.
	Servers []Server
	// Environment is how the task's environment is prepared before its
	// first attempt.
	Environment Environment
	// Golden, when set, judges the task out of the agent's reach: its
	// result runs on hidden cases and bench compares the observations with
	// the expected ones (Expected).
	Golden *Golden
	// Check, when set, judges the state the agent left with a checker of
	// the task's own that runs none of the agent's code.
	Check *Check
	// Record is the record of the hidden tests that bench validate wrote
	// (RecordFile); nil when the task has none.
	Record *Record
	// Expected are a golden task's expected observations, recorded by
	// bench validate (ExpectedFile); nil when the task has none.
	Expected *Expected
	// Hash is a digest of every file of the task folder, so that a resumed
	// run can tell a task changed under it.
	Hash string

	// snaps keeps workspace/ and tests/ in memory once read (copy.go).
	snaps *snapshots
}

// Limits bound one attempt. Zero means "use the default".
type Limits struct {
	MaxTurns  int      `toml:"max_turns"`
	MaxTokens int      `toml:"max_tokens"`
	WallTime  Duration `toml:"wall_time"`
}

// Tests says how the hidden tests run and what they score. Command is run
// by /bin/sh in a fresh scoring folder: a new copy of workspace/, the
// agent's changes to the files that count as its result (Result), then
// tests/. The reward is 1 when it exits 0 and, with a Report, every test
// that the task's Record lists reports a pass.
type Tests struct {
	// Command is the shell command that runs the hidden tests.
	Command string `toml:"command"`
	// Timeout bounds the command (default 2 minutes).
	Timeout Duration `toml:"timeout"`
	// Report is the form in which the command reports each test's
	// outcome: ReportGoTestJSON, ReportJUnit, ReportUnittest, ReportTAP;
	// "" for none (the reward then rests on the exit status alone).
	Report string `toml:"report"`
	// ReportFile is the file a ReportJUnit command writes, relative to the
	// scoring folder.
	ReportFile string `toml:"report_file"`
	// Result are globs (MatchGlob's) of the files that count as the agent's
	// result; empty for the default rule (see Counts).
	Result []string `toml:"result"`
	// Canary, when false, plants no canary test beside the hidden tests
	// (evaluator: a test that must fail, against a forged report); for a
	// command that runs only part of its test modules. Default true.
	Canary *bool `toml:"canary"`
	// Env is the environment the tests get beyond bench's clean base
	// (PATH, LANG, HOME): the only way the operator's or the task's
	// settings reach them.
	Env map[string]string `toml:"env"`
}

// CanaryOr says whether a canary test is planted (the default).
func (t Tests) CanaryOr() bool { return t.Canary == nil || *t.Canary }

// The per-test report forms of Tests.Report.
const (
	// ReportGoTestJSON is `go test -json` on standard output.
	ReportGoTestJSON = "go-test-json"
	// ReportJUnit is a JUnit XML file (pytest --junitxml and most other
	// runners), at Tests.ReportFile.
	ReportJUnit = "junit"
	// ReportUnittest is the verbose output of Python's unittest (-v) on
	// standard error.
	ReportUnittest = "unittest"
	// ReportTAP is the Test Anything Protocol on standard output.
	ReportTAP = "tap"
)

// Environment says how a task's environment is prepared: once per task and
// toolchain, in the sandbox, before the first attempt (and by bench
// validate). The tool caches its tests need are warmed, then kept and
// shown to every attempt and scoring run through a private copy.
type Environment struct {
	// Setup is a shell command run once in a copy of workspace/, with the
	// environment's HOME, before the caches are warmed (for example
	// "go build ./... && go vet ./..."). Neither the hidden tests nor the
	// solution are there when it runs.
	Setup string `toml:"setup"`
	// Network lets Setup reach the network (to download modules); attempts
	// and hidden tests never get it from here.
	Network bool `toml:"network"`
	// Timeout bounds Setup and each warming step (default 10 minutes).
	Timeout Duration `toml:"timeout"`
}

// DefaultSetupTimeout bounds an environment's set-up step.
const DefaultSetupTimeout = 10 * time.Minute

// TimeoutOr returns the set-up timeout, with the default applied.
func (e Environment) TimeoutOr() time.Duration {
	if e.Timeout.Duration > 0 {
		return e.Timeout.Duration
	}
	return DefaultSetupTimeout
}

// Server declares an MCP server: stdio (Command, Args, Env) or Streamable
// HTTP (URL, Headers). Command, Args, Env values and URL may hold the
// placeholders {task} (the task folder), {workspace} (the attempt's
// workspace) and {data} (the task's data folder).
type Server struct {
	// Name is the operator-chosen name; the server's tools reach the model
	// as "<name>__<tool>".
	Name    string            `toml:"name"`
	Command string            `toml:"command"`
	Args    []string          `toml:"args"`
	Env     map[string]string `toml:"env"`
	URL     string            `toml:"url"`
	Headers map[string]string `toml:"headers"`
	// DefaultClass is the permission class of a tool that Classes does not
	// name; empty means such a tool is denied.
	DefaultClass string `toml:"default_class"`
	// Classes gives tools their permission class, by the server's own tool name.
	Classes map[string]string `toml:"classes"`
	// Tools, when set, is the allow-list of the server's tools offered.
	Tools []string `toml:"tools"`
	// CallTimeout bounds one tool call (default 30s).
	CallTimeout Duration `toml:"call_timeout"`
	// MaxCallTime, when set, lets a call that reports progress run past
	// CallTimeout: each progress notification grants CallTimeout again,
	// up to MaxCallTime in all. Unset, progress extends nothing.
	MaxCallTime Duration `toml:"max_call_time"`
	// ResourceClass is the permission class of the resource reader bench
	// offers for a server that declares resources ("<name>__read_resource");
	// empty means read.
	ResourceClass string `toml:"resource_class"`
	// Sandbox asks for the server process to be sandboxed where possible.
	Sandbox bool `toml:"sandbox"`
	// OAuth, when set, has bench authorize itself to a Streamable HTTP
	// server by OAuth 2.1 when the server asks (401).
	OAuth *OAuth `toml:"oauth"`
}

// The grants of OAuth.Grant.
const (
	GrantAuthorizationCode = "authorization_code"
	GrantClientCredentials = "client_credentials"
)

// OAuth is how bench authorizes itself to an HTTP server. Secrets are
// never written here: ClientSecretEnv names the environment variable
// that holds one.
type OAuth struct {
	// Grant is "authorization_code" (the default: PKCE, a person signs in
	// once per run unless the server grants at once) or
	// "client_credentials" (unattended; needs ClientID and ClientSecretEnv).
	Grant string `toml:"grant"`
	// ClientID is a client registered with the authorization server in
	// advance; empty: ClientMetadataURL, else dynamic registration.
	ClientID string `toml:"client_id"`
	// ClientSecretEnv names the environment variable holding the secret of
	// ClientID (a confidential client).
	ClientSecretEnv string `toml:"client_secret_env"`
	// ClientMetadataURL is an https:// client ID metadata document URL.
	ClientMetadataURL string `toml:"client_metadata_url"`
	// RedirectURL is where the browser comes back (default
	// http://127.0.0.1:8976/callback).
	RedirectURL string `toml:"redirect_url"`
}

// Duration is a time.Duration written as a Go duration string ("90s", "5m").
type Duration struct{ time.Duration }

// UnmarshalText parses a duration such as "90s" or "5m".
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := ParseDuration(string(b))
	if err != nil {
		return err
	}
	d.Duration = v
	return nil
}

// MarshalText writes the duration as a Go duration string.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.Duration.String()), nil }

// file is the on-disk shape of task.toml.
type file struct {
	Format      int         `toml:"format"`
	Instruction string      `toml:"instruction"`
	Tags        []string    `toml:"tags"`
	Limits      Limits      `toml:"limits"`
	Tests       Tests       `toml:"tests"`
	Servers     []Server    `toml:"servers"`
	Environment Environment `toml:"environment"`
	Golden      *Golden     `toml:"golden"`
	Check       *Check      `toml:"check"`
}

// FieldError is a problem with one field of a task file.
type FieldError struct {
	File  string // path of the file
	Field string // dotted field name, e.g. "limits.wall_time"
	Msg   string // what was expected
}

func (e *FieldError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("%s: field %s: %s", e.File, e.Field, e.Msg)
}

// Load reads and validates the task in dir, with its test record.
func Load(dir string) (*Task, error) { return load(dir, true) }

func load(dir string, checkRecord bool) (*Task, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("load task %s: %w", dir, err)
	}
	path := filepath.Join(abs, FileName)
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &FieldError{File: path, Msg: "no task.toml: a task folder needs one"}
		}
		return nil, fmt.Errorf("load task %s: %w", dir, err)
	}
	t, err := Parse(path, data)
	if err != nil {
		return nil, err
	}
	t.ID = filepath.Base(abs)
	t.Dir = abs
	t.snaps = &snapshots{}
	if fi, err := os.Stat(filepath.Join(abs, "workspace")); err != nil || !fi.IsDir() {
		return nil, &FieldError{File: path, Msg: "the task folder has no workspace/ folder (the agent's starting files; it may be empty)"}
	}
	for _, sub := range []string{"tests", "solution", "data"} {
		if fi, err := os.Stat(filepath.Join(abs, sub)); err == nil && !fi.IsDir() {
			return nil, &FieldError{File: path, Msg: sub + " must be a folder"}
		}
	}
	for _, sub := range []string{CasesFolder, CheckerFolder, ChecksFolder} {
		if fi, err := os.Stat(filepath.Join(abs, sub)); err == nil && !fi.IsDir() {
			return nil, &FieldError{File: path, Msg: sub + " must be a folder"}
		}
	}
	if t.Check != nil {
		if fi, err := os.Stat(t.ChecksDir()); err != nil || !fi.IsDir() {
			return nil, &FieldError{File: path, Field: "check", Msg: fmt.Sprintf("the task has no %s/ folder: the checker's files live there (an empty folder for a command of the system alone)", ChecksFolder)}
		}
	}
	if t.Golden != nil && t.Golden.CompareOr() == CompareChecker {
		if fi, err := os.Stat(t.CheckerDir()); err != nil || !fi.IsDir() {
			return nil, &FieldError{File: path, Field: "golden.checker", Msg: fmt.Sprintf("the task has no %s/ folder: the checker's files live there", CheckerFolder)}
		}
	}
	if t.Hash, err = hashDir(abs, RecordFile, ExpectedFile); err != nil {
		return nil, fmt.Errorf("load task %s: hash: %w", dir, err)
	}
	if t.Golden != nil {
		if _, err := t.Cases(); err != nil {
			return nil, err
		}
	}
	if err := t.loadRecord(); err != nil && checkRecord {
		return nil, err
	}
	if t.Golden != nil {
		if err := t.loadExpected(); err != nil && checkRecord {
			return nil, err
		}
	}
	return t, nil
}

// Parse parses and validates the contents of a task.toml. path is used in
// error messages only.
func Parse(path string, data []byte) (*Task, error) {
	var f file
	md, err := toml.Decode(string(data), &f)
	if err != nil {
		return nil, DecodeError(path, string(data), err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		return nil, UnknownField(path, string(data), &f, und[0])
	}
	if err := MapFieldError(path, string(data), &f); err != nil {
		return nil, err
	}
	if !md.IsDefined("format") {
		return nil, &FieldError{File: path, Field: "format", Msg: fmt.Sprintf("missing: set format = %d", FormatVersion)}
	}
	if f.Format != FormatVersion {
		return nil, &FieldError{File: path, Field: "format", Msg: fmt.Sprintf("expected %d, got %d", FormatVersion, f.Format)}
	}
	if strings.TrimSpace(f.Instruction) == "" {
		return nil, &FieldError{File: path, Field: "instruction", Msg: "missing: the text the agent is asked"}
	}
	if strings.TrimSpace(f.Tests.Command) == "" && f.Golden == nil && f.Check == nil {
		return nil, &FieldError{File: path, Field: "tests.command", Msg: "missing: the shell command that runs the hidden tests (exit 0 = pass), or a [golden] or [check] table that judges the result out of the agent's reach"}
	}
	if strings.TrimSpace(f.Tests.Command) == "" && (f.Tests.Report != "" || f.Tests.Canary != nil || f.Tests.Timeout.Duration != 0) {
		return nil, &FieldError{File: path, Field: "tests.command", Msg: "missing: tests.report, tests.canary and tests.timeout describe a test command, and there is none"}
	}
	if f.Golden != nil {
		if err := f.Golden.validate(path); err != nil {
			return nil, err
		}
	}
	if f.Check != nil {
		if err := f.Check.validate(path); err != nil {
			return nil, err
		}
	}
	if field, msg := f.Limits.Check(); field != "" {
		return nil, &FieldError{File: path, Field: "limits." + field, Msg: msg}
	}
	if err := f.Tests.validate(path); err != nil {
		return nil, err
	}
	if err := ValidateServers(path, "servers", f.Servers); err != nil {
		return nil, err
	}
	return &Task{
		Format:      f.Format,
		Instruction: f.Instruction,
		Tags:        f.Tags,
		Limits:      f.Limits,
		Tests:       f.Tests,
		Servers:     f.Servers,
		Environment: f.Environment,
		Golden:      f.Golden,
		Check:       f.Check,
	}, nil
}

// ValidateServers checks MCP server declarations; file and field name where
// they were declared, for the error message.
func ValidateServers(file, field string, servers []Server) error {
	seen := map[string]bool{}
	for i, s := range servers {
		f := fmt.Sprintf("%s[%d]", field, i)
		switch {
		case s.Name == "":
			return &FieldError{File: file, Field: f + ".name", Msg: "missing: every server needs a name"}
		case strings.Contains(s.Name, "__") || strings.ContainsAny(s.Name, " \t/"):
			return &FieldError{File: file, Field: f + ".name", Msg: fmt.Sprintf("%q: expected letters, digits, '-' or '_' (no '__', no spaces)", s.Name)}
		case seen[s.Name]:
			return &FieldError{File: file, Field: f + ".name", Msg: fmt.Sprintf("server %q declared twice", s.Name)}
		case s.Command == "" && s.URL == "":
			return &FieldError{File: file, Field: f, Msg: "expected command (stdio) or url (Streamable HTTP)"}
		case s.Command != "" && s.URL != "":
			return &FieldError{File: file, Field: f, Msg: "expected command or url, not both"}
		case s.OAuth != nil && s.URL == "":
			return &FieldError{File: file, Field: f + ".oauth", Msg: "OAuth is for a server with a url (Streamable HTTP), not a command"}
		case s.OAuth != nil && s.OAuth.Grant != "" && s.OAuth.Grant != GrantAuthorizationCode && s.OAuth.Grant != GrantClientCredentials:
			return &FieldError{File: file, Field: f + ".oauth.grant", Msg: fmt.Sprintf("%q: expected %s or %s", s.OAuth.Grant, GrantAuthorizationCode, GrantClientCredentials)}
		case s.OAuth != nil && s.OAuth.Grant == GrantClientCredentials && (s.OAuth.ClientID == "" || s.OAuth.ClientSecretEnv == ""):
			return &FieldError{File: file, Field: f + ".oauth", Msg: "the client_credentials grant needs client_id and client_secret_env"}
		case s.OAuth != nil && s.OAuth.ClientMetadataURL != "" && !strings.HasPrefix(s.OAuth.ClientMetadataURL, "https://"):
			return &FieldError{File: file, Field: f + ".oauth.client_metadata_url", Msg: "expected an https:// URL"}
		case s.MaxCallTime.Duration < 0:
			return &FieldError{File: file, Field: f + ".max_call_time", Msg: "expected a positive duration"}
		case s.MaxCallTime.Duration > 0 && s.MaxCallTime.Duration < max(s.CallTimeout.Duration, time.Nanosecond):
			return &FieldError{File: file, Field: f + ".max_call_time", Msg: fmt.Sprintf("%s is shorter than call_timeout (%s): it would cut calls that report no progress", s.MaxCallTime.Duration, s.CallTimeout.Duration)}
		}
		if field, ph := checkPlaceholders(s); ph != "" {
			return &FieldError{File: file, Field: f + "." + field, Msg: fmt.Sprintf("unknown placeholder %s (bench fills %s)", ph, strings.Join(placeholderNames(), ", "))}
		}
		seen[s.Name] = true
	}
	return nil
}

// TOMLError turns an error of the TOML decoder into a FieldError that names
// the file, the field (when the decoder knows it) and the line.
func TOMLError(file string, err error) error {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		msg := typeMessage(pe.Message)
		if pe.Position.Line > 0 {
			msg = fmt.Sprintf("line %d: %s", pe.Position.Line, pe.Message)
		}
		field := pe.LastKey
		if field == "" {
			field = keyFromMessage(pe.Message)
		}
		return &FieldError{File: file, Field: field, Msg: msg}
	}
	msg := typeMessage(strings.TrimPrefix(err.Error(), "toml: "))
	// "line 3 (last key "tags"): ..." names the field already given.
	if field := keyFromMessage(msg); field != "" {
		msg = strings.Replace(msg, fmt.Sprintf(" (last key %q)", field), "", 1)
		return &FieldError{File: file, Field: field, Msg: msg}
	}
	return &FieldError{File: file, Msg: msg}
}

func keyFromMessage(msg string) string {
	// BurntSushi/toml reports type errors as "toml: line N (last key "a.b"): ...".
	if i := strings.Index(msg, "last key \""); i >= 0 {
		rest := msg[i+len("last key \""):]
		if j := strings.Index(rest, "\""); j >= 0 {
			return rest[:j]
		}
	}
	return ""
}

// MaxTurnsOr returns the turn limit, with the default applied.
func (l Limits) MaxTurnsOr() int {
	if l.MaxTurns > 0 {
		return l.MaxTurns
	}
	return DefaultMaxTurns
}

// MaxTokensOr returns the token limit, with the default applied.
func (l Limits) MaxTokensOr() int {
	if l.MaxTokens > 0 {
		return l.MaxTokens
	}
	return DefaultMaxTokens
}

// WallTimeOr returns the wall-time limit, with the default applied.
func (l Limits) WallTimeOr() time.Duration {
	if l.WallTime.Duration > 0 {
		return l.WallTime.Duration
	}
	return DefaultWallTime
}

// TimeoutOr returns the hidden-test timeout, with the default applied.
func (t Tests) TimeoutOr() time.Duration {
	if t.Timeout.Duration > 0 {
		return t.Timeout.Duration
	}
	return DefaultTestTimeout
}

// WorkspaceDir is the task's starting workspace.
func (t *Task) WorkspaceDir() string { return filepath.Join(t.Dir, "workspace") }

// TestsDir is the task's hidden-tests folder.
func (t *Task) TestsDir() string { return filepath.Join(t.Dir, "tests") }

// SolutionDir is the task's reference-solution folder.
func (t *Task) SolutionDir() string { return filepath.Join(t.Dir, "solution") }

// DataDir is the task's data folder (outside the workspace).
func (t *Task) DataDir() string { return filepath.Join(t.Dir, "data") }

// hashDir digests every regular file and symlink under dir, by relative
// path, but the files named in skip (relative paths).
func hashDir(dir string, skip ...string) (string, error) {
	h := sha256.New()
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "__pycache__" || d.Name() == ".pytest_cache" {
				return filepath.SkipDir
			}
			return nil
		}
		if rel, _ := filepath.Rel(dir, p); slices.Contains(skip, filepath.ToSlash(rel)) {
			return nil
		}
		paths = append(paths, p)
		return nil
	})
	if err != nil {
		return "", err
	}
	sort.Strings(paths)
	for _, p := range paths {
		rel, _ := filepath.Rel(dir, p)
		fmt.Fprintf(h, "%s\x00", filepath.ToSlash(rel))
		fi, err := os.Lstat(p)
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(p)
			if err != nil {
				return "", err
			}
			fmt.Fprintf(h, "link:%s\x00", target)
			continue
		}
		if !fi.Mode().IsRegular() {
			continue
		}
		f, err := os.Open(p)
		if err != nil {
			return "", err
		}
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return "", err
		}
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// ParseServer parses a server declaration written as the body of a TOML
// inline table, the form of bench's repeatable --server flag:
//
//	name = "issues", command = "{bench}", args = ["mcp", "serve", "issues", "--file", "/srv/issues.json"], default_class = "read"
//
// The declaration is checked as one in a file would be.
func ParseServer(s string) (Server, error) {
	body := strings.TrimSpace(s)
	// The declaration may come wrapped in its own braces; it may also end
	// with an inline table of its own (classes = {...}), whose brace is
	// not a wrapper's.
	doc := "s = {" + body + "}"
	if strings.HasPrefix(body, "{") {
		doc = "s = " + body
	}
	var v struct {
		S Server `toml:"s"`
	}
	md, err := toml.Decode(doc, &v)
	if err != nil {
		// The table is ours, not the user's: its key is not theirs to see.
		fe := TOMLError("--server", err).(*FieldError)
		fe.Field = strings.TrimPrefix(strings.TrimPrefix(fe.Field, "s"), ".")
		fe.Msg = strings.TrimPrefix(strings.ReplaceAll(fe.Msg, `"s.`, `"`), "line 1: ")
		return Server{}, fe
	}
	if und := md.Undecoded(); len(und) > 0 {
		return Server{}, UnknownField("--server", "", &Server{}, und[0][1:])
	}
	if err := MapFieldError("--server", doc, &v); err != nil {
		fe := err.(*FieldError)
		fe.Field = strings.TrimPrefix(fe.Field, "s.")
		return Server{}, fe
	}
	if err := ValidateServers("--server", "server", []Server{v.S}); err != nil {
		return Server{}, err
	}
	return v.S, nil
}
