package tasks_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchhq/bench/tasks"
)

const good = `format = 1
instruction = "Fix the bug."
tags = ["python"]
[limits]
max_turns = 12
wall_time = "90s"
[tests]
command = "python3 -m unittest"
timeout = "30s"
`

// writeTask makes a task folder with the given task.toml; workspace/ is
// created unless noWorkspace.
func writeTask(t *testing.T, toml string, noWorkspace bool) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "my-task")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "task.toml"), []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	if !noWorkspace {
		if err := os.MkdirAll(filepath.Join(dir, "workspace"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestLoadGoodTask(t *testing.T) {
	task, err := tasks.Load(writeTask(t, good, false))
	if err != nil {
		t.Fatal(err)
	}
	if task.ID != "my-task" || task.Limits.MaxTurnsOr() != 12 || task.Limits.WallTimeOr() != 90*time.Second ||
		task.Tests.TimeoutOr() != 30*time.Second || task.Limits.MaxTokensOr() != tasks.DefaultMaxTokens {
		t.Errorf("loaded %+v", task)
	}
	if task.Hash == "" {
		t.Error("no hash")
	}
}

func TestBadTaskFilesNameFileAndField(t *testing.T) {
	tests := []struct {
		name        string
		toml        string
		noWorkspace bool
		field       string
		want        string
	}{
		{"unknown field", "colour = \"red\"\n" + good, false, "colour", "unknown field"},
		{"unknown nested field", strings.Replace(good, "max_turns", "max_turn", 1), false, "limits.max_turn", "unknown field"},
		{"missing test command", strings.Replace(good, `command = "python3 -m unittest"`, "", 1), false, "tests.command", "missing"},
		{"missing instruction", strings.Replace(good, `instruction = "Fix the bug."`, "", 1), false, "instruction", "missing"},
		{"bad duration", strings.Replace(good, `"90s"`, `"ninety seconds"`, 1), false, "limits.wall_time", "duration"},
		{"wrong type", strings.Replace(good, "max_turns = 12", `max_turns = "twelve"`, 1), false, "limits.max_turns", ""},
		{"missing format", strings.Replace(good, "format = 1", "", 1), false, "format", "missing"},
		{"future format", strings.Replace(good, "format = 1", "format = 9", 1), false, "format", "expected 1"},
		{"missing workspace", good, true, "", "workspace"},
		{"server without command", good + "[[servers]]\nname = \"x\"\n", false, "servers[0]", "command"},
		{"server name with __", good + "[[servers]]\nname = \"a__b\"\ncommand = \"x\"\n", false, "servers[0].name", "__"},
		{"not toml", "this is = = not toml", false, "", "line 1"},
		{"golden without a command", good + "[golden]\ncompare = \"json\"\n", false, "golden.command", "missing"},
		{"golden with both commands", good + "[golden]\ncommand = \"a\"\neach = \"b\"\n", false, "golden.each", "not both"},
		{"golden unknown comparison", good + "[golden]\ncommand = \"a\"\ncompare = \"fuzzy\"\n", false, "golden.compare", "expected one of"},
		{"golden tolerance too wide", good + "[golden]\ncommand = \"a\"\ncompare = \"numbers\"\ntolerance = 0.5\n", false, "golden.tolerance", "below 0.1"},
		{"golden tolerance on lines", good + "[golden]\ncommand = \"a\"\ntolerance = 1e-9\n", false, "golden.tolerance", "only compare"},
		{"golden checker missing", good + "[golden]\ncommand = \"a\"\ncompare = \"checker\"\n", false, "golden.checker", "missing"},
		{"golden without cases", good + "[golden]\ncommand = \"a\"\n", false, "golden", "cases/"},
		{"check without a command", good + "[check]\nreport = \"tap\"\n", false, "check.command", "missing"},
		{"check without checks/", good + "[check]\ncommand = \"true\"\n", false, "check", "checks/"},
		{"check bad report", good + "[check]\ncommand = \"true\"\nreport = \"xml\"\n", false, "check.report", "expected"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeTask(t, tt.toml, tt.noWorkspace)
			_, err := tasks.Load(dir)
			if err == nil {
				t.Fatal("loaded a bad task")
			}
			var fe *tasks.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("err %T %v, want a *tasks.FieldError", err, err)
			}
			msg := err.Error()
			if !strings.Contains(msg, filepath.Join(dir, "task.toml")) {
				t.Errorf("error %q does not name the file", msg)
			}
			if fe.Field != tt.field {
				t.Errorf("field = %q, want %q (error %q)", fe.Field, tt.field, msg)
			}
			if !strings.Contains(msg, tt.want) {
				t.Errorf("error %q does not say %q", msg, tt.want)
			}
		})
	}
}

func TestSuiteLoadsEveryTaskOrFails(t *testing.T) {
	root := t.TempDir()
	for _, id := range []string{"b-task", "a-task"} {
		d := filepath.Join(root, id)
		os.MkdirAll(filepath.Join(d, "workspace"), 0o755)
		os.WriteFile(filepath.Join(d, "task.toml"), []byte(good), 0o644)
	}
	os.MkdirAll(filepath.Join(root, "not-a-task"), 0o755)
	s, err := tasks.LoadSuite(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Tasks) != 2 || s.Tasks[0].ID != "a-task" {
		t.Errorf("tasks %v, want a-task, b-task", s.Tasks)
	}
	os.WriteFile(filepath.Join(root, "b-task", "task.toml"), []byte(good+"oops = 1\n"), 0o644)
	if _, err := tasks.LoadSuite(root); err == nil || !strings.Contains(err.Error(), "b-task") {
		t.Errorf("suite with a bad task: err = %v, want it to name b-task", err)
	}
	if _, err := tasks.LoadSuite(filepath.Join(root, "nope")); err == nil || !strings.Contains(err.Error(), "no such folder") {
		t.Errorf("missing suite: err = %v", err)
	}
}

func TestExampleSuiteLoads(t *testing.T) {
	s, err := tasks.LoadSuite("suites/examples")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Tasks) < 8 {
		t.Errorf("example suite has %d tasks, want at least 8", len(s.Tasks))
	}
}

