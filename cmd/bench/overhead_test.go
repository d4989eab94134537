package main

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/agent/mcp"
	"github.com/benchhq/bench/internal/ollamatest"
	"github.com/benchhq/bench/internal/openaitest"
	"github.com/benchhq/bench/results"
	"github.com/benchhq/bench/servers/issuetracker"
	"github.com/benchhq/bench/tasks"
)

// overheadCmd runs `bench overhead ARGS` in-process as Main would, and
// returns its exit status, stdout and stderr.
func overheadCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := exitCode(cmdOverhead(context.Background(), args, &out, &errb), &errb)
	return code, out.String(), errb.String()
}

// toolWords is what tools cost under the fake server's tokenizer, summed.
func toolWords(t *testing.T, tools ...agent.Tool) int {
	t.Helper()
	n := 0
	for _, tool := range tools {
		def, err := agent.OllamaTool(tool.Spec())
		if err != nil {
			t.Fatal(err)
		}
		n += ollamatest.ToolWords(def)
	}
	return n
}

func testBuiltins(t *testing.T) []agent.Tool {
	t.Helper()
	ws, err := agent.NewWorkspace(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return agent.Builtins(ws, agent.BuiltinOptions{})
}

// tableRow returns the fields after label on the line of stdout that
// starts with it (indent ignored).
func tableRow(t *testing.T, out, label string) []string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(l), label+" "); ok && !strings.ContainsAny(rest, "█▏▎▍▌▋▊▉") {
			return strings.Fields(rest)
		}
	}
	t.Fatalf("no table row %q in:\n%s", label, out)
	return nil
}

func comma(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func TestOverheadBuiltins(t *testing.T) {
	srv := ollamatest.New(ollamatest.Turns())
	defer srv.Close()
	code, stdout, stderr := overheadCmd(t, "--host", srv.URL, "--model", "fake", "--num-ctx", "32768", "--turns", "5")
	if code != 0 {
		t.Fatalf("exit %d\nstderr: %s", code, stderr)
	}
	tools := testBuiltins(t)
	sum := toolWords(t, tools...)
	if got, want := tableRow(t, stdout, "builtin (6 tools)")[:2], []string{comma(sum), fmt.Sprintf("%.1f%%", 100*float64(sum)/32768)}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("builtin row starts %q, want %q:\n%s", got, want, stdout)
	}
	for _, tool := range tools {
		n := toolWords(t, tool)
		row := tableRow(t, stdout, tool.Spec().Name)
		if row[0] != comma(n) || row[2] != comma(5*n) {
			t.Errorf("%s: row %q, want %d tokens and %d per attempt", tool.Spec().Name, row, n, 5*n)
		}
	}
	for _, want := range []string{"arm default: model fake, num_ctx 32,768", "no tools (baseline): 5 prompt tokens", "PER ATTEMPT  TOKENS × 5 turns", "█"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "measuring arm default: 6 tools") {
		t.Errorf("stderr: %q", stderr)
	}
	if n := len(srv.Requests()); n != 8 {
		t.Errorf("%d requests, want 8 (no tools, the built-ins, each of 6 tools)", n)
	}
}

func TestOverheadToolsFlag(t *testing.T) {
	srv := ollamatest.New(ollamatest.Turns())
	defer srv.Close()
	code, stdout, stderr := overheadCmd(t, "--host", srv.URL, "--model", "fake", "--tools", "search, read_file")
	if code != 0 {
		t.Fatalf("exit %d\nstderr: %s", code, stderr)
	}
	if !strings.Contains(stdout, "builtin (2 tools)") || strings.Contains(stdout, "run_command") {
		t.Errorf("--tools not applied:\n%s", stdout)
	}
	if !strings.Contains(stdout, "num_ctx 8,192") || !strings.Contains(stdout, "× 10 turns (an estimate: set it with --turns)") {
		t.Errorf("defaults (num_ctx 8192, 10 turns) not shown:\n%s", stdout)
	}
	for _, req := range srv.Requests() {
		if req.Options["num_ctx"] != 8192.0 || req.Options["num_predict"] != 1.0 {
			t.Fatalf("options %v", req.Options)
		}
	}
}

