package main

// A guard for refactors (issue #24): a real bench binary runs part of the
// example suite against a scripted model, with fixed seeds, and what it
// stores (rewards, verdicts, stop reasons, tokens per turn, every tool
// call and a hash of its result) is digested, read with plain SQL, and
// compared with testdata/samerun.golden. A refactor that changes no
// behaviour leaves the digest as it is. The test imports none of bench's
// own packages but the test helpers under internal/, so that it holds
// while they are split and renamed.
//
// After a deliberate change of what bench stores, rewrite the golden file:
//
//	go test -count=1 -run TestSameStoredResults ./cmd/bench/ -update

import (
	"bytes"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"
	_ "modernc.org/sqlite" // database/sql driver "sqlite", as bench's store uses

	"github.com/benchhq/bench/internal/ollamatest"
	"github.com/benchhq/bench/internal/sandboxtest"
)

// updateGolden rewrites the golden files of the tests that compare with one.
var updateGolden = flag.Bool("update", false, "rewrite golden files (testdata/samerun.golden) from this tree")

// sameRunGolden is the digest of the scripted run as the tree before the
// split of issue #24 stored it.
const sameRunGolden = "testdata/samerun.golden"

// sameRunSeed is the run's seed. Each attempt's seed derives from it, and
// the scripted model chooses between a right and a wrong answer by the
// parity of the attempt's seed: with this one, every task has attempts
// of both.
const sameRunSeed = 3

// sameRunSuite is the example suite.
const sameRunSuite = "../../tasks/suites/examples"

// sameRunTasks are the example tasks the run takes: a golden-case task, a
// checked answer file, and one whose tools come from an MCP server.
var sameRunTasks = []string{"recipe-trailing-dot", "phonebook-sort", "mcp-timeout-issues"}