func TestCopyTestsReplacesPlantedFiles(t *testing.T) {
	dir := writeTask(t, good, false)
	os.MkdirAll(filepath.Join(dir, "tests"), 0o755)
	os.WriteFile(filepath.Join(dir, "tests", "test_x.py"), []byte("real"), 0o644)
	task, err := tasks.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	outside := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(outside, []byte("keep"), 0o644)
	// an agent planted a symlink where a hidden test will land
	if err := os.Symlink(outside, filepath.Join(ws, "test_x.py")); err != nil {
		t.Fatal(err)
	}
	if err := task.CopyTests(ws); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "test_x.py")); string(b) != "real" {
		t.Errorf("hidden test content %q, want the real one", b)
	}
	if b, _ := os.ReadFile(outside); string(b) != "keep" {
		t.Errorf("copy wrote through the planted symlink: %q", b)
	}
}

func TestCopyTestsClearsWhatStandsInTheWay(t *testing.T) {
	dir := writeTask(t, good, false)
	os.MkdirAll(filepath.Join(dir, "tests", "helpers"), 0o755)
	os.WriteFile(filepath.Join(dir, "tests", "test_x.py"), []byte("real"), 0o644)
	os.WriteFile(filepath.Join(dir, "tests", "helpers", "h.py"), []byte("helper"), 0o644)
	task, err := tasks.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	outside := t.TempDir()
	// a folder where a hidden test file goes, and a link to a folder outside
	// where a hidden folder goes
	os.MkdirAll(filepath.Join(ws, "test_x.py", "x"), 0o755)
	if err := os.Symlink(outside, filepath.Join(ws, "helpers")); err != nil {
		t.Fatal(err)
	}
	if err := task.CopyTests(ws); err != nil {
		t.Fatalf("copy: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "test_x.py")); string(b) != "real" {
		t.Errorf("hidden test %q, want the real one", b)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "helpers", "h.py")); string(b) != "helper" {
		t.Errorf("hidden helper %q, want the real one", b)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("the copy wrote outside the workspace through a planted link: %v", entries)
	}
}