// issuesHTTP serves the project's issue tracker over Streamable HTTP.
func issuesHTTP(t *testing.T) *httptest.Server {
	t.Helper()
	tr, err := issuetracker.Parse([]byte(`{"issues": [{"id": 1, "title": "Crash", "state": "open"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return issuetracker.NewServer(tr) },
		&sdk.StreamableHTTPOptions{JSONResponse: true}))
	t.Cleanup(ts.Close)
	return ts
}

func TestOverheadRunFileArmsServerAndSVG(t *testing.T) {
	model := ollamatest.New(ollamatest.Turns())
	defer model.Close()
	issues := issuesHTTP(t)
	dir := t.TempDir()
	runFile := filepath.Join(dir, "run.toml")
	os.WriteFile(runFile, []byte(fmt.Sprintf(`model = "fake"
[options]
num_ctx = 16384

[[servers]]
name = "issues"
url = %q
default_class = "read"

[[arms]]
name = "small"
tools = ["read_file"]

[[arms]]
name = "full"
`, issues.URL)), 0o644)
	svg := filepath.Join(dir, "chart.svg")
	code, stdout, stderr := overheadCmd(t, "--host", model.URL, "--config", runFile, "--svg", svg)
	if code != 0 {
		t.Fatalf("exit %d\nstderr: %s", code, stderr)
	}

	// What the server's tools cost, connected the same way.
	conn, err := mcp.Connect(context.Background(), tasks.Server{Name: "issues", URL: issues.URL, DefaultClass: "read"}, mcp.Vars{}, mcp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	server := toolWords(t, conn.Tools()...)
	conn.Close()
	builtins := testBuiltins(t)
	readFile := toolWords(t, builtins[0])
	all := toolWords(t, builtins...)

	arms := strings.Split(stdout, "arm full:")
	if len(arms) != 2 || !strings.Contains(arms[0], "arm small:") {
		t.Fatalf("want the small arm, then the full one:\n%s", stdout)
	}
	if got := tableRow(t, arms[0], "issues (3 tools)")[0]; got != comma(server) {
		t.Errorf("issues server: %s tokens, want %d", got, server)
	}
	if got := tableRow(t, arms[0], "all tools (4)")[0]; got != comma(server+readFile) {
		t.Errorf("small arm, all tools: %s, want %d", got, server+readFile)
	}
	if got := tableRow(t, arms[1], "all tools (9)")[0]; got != comma(server+all) {
		t.Errorf("full arm, all tools: %s, want %d", got, server+all)
	}
	if !strings.Contains(arms[0], "issues__list_issues") {
		t.Errorf("the server's tools are not listed:\n%s", arms[0])
	}
	if !strings.Contains(stderr, "chart written to "+svg) {
		t.Errorf("stderr: %s", stderr)
	}

	data, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	bars := 0
	d := xml.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("chart is not XML: %v", err)
		}
		if e, ok := tok.(xml.StartElement); ok && e.Name.Local == "rect" {
			for _, a := range e.Attr {
				if a.Name.Local == "class" && a.Value == "bar" {
					bars++
				}
			}
		}
	}
	// small: builtin + 1 tool, issues + 3 tools, all; full: builtin + 6, issues + 3, all.
	if bars != 7+12 {
		t.Errorf("%d bars in the chart, want 19", bars)
	}
	if !bytes.Contains(data, []byte("num_ctx 16,384")) || !bytes.Contains(data, []byte("model fake")) {
		t.Errorf("the chart's title lacks the model or num_ctx")
	}
}

func TestOverheadTurnsOfAStoredRun(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "bench.db")
	store, err := results.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	run := &results.Run{ID: "r1", Model: "fake", AttemptsPerTask: 2,
		Arms:  []results.Arm{{Name: "default"}},
		Tasks: []results.TaskInfo{{ID: "t1"}}}
	if err := store.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	for i, n := range []int{2, 5} {
		tr := &agent.Trajectory{Stop: agent.StopAnswered}
		for j := range n {
			tr.Turns = append(tr.Turns, agent.Turn{Index: j, PromptTokens: 100})
		}
		zero := 0
		a := &results.Attempt{RunID: "r1", Key: results.AttemptKey{Arm: "default", Task: "t1", Index: i},
			Status: results.StatusFinished, Reward: &zero, Trajectory: tr, StartedAt: time.Now(), FinishedAt: time.Now(), Tries: 1}
		if _, err := store.SaveAttempt(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	store.Close()

	srv := ollamatest.New(ollamatest.Turns())
	defer srv.Close()
	code, stdout, stderr := overheadCmd(t, "--host", srv.URL, "--model", "fake", "--tools", "search", "--db", db, "--run", "r1")
	if code != 0 {
		t.Fatalf("exit %d\nstderr: %s", code, stderr)
	}
	if !strings.Contains(stdout, "TOKENS × 3.5 turns (mean of run r1, 2 attempts)") {
		t.Errorf("turns not taken from the run:\n%s", stdout)
	}
	n := toolWords(t, testBuiltins(t)[4])
	if row := tableRow(t, stdout, "search"); row[2] != comma(int(float64(n)*3.5+0.5)) {
		t.Errorf("search row %q, want %d × 3.5 per attempt", row, n)
	}

	code, _, stderr = overheadCmd(t, "--host", srv.URL, "--model", "fake", "--db", db, "--run", "r2")
	if code != 2 || !strings.Contains(stderr, "no such run") {
		t.Errorf("missing run: exit %d, %s", code, stderr)
	}
}

func TestOverheadBadInput(t *testing.T) {
	dir := t.TempDir()
	twoArms := filepath.Join(dir, "arms.toml")
	os.WriteFile(twoArms, []byte("model = \"m\"\n[[arms]]\nname = \"a\"\n[[arms]]\nname = \"b\"\ntools = [\"nope\"]\n"), 0o644)
	needsTask := filepath.Join(dir, "task-server.toml")
	os.WriteFile(needsTask, []byte("model = \"m\"\n[[servers]]\nname = \"issues\"\ncommand = \"{bench}\"\nargs = [\"--file\", \"{data}/issues.json\"]\n"), 0o644)
	badFile := filepath.Join(dir, "bad.toml")
	os.WriteFile(badFile, []byte("model = \"m\"\nturns = 3\n"), 0o644)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no model", nil, "--model is required"},
		{"argument", []string{"--model", "m", "extra"}, `unexpected argument "extra"`},
		{"unknown flag", []string{"--model", "m", "--turn", "3"}, "turn"},
		{"turns and run", []string{"--model", "m", "--turns", "3", "--run", "r"}, "--turns and --run conflict"},
		{"db without run", []string{"--model", "m", "--db", "x.db"}, "--db is read only with --run"},
		{"bad turns", []string{"--model", "m", "--turns", "0"}, "--turns: expected a positive number"},
		{"bad num-ctx", []string{"--model", "m", "--num-ctx", "-5"}, "--num-ctx: expected a positive number"},
		{"bad width", []string{"--model", "m", "--width", "0"}, "--width"},
		{"unknown tool", []string{"--model", "m", "--tools", "read_file,grep"}, `no built-in tool "grep"`},
		{"svg folder", []string{"--model", "m", "--svg", filepath.Join(dir, "nope", "c.svg")}, "--svg"},
		{"run db missing", []string{"--model", "m", "--run", "r1", "--db", filepath.Join(dir, "none.db")}, "no such file"},
		{"bad host", []string{"--model", "m", "--host", "nohost:port"}, "--host"},
		{"tools with arms", []string{"--config", twoArms, "--tools", "search"}, "--tools conflicts"},
		{"arm's unknown tool", []string{"--config", twoArms}, `arm b: tools: no built-in tool "nope"`},
		{"unknown arm", []string{"--config", twoArms, "--arm", "c"}, `no arm "c" (the arms are: a, b)`},
		{"server needs a task", []string{"--config", needsTask}, "uses {data}"},
		{"bad run file", []string{"--config", badFile}, "turns"},
		{"not a task", []string{"--model", "m", "--task", dir}, "not a task folder"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := overheadCmd(t, tt.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2 (stderr %q)", code, stderr)
			}
			if !strings.Contains(stderr, tt.want) {
				t.Errorf("stderr %q does not say %q", stderr, tt.want)
			}
			if strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
				t.Errorf("stderr is more than one line: %q", stderr)
			}
		})
	}
}

func TestOverheadModelErrors(t *testing.T) {
	srv := ollamatest.New(ollamatest.Turns(), ollamatest.WithModels("qwen3:0.6b"), ollamatest.WithoutTools("gemma"))
	defer srv.Close()
	code, stdout, stderr := overheadCmd(t, "--host", srv.URL, "--model", "qwen3:8b", "--no-pull")
	if code != exitCannotStart || !strings.Contains(stderr, "ollama pull qwen3:8b") || stdout != "" {
		t.Errorf("model not pulled: exit %d\nstdout %q\nstderr %q", code, stdout, stderr)
	}
	code, _, stderr = overheadCmd(t, "--host", srv.URL, "--model", "gemma")
	if code != exitCannotStart || !strings.Contains(stderr, "cannot take tools") {
		t.Errorf("no tool support: exit %d, stderr %q", code, stderr)
	}
}

// A model server that accepts the connection and never answers is
// bounded by --request-timeout: bench overhead ends, exit 2, saying so.
func TestOverheadSilentServer(t *testing.T) {
	srv := ollamatest.New(ollamatest.Turns())
	defer srv.Close()
	for _, ph := range phases[:2] { // the context length (/api/show), the measurement
		t.Run(ph.name, func(t *testing.T) {
			code, _, stderr := overheadCmd(t, "--host", silentIn(t, srv, ph), "--model", "fake", "--request-timeout", "1s")
			// Within --request-timeout, or within the model check's own
			// bound (10s) when bench checks the model before it measures.
			if code != exitCannotStart || !strings.Contains(stderr, "no reply within") {
				t.Errorf("exit %d, stderr %q", code, stderr)
			}
		})
	}
}

func TestOverheadServerFails(t *testing.T) {
	srv := ollamatest.New(ollamatest.Turns())
	defer srv.Close()
	runFile := filepath.Join(t.TempDir(), "run.toml")
	os.WriteFile(runFile, []byte("model = \"fake\"\n[[servers]]\nname = \"broken\"\ncommand = \"/nonexistent/mcp-server\"\n"), 0o644)
	code, _, stderr := overheadCmd(t, "--host", srv.URL, "--config", runFile)
	if code != exitCannotStart || !strings.Contains(stderr, "broken") {
		t.Errorf("exit %d, stderr %q: want %d and the server named", code, stderr, exitCannotStart)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent although a server failed to start", n)
	}
}

func TestOverheadTruncatedMeasurement(t *testing.T) {
	srv := ollamatest.New(ollamatest.Turns())
	defer srv.Close()
	code, stdout, stderr := overheadCmd(t, "--host", srv.URL, "--model", "fake", "--num-ctx", "150")
	if code != 0 {
		t.Fatalf("exit %d\nstderr: %s", code, stderr)
	}
	if !strings.Contains(stderr, "warning: arm default: measurement truncated") || !strings.Contains(stderr, "--num-ctx") {
		t.Errorf("no truncation warning with advice:\n%s", stderr)
	}
	if !strings.Contains(stdout, "≥") {
		t.Errorf("truncated numbers not marked:\n%s", stdout)
	}
}

// TestOverheadOpenAI measures through an OpenAI-compatible server: the
// same counts, from usage.prompt_tokens.
func TestOverheadOpenAI(t *testing.T) {
	srv := openaitest.New(ollamatest.Turns())
	defer srv.Close()
	code, stdout, stderr := overheadCmd(t, "--api", "openai", "--host", srv.URL+"/v1", "--model", "fake", "--num-ctx", "32768", "--turns", "5")
	if code != 0 {
		t.Fatalf("exit %d\nstderr: %s", code, stderr)
	}
	sum := toolWords(t, testBuiltins(t)...)
	if got := tableRow(t, stdout, "builtin (6 tools)")[0]; got != comma(sum) {
		t.Errorf("builtin row %q, want %d tokens:\n%s", got, sum, stdout)
	}
	if n := len(srv.Requests()); n != 8 {
		t.Errorf("%d requests, want 8", n)
	}
	if code, _, stderr := overheadCmd(t, "--api", "openai", "--model", "fake"); code != 2 || !strings.Contains(stderr, "--host") {
		t.Errorf("--api openai without --host: exit %d, %q", code, stderr)
	}
}

// The issue's case against a real server: num_ctx 8192 sent to a model
// whose own context (here 300) is below the prompt with the built-in
// tools. Ollama cut that prompt silently; bench printed the tools as a
// plain figure and a negative framing as if measured. Now it warns before
// measuring and prints bounds.
func TestOverheadModelContextBelowNumCtx(t *testing.T) {
	srv := ollamatest.New(ollamatest.Turns(), ollamatest.WithContextLength(300))
	defer srv.Close()
	code, stdout, stderr := overheadCmd(t, "--host", srv.URL, "--model", "fake", "--num-ctx", "8192")
	if code != 0 {
		t.Fatalf("exit %d\nstderr: %s", code, stderr)
	}
	warn, measure := strings.Index(stderr, "above the context length of fake (300)"), strings.Index(stderr, "measuring arm")
	if warn < 0 || warn > measure {
		t.Errorf("no warning before measuring that num_ctx is above the model's context:\n%s", stderr)
	}
	row := tableRow(t, stdout, "builtin (6 tools)")
	// TOKENS and FRAMING come from the cut prompt: at least what they
	// say; ONE BY ONE adds up tools that each fit: exact.
	if !strings.HasPrefix(row[0], "≥") || !strings.HasPrefix(row[len(row)-1], "≥") || strings.HasPrefix(row[len(row)-2], "≥") {
		t.Errorf("builtin row %q: want TOKENS and FRAMING as lower bounds, ONE BY ONE exact", row)
	}
	if !strings.Contains(stdout, "lowered to the model's context, 300") {
		t.Errorf("title does not say num_ctx was lowered:\n%s", stdout)
	}
	if strings.Contains(stderr, "--num-ctx") {
		t.Errorf("suggests a larger --num-ctx, which Ollama would lower again:\n%s", stderr)
	}
}