// TestSameStoredResults runs bench over part of the example suite with a
// scripted model and compares a digest of what it stored with the golden
// file: see the comment at the top of the file.
func TestSameStoredResults(t *testing.T) {
	sandboxtest.Isolated(t) // as the corpus: the run uses bubblewrap; CI requires it
	script := sameRunScript(t)
	srv := ollamatest.New(script)
	defer srv.Close()

	dir := t.TempDir()
	suite, err := filepath.Abs(sameRunSuite)
	if err != nil {
		t.Fatal(err)
	}
	runFile := filepath.Join(dir, "run.toml")
	if err := os.WriteFile(runFile, []byte(`model = "fake"
attempts = 3
[[arms]]
name = "full"
profile = "full"
[[arms]]
name = "read-only"
profile = "read-only"
`), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "bench.db")
	start := time.Now()
	p := startBench(t, "run", "--host", srv.URL, "--config", runFile, "--suite", suite, "--tasks", strings.Join(sameRunTasks, ","),
		"--seed", fmt.Sprint(sameRunSeed), "-j", "2", "--db", db, "--name", "samerun", "--no-progress")
	if code := p.waitUpTo(t, 3*time.Minute); code != 0 {
		t.Fatalf("bench run: exit %d\nstderr: %s", code, p.stderr.String())
	}
	t.Logf("bench run took %s", time.Since(start).Round(time.Millisecond))

	got := storedDigest(t, db, dir, suite)
	if *updateGolden {
		if err := os.WriteFile(sameRunGolden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", sameRunGolden)
		return
	}
	want, err := os.ReadFile(sameRunGolden)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if got != string(want) {
		t.Errorf("what bench stored differs from %s (a refactor must not change it; if the change is meant, rerun with -update):\n%s",
			sameRunGolden, lineDiff(string(want), got))
	}
}

// sameRunScript is the scripted model: what it does depends on the task
// (told by its instruction), the turn (how many answers the conversation
// holds) and the parity of the attempt's seed (even: the right answer,
// odd: a wrong one). Every task's attempts read, list, run a command,
// write a file, call a tool that fails, and end with a final answer.
func sameRunScript(t *testing.T) ollamatest.Script {
	t.Helper()
	fixed, err := os.ReadFile(filepath.Join(sameRunSuite, "recipe-trailing-dot", "solution", "recipe.py"))
	if err != nil {
		t.Fatal(err)
	}
	contacts, err := os.ReadFile(filepath.Join(sameRunSuite, "phonebook-sort", "solution", "contacts.txt"))
	if err != nil {
		t.Fatal(err)
	}
	call := func(name string, kv ...any) ollamatest.Call {
		args := map[string]any{}
		for i := 0; i+1 < len(kv); i += 2 {
			args[kv[i].(string)] = kv[i+1]
		}
		return ollamatest.Call{Name: name, Args: args}
	}
	calls := func(cs ...ollamatest.Call) ollamatest.Reply { return ollamatest.Reply{Calls: cs} }
	// wrongFix drops every period of an item: "1.5 l milk" too.
	wrongFix := strings.Replace(string(fixed), "def ingredients", "def _ingredients", 1) +
		"\n\ndef ingredients(text):\n    return [i.replace('.', '') for i in _ingredients(text)]\n"
	return func(req *api.ChatRequest) ollamatest.Reply {
		seed, ok := req.Options["seed"].(float64)
		if !ok {
			return ollamatest.Reply{Content: "ok"} // the preflight
		}
		right := int64(seed)%2 == 0
		instruction, turn := "", 0
		for _, m := range req.Messages {
			switch m.Role {
			case "user":
				if instruction == "" {
					instruction = m.Content
				}
			case "assistant":
				turn++
			}
		}
		var turns []ollamatest.Reply
		switch {
		case strings.Contains(instruction, "recipe.ingredients()"):
			fix := string(fixed)
			if !right {
				fix = wrongFix
			}
			turns = []ollamatest.Reply{
				calls(call("list_dir", "path", "."), call("read_file", "path", "recipe.py")),
				calls(call("search", "pattern", `endswith\(`, "path", "."), call("read_file", "path", "recipe.py", "start_line", 50, "end_line", 64)),
				calls(call("run_command", "command", "python3 -m unittest -q 2>&1; echo exit=$?", "timeout_seconds", 60)),
				calls(call("write_file", "path", "recipe.py", "content", fix)),
				calls(call("read_file", "path", "no-such-file.txt")),
				calls(call("run_command", "command", `python3 -c 'import recipe; print(recipe.ingredients(open("pancakes.txt").read()))'`)),
				{Content: "recipe.ingredients() now drops the trailing period of each item.", CompletionTokens: 42},
			}
		case strings.Contains(instruction, "contacts.txt"):
			// Right: the reference's file, written whole. Wrong: sorted as
			// plain lines, which moves the header and goes by first name.
			sorted := calls(call("write_file", "path", "contacts.txt", "content", string(contacts)))
			if !right {
				sorted = calls(call("run_command", "command", "sort -o contacts.txt contacts.txt && head -3 contacts.txt"))
			}
			turns = []ollamatest.Reply{
				calls(call("list_dir", "path", "."), call("read_file", "path", "contacts.txt")),
				calls(call("run_command", "command", "sort -t: -k1 contacts.txt | head -5", "timeout_seconds", 30)),
				sorted,
				calls(call("search_web", "query", "phone book order")), // no such tool
				calls(call("read_file", "path", "contacts.txt")),
				{Content: "contacts.txt is sorted by last name.", PromptTokens: 1234},
			}
		case strings.Contains(instruction, "issue tracker"):
			// Right: the list written, then its last line corrected.
			// Wrong: a correction of a line that is not there.
			edit := call("edit_file", "path", "answer.txt", "old_string", "34\n", "new_string", "35\n36\n40\n")
			if !right {
				edit = call("edit_file", "path", "answer.txt", "old_string", "99\n", "new_string", "35\n")
			}
			turns = []ollamatest.Reply{
				calls(call("issues__search_issues", "query", "timeout")),
				calls(call("issues__get_issue", "id", 31), call("list_dir", "path", ".")),
				calls(call("issues__get_issue", "id", 9999)),
				calls(call("write_file", "path", "answer.txt", "content", "31\n32\n34\n")),
				calls(edit),
				calls(call("run_command", "command", "wc -l answer.txt")),
				{Content: "The ids are in answer.txt."},
			}
		default:
			return ollamatest.Reply{Content: "unknown task"}
		}
		if turn < len(turns) {
			return turns[turn]
		}
		return ollamatest.Reply{Content: "done"}
	}
}

// storedDigest reads the store with plain SQL and writes, for every
// attempt in a fixed order, what a refactor must not change: its seed,
// status, stop reason, reward, verdict and scoring; each turn's tokens;
// each tool call's name, arguments, decision, error and a hash of its
// result. Times, random ids and the run's temp folders are left out or
// normalised (tmp and suite are replaced by placeholders).
func storedDigest(t *testing.T, path, tmp, suite string) string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	norm := normaliser(tmp, suite)
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }

	q := func(query string, args ...any) *sql.Rows {
		t.Helper()
		rows, err := db.Query(query, args...)
		if err != nil {
			t.Fatalf("%v\n%s", err, query)
		}
		t.Cleanup(func() { rows.Close() })
		return rows
	}
	scan := func(rows *sql.Rows, dest ...any) bool {
		t.Helper()
		if !rows.Next() {
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			rows.Close()
			return false
		}
		if err := rows.Scan(dest...); err != nil {
			t.Fatal(err)
		}
		return true
	}

	// The run.
	rows := q(`SELECT id, name, model, seed, attempts_per_task, suite, status, isolation, options_json FROM runs ORDER BY id`)
	for {
		var id, name, model, suiteName, status, isolation, options string
		var seed, g int64
		if !scan(rows, &id, &name, &model, &seed, &g, &suiteName, &status, &isolation, &options) {
			break
		}
		isolation, _, _ = strings.Cut(isolation, " ") // "bubblewrap 0.8.0": the machine's version is not bench's doing
		line("run %s name=%s model=%s seed=%d G=%d suite=%s status=%s isolation=%s options=%s",
			id, name, model, seed, g, suiteName, status, isolation, canonicalJSON(t, options))
	}
	rows = q(`SELECT name, idx, config_json FROM arms ORDER BY idx`)
	for {
		var name, config string
		var idx int64
		if !scan(rows, &name, &idx, &config) {
			break
		}
		line("arm %d %s %s", idx, name, norm(canonicalJSON(t, config)))
	}
	rows = q(`SELECT id, idx, hash, report, verdict, tags FROM tasks ORDER BY idx`)
	for {
		var id, hash, report, verdict, tags string
		var idx int64
		if !scan(rows, &id, &idx, &hash, &report, &verdict, &tags) {
			break
		}
		line("task %d %s hash=%s report=%s verdict=%s tags=%s", idx, id, hash, report, verdict, tags)
	}
	rows = q(`SELECT arm, model, num_ctx, baseline_tokens, prompt_tokens, tokens, sum_of_tools, truncated, model_context FROM overhead ORDER BY arm`)
	for {
		var arm, model string
		var numCtx, base, prompt, tokens, sum, truncated, modelCtx int64
		if !scan(rows, &arm, &model, &numCtx, &base, &prompt, &tokens, &sum, &truncated, &modelCtx) {
			break
		}
		line("overhead %s model=%s num_ctx=%d baseline=%d prompt=%d tokens=%d sum_of_tools=%d truncated=%d model_context=%d",
			arm, model, numCtx, base, prompt, tokens, sum, truncated, modelCtx)
	}
	rows = q(`SELECT arm, idx, kind, name, tool_set, prompt_tokens, tokens, truncated FROM overhead_items ORDER BY arm, idx`)
	for {
		var arm, kind, name, set string
		var idx, prompt, tokens, truncated int64
		if !scan(rows, &arm, &idx, &kind, &name, &set, &prompt, &tokens, &truncated) {
			break
		}
		line("  overhead item %s %d %s %s set=%s prompt=%d tokens=%d truncated=%d", arm, idx, kind, name, set, prompt, tokens, truncated)
	}

	// The attempts, by arm, task and index.
	type attempt struct {
		id                              int64
		head                            string
		arm, task                       string
		idx                             int64
		reward                          sql.NullInt64
		advantage                       sql.NullFloat64
		advantageMethod                 sql.NullString
		status, stop, errText           string
		turns, calls, prompt, completed int64
		tries, denials, truncated       int64
		verdict, flags                  string
		seed                            int64
		tools                           sql.NullString
	}
	var attempts []attempt
	rows = q(`SELECT a.id, a.arm, a.task_id, a.idx, a.seed, a.status, a.stop_reason, a.reward, a.advantage, a.advantage_method,
		a.turns, a.tool_calls, a.prompt_tokens, a.completion_tokens, a.tries, a.error, a.denials, a.truncated_turns,
		a.verdict, a.flags, l.tools_json
		FROM attempts a LEFT JOIN arms r ON r.run_id = a.run_id AND r.name = a.arm
		LEFT JOIN tasks k ON k.run_id = a.run_id AND k.id = a.task_id
		LEFT JOIN tool_lists l ON l.id = a.tool_list_id
		ORDER BY r.idx, k.idx, a.idx`)
	for {
		var a attempt
		if !scan(rows, &a.id, &a.arm, &a.task, &a.idx, &a.seed, &a.status, &a.stop, &a.reward, &a.advantage, &a.advantageMethod,
			&a.turns, &a.calls, &a.prompt, &a.completed, &a.tries, &a.errText, &a.denials, &a.truncated,
			&a.verdict, &a.flags, &a.tools) {
			break
		}
		attempts = append(attempts, a)
	}
	// outcomes are the rewards of each task's attempts in the full arm:
	// the script must give every task an attempt that passes and one
	// that fails, or the digest guards less than it seems to.
	outcomes := map[string]map[int64]bool{}
	for _, a := range attempts {
		reward := "-"
		if a.reward.Valid {
			reward = fmt.Sprint(a.reward.Int64)
			if a.arm == "full" {
				if outcomes[a.task] == nil {
					outcomes[a.task] = map[int64]bool{}
				}
				outcomes[a.task][a.reward.Int64] = true
			}
		}
		advantage := "-"
		if a.advantage.Valid {
			advantage = fmt.Sprintf("%.6g (%s)", a.advantage.Float64, a.advantageMethod.String)
		}
		line("")
		line("attempt arm=%s task=%s idx=%d seed=%d", a.arm, a.task, a.idx, a.seed)
		line("  status=%s stop=%s reward=%s advantage=%s verdict=%s flags=%s tries=%d error=%q",
			a.status, a.stop, reward, advantage, a.verdict, a.flags, a.tries, norm(a.errText))
		line("  turns=%d tool_calls=%d prompt_tokens=%d completion_tokens=%d denials=%d truncated_turns=%d",
			a.turns, a.calls, a.prompt, a.completed, a.denials, a.truncated)
		line("  tools %s", hashText(canonicalJSON(t, a.tools.String)))

		r := q(`SELECT idx, prompt_tokens, completion_tokens, done_reason, tool_calls, truncated FROM turns WHERE attempt_id = ? ORDER BY idx`, a.id)
		for {
			var idx, prompt, completion, calls, truncated int64
			var done string
			if !scan(r, &idx, &prompt, &completion, &done, &calls, &truncated) {
				break
			}
			line("  turn %d prompt=%d completion=%d done=%s calls=%d truncated=%d", idx, prompt, completion, done, calls, truncated)
		}
		r = q(`SELECT turn_idx, source, exact, problem, coalesce(prompt_len, -1) FROM turn_tokens WHERE attempt_id = ? ORDER BY turn_idx`, a.id)
		for {
			var idx, exact, promptLen int64
			var source, problem string
			if !scan(r, &idx, &source, &exact, &problem, &promptLen) {
				break
			}
			line("  turn tokens %d source=%s exact=%d problem=%q prompt_len=%d", idx, source, exact, problem, promptLen)
		}
		r = q(`SELECT idx, turn_idx, tool, origin, class, decision, rule, approver, arguments_json, result, is_error, error_kind,
			coalesce(details_json, '') FROM tool_calls WHERE attempt_id = ? ORDER BY idx`, a.id)
		for {
			var idx, turn, isError int64
			var tool, origin, class, decision, rule, approver, args, result, errorKind, details string
			if !scan(r, &idx, &turn, &tool, &origin, &class, &decision, &rule, &approver, &args, &result, &isError, &errorKind, &details) {
				break
			}
			line("  call %d turn=%d %s origin=%s class=%s decision=%s rule=%q approver=%s is_error=%d error_kind=%s",
				idx, turn, tool, origin, class, decision, rule, approver, isError, errorKind)
			line("    args %s", norm(canonicalJSON(t, args)))
			line("    result %s details %s", hashText(norm(result)), hashText(norm(details)))
		}
		r = q(`SELECT idx, role, content, thinking, coalesce(tool_calls_json, ''), tool_name, coalesce(tool_call_idx, -1) FROM conversation WHERE attempt_id = ? ORDER BY idx`, a.id)
		conv := sha256.New()
		n := 0
		for {
			var idx, callIdx int64
			var role, content, thinking, calls, toolName string
			if !scan(r, &idx, &role, &content, &thinking, &calls, &toolName, &callIdx) {
				break
			}
			fmt.Fprintf(conv, "%d %s %q %q %q %s %d\n", idx, role, norm(content), thinking, norm(canonicalJSON(t, calls)), toolName, callIdx)
			n++
		}
		line("  conversation %d messages %s", n, hex.EncodeToString(conv.Sum(nil))[:16])
		r = q(`SELECT command, exit_code, passed, timed_out, basis, report_error, coalesce(tests_total, -1), coalesce(tests_passed, -1),
			coalesce(cases_total, -1), coalesce(cases_passed, -1), coalesce(reward_value, -1), coalesce(metrics, '')
			FROM test_results WHERE attempt_id = ?`, a.id)
		for {
			var command, basis, reportError, metrics string
			var exit, passed, timedOut, testsTotal, testsPassed, casesTotal, casesPassed int64
			var value float64
			if !scan(r, &command, &exit, &passed, &timedOut, &basis, &reportError, &testsTotal, &testsPassed, &casesTotal, &casesPassed, &value, &metrics) {
				break
			}
			line("  scoring command=%q exit=%d passed=%d timed_out=%d basis=%s report_error=%q tests=%d/%d cases=%d/%d value=%g metrics=%s",
				norm(command), exit, passed, timedOut, basis, norm(reportError), testsPassed, testsTotal, casesPassed, casesTotal, value, metrics)
		}
		r = q(`SELECT idx, test, outcome, recorded, message FROM test_cases WHERE attempt_id = ? ORDER BY idx`, a.id)
		for {
			var idx int64
			var test, outcome, recorded, message string
			if !scan(r, &idx, &test, &outcome, &recorded, &message) {
				break
			}
			line("  case %d %s %s recorded=%s message %s", idx, test, outcome, recorded, hashText(norm(message)))
		}
		r = q(`SELECT carried_json, diff, diff_cut, left_out_json, left_out_more, carried_more FROM attempt_changes WHERE attempt_id = ?`, a.id)
		for {
			var carried, diff, leftOut string
			var diffCut, leftMore, carriedMore int64
			if !scan(r, &carried, &diff, &diffCut, &leftOut, &leftMore, &carriedMore) {
				break
			}
			line("  carried %s more=%d", norm(canonicalJSON(t, carried)), carriedMore)
			line("  left out %s more=%d", norm(canonicalJSON(t, leftOut)), leftMore)
			line("  diff %s cut=%d", hashText(norm(diff)), diffCut)
		}
		r = q(`SELECT idx, flag, path, line, detail FROM attempt_flags WHERE attempt_id = ? ORDER BY idx`, a.id)
		for {
			var idx, ln int64
			var flagName, path, detail string
			if !scan(r, &idx, &flagName, &path, &ln, &detail) {
				break
			}
			line("  flag %d %s %s:%d %q", idx, flagName, norm(path), ln, norm(detail))
		}
	}
	if len(attempts) != len(sameRunTasks)*2*3 {
		t.Errorf("%d attempts stored, want %d", len(attempts), len(sameRunTasks)*2*3)
	}
	for _, task := range sameRunTasks {
		if !outcomes[task][0] || !outcomes[task][1] {
			t.Errorf("%s, arm full: rewards %v; the script must make an attempt pass and one fail (is the seed %d still the run's?)",
				task, outcomes[task], sameRunSeed)
		}
	}
	return b.String()
}