func TestParseServer(t *testing.T) {
	tests := []struct {
		in, wantErr string
	}{
		{`name = "issues", command = "{bench}", args = ["mcp", "serve", "issues"], classes = { list_issues = "read" }, call_timeout = "5s"`, ""},
		{`{name = "web", url = "http://127.0.0.1:9/mcp", default_class = "network"}`, ""},
		{`name = "x"`, "expected command"},
		{`name = "x", command = "y", colour = "red"`, "colour"},
		{`name = "x", command = "y", call_timeout = "soon"`, "call_timeout"},
		{`name = "x" command`, "--server"},
		// An inline table last: its closing brace is not a wrapper's.
		{`name="x", command="true", classes = {a = "read"}`, ""},
		{`name="x", command="true", env = {A = "1"}`, ""},
		{`{name="x", command="true", env = {A = "1"}}`, ""},
	}
	for _, tt := range tests {
		s, err := tasks.ParseServer(tt.in)
		if tt.wantErr == "" {
			if err != nil || s.Name == "" {
				t.Errorf("%s: %+v, %v", tt.in, s, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("%s: err = %v, want it to say %q", tt.in, err, tt.wantErr)
		}
		if err != nil && strings.Contains(err.Error(), "s.") {
			t.Errorf("%s: err = %v names the parser's own table s", tt.in, err)
		}
	}
	s, err := tasks.ParseServer(`name="x", command="true", classes = {a = "read"}`)
	if err != nil || s.Classes["a"] != "read" {
		t.Errorf("classes last: %+v, %v", s, err)
	}
}

// A server declaration's OAuth and progress settings are checked, naming
// the field.
func TestValidateServerOAuthAndTimes(t *testing.T) {
	for _, tt := range []struct {
		srv  tasks.Server
		want string
	}{
		{tasks.Server{Name: "a", Command: "x", OAuth: &tasks.OAuth{}}, "servers[0].oauth: OAuth is for a server with a url"},
		{tasks.Server{Name: "a", URL: "http://h", OAuth: &tasks.OAuth{Grant: "password"}}, `servers[0].oauth.grant: "password": expected authorization_code or client_credentials`},
		{tasks.Server{Name: "a", URL: "http://h", OAuth: &tasks.OAuth{Grant: tasks.GrantClientCredentials, ClientID: "c"}}, "needs client_id and client_secret_env"},
		{tasks.Server{Name: "a", URL: "http://h", OAuth: &tasks.OAuth{ClientMetadataURL: "http://h/c.json"}}, "client_metadata_url: expected an https:// URL"},
		{tasks.Server{Name: "a", Command: "x", CallTimeout: tasks.Duration{10 * time.Second}, MaxCallTime: tasks.Duration{5 * time.Second}}, "max_call_time: 5s is shorter than call_timeout (10s)"},
		{tasks.Server{Name: "a", Command: "x", CallTimeout: tasks.Duration{10 * time.Second}, MaxCallTime: tasks.Duration{time.Minute}}, ""},
		{tasks.Server{Name: "a", URL: "http://h", OAuth: &tasks.OAuth{Grant: tasks.GrantClientCredentials, ClientID: "c", ClientSecretEnv: "S"}}, ""},
	} {
		err := tasks.ValidateServers("task.toml", "servers", []tasks.Server{tt.srv})
		if (err == nil) != (tt.want == "") || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%+v: %v, want %q", tt.srv, err, tt.want)
		}
	}
}