// normaliser returns a function that replaces, in stored text, what
// differs from run to run of the same behaviour: the test's temp folders
// (tmp is one of them), the suite's folder, the random part of the
// folders bench makes (bench-run-NAME-123456789), how long unittest says
// its tests took, and the lines of carets under a traceback's code,
// which only some versions of Python write.
func normaliser(tmp, suite string) func(string) string {
	root := filepath.Dir(tmp) // t.TempDir's folders are numbered in one root
	madeDir := regexp.MustCompile(`(bench-[A-Za-z0-9_.-]*?)-[0-9]{4,}`)
	took := regexp.MustCompile(`(Ran [0-9]+ tests? in )[0-9.]+s`)
	carets := regexp.MustCompile(`(?m)^[ \t]*[~^]+[ \t]*\n`)
	return func(s string) string {
		s = strings.ReplaceAll(s, suite, "$SUITE")
		s = strings.ReplaceAll(s, root, "$TMP")
		s = madeDir.ReplaceAllString(s, "${1}-N")
		s = took.ReplaceAllString(s, "${1}Ts")
		return carets.ReplaceAllString(s, "")
	}
}

// canonicalJSON re-encodes JSON with its objects' keys sorted (what
// encoding/json does for maps); text that is not JSON is kept.
func canonicalJSON(t *testing.T, s string) string {
	t.Helper()
	if s == "" {
		return s
	}
	var v any
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return s
	}
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// hashText is a short hash of a text, and its length.
func hashText(s string) string {
	h := sha256.Sum256([]byte(s))
	return fmt.Sprintf("%s/%d", hex.EncodeToString(h[:])[:16], len(s))
}

// lineDiff lists the lines of want and got that differ, by line number,
// each under the attempt (or the run) it belongs to: enough to see which
// attempt and which field changed. Past a line added or removed, every
// line differs; the first few say where.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	shown, head, shownHead := 0, "(the run)", ""
	for i := 0; i < max(len(w), len(g)) && shown < 40; i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if strings.HasPrefix(wl, "attempt ") {
			head = wl
		}
		if wl == gl {
			continue
		}
		if head != shownHead {
			fmt.Fprintf(&b, "%s\n", head)
			shownHead = head
		}
		fmt.Fprintf(&b, "  line %d:\n    want %s\n    got  %s\n", i+1, wl, gl)
		shown++
	}
	return b.String()
}
