package view

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"html"
	"html/template"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/benchhq/bench/results"
)

// escaped is s as html/template writes it in a page's text.
func escaped(s string) string {
	return strings.ReplaceAll(template.HTMLEscapeString(s), "+", "&#43;")
}

// fixtureAttempt returns the id of an attempt of the main run.
func fixtureAttempt(t *testing.T, db string, arm, task string, idx int) int64 {
	t.Helper()
	store, err := results.OpenReadOnly(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var id int64
	if err := store.DB().Get(&id, `SELECT id FROM attempts WHERE run_id = ? AND arm = ? AND task_id = ? AND idx = ?`,
		mainRun, arm, task, idx); err != nil {
		t.Fatal(err)
	}
	return id
}

// changedFixture is a copy of the fixture database with stmts run on it.
func changedFixture(t *testing.T, stmts ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "bench.db")
	copyFile(t, fixtureDB, path)
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return path
}

// section returns the part of page from the element of id id to the end
// of its section.
func section(t *testing.T, page, id string) string {
	t.Helper()
	i := strings.Index(page, `id="`+id+`"`)
	if i < 0 {
		t.Fatalf("no element %s in the page", id)
	}
	page = page[i:]
	if j := strings.Index(page, "</section>"); j >= 0 {
		page = page[:j]
	}
	return page
}

// closeTo reports whether the number text v is within 1µs of want.
func closeTo(v string, want float64) bool {
	f, err := strconv.ParseFloat(v, 64)
	return err == nil && math.Abs(f-want) < 1e-3
}

// The attempt page shows each test's verdict, what the reward rests on,
// and where the attempt's time went, as the store holds them.
func TestAttemptPageShowsTheVerdictsAndTheTime(t *testing.T) {
	id := fixtureAttempt(t, fixtureDB, "read-only", "recipe-trailing-dot", 0)
	store := openFixture(t)
	var cases []struct {
		Test     string `db:"test"`
		Outcome  string `db:"outcome"`
		Recorded string `db:"recorded"`
	}
	if err := store.DB().Select(&cases, `SELECT test, outcome, recorded FROM test_cases WHERE attempt_id = ? ORDER BY idx`, id); err != nil {
		t.Fatal(err)
	}
	var tr struct {
		Total  int `db:"tests_total"`
		Passed int `db:"tests_passed"`
	}
	if err := store.DB().Get(&tr, `SELECT tests_total, tests_passed FROM test_results WHERE attempt_id = ?`, id); err != nil {
		t.Fatal(err)
	}
	// The fixture's values: the read-only arm cannot write its fix, so
	// the three fail-to-pass tests fail and the pass-to-pass one passes.
	if len(cases) != 4 || tr.Total != 4 || tr.Passed != 1 {
		t.Fatalf("fixture: %d cases, %d of %d passed; want 4, 1 of 4", len(cases), tr.Passed, tr.Total)
	}
	hs := testServer(t, fixtureDB)
	_, page := get(t, fmt.Sprintf("%s/attempts/%d", hs.URL, id))
	lists := map[string]string{"fail_to_pass": "fail → pass", "pass_to_pass": "pass → pass"}
	for _, c := range cases {
		r := row(t, page, "verdicts-table", "test", c.Test)
		if !strings.Contains(r, fmt.Sprintf(`<td class="%s">%s</td>`, c.Outcome, c.Outcome)) || !strings.Contains(r, "<td>"+lists[c.Recorded]+"</td>") {
			t.Errorf("verdict of %s (%s, %s) not shown: %s", c.Test, c.Outcome, c.Recorded, r)
		}
	}
	basis := fmt.Sprintf("The reward rests on %d recorded tests (3 fail → pass, 1 pass → pass), %d passed", tr.Total, tr.Passed)
	if !strings.Contains(page, `<p id="basis" class="basis">`+basis) {
		t.Errorf("the page does not say %q", basis)
	}

	var times struct {
		Model   float64 `db:"model_ms"`
		Tools   float64 `db:"tool_ms"`
		Tests   float64 `db:"test_ms"`
		Harness float64 `db:"harness_ms"`
	}
	if err := store.DB().Get(&times, `SELECT model_ms, tool_ms, test_ms, harness_ms FROM attempts WHERE id = ?`, id); err != nil {
		t.Fatal(err)
	}
	split := section(t, page, "time-split")
	for part, want := range map[string]float64{"model": times.Model, "tools": times.Tools, "hidden tests": times.Tests, "harness": times.Harness} {
		m := regexp.MustCompile(`data-part="` + part + `" data-v="([^"]*)"`).FindStringSubmatch(split)
		if m == nil || !closeTo(m[1], want) {
			t.Errorf("time of %s: %v, the store says %v ms", part, m, want)
		}
	}
	if n := strings.Count(split, "<rect"); n < 5 { // the parts with time, and the legend's 4
		t.Errorf("the time bar has %d rectangles", n)
	}
}

// The agent's change that was scored: the files carried with their kind
// and size, the diff with its lines marked, the paths left out and why.
func TestAttemptPageShowsTheScoredChange(t *testing.T) {
	id := fixtureAttempt(t, fixtureDB, "full", "recipe-trailing-dot", 0)
	store := openFixture(t)
	var ch struct {
		Carried string `db:"carried_json"`
		Diff    string `db:"diff"`
		LeftOut string `db:"left_out_json"`
	}
	if err := store.DB().Get(&ch, `SELECT carried_json, diff, left_out_json FROM attempt_changes WHERE attempt_id = ?`, id); err != nil {
		t.Fatal(err)
	}
	var carried []struct {
		Path string `json:"path"`
		Kind string `json:"kind"`
		Size int64  `json:"size"`
	}
	var left []struct {
		Path   string `json:"path"`
		Reason string `json:"reason"`
	}
	if err := json.Unmarshal([]byte(ch.Carried), &carried); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(ch.LeftOut), &left); err != nil {
		t.Fatal(err)
	}
	if len(carried) != 1 || carried[0].Path != "recipe.py" || !strings.Contains(ch.Diff, "+            if item.endswith(") {
		t.Fatalf("fixture: carried %+v, diff %q", carried, ch.Diff)
	}
	hs := testServer(t, fixtureDB)
	_, page := get(t, fmt.Sprintf("%s/attempts/%d", hs.URL, id))
	change := section(t, page, "change")
	r := row(t, change, "carried-table", "path", "recipe.py")
	if !strings.Contains(r, ">"+carried[0].Kind+"<") || !strings.Contains(r, ">"+byteSize(int(carried[0].Size))+"<") {
		t.Errorf("carried file: %s", r)
	}
	// Added and removed lines are marked as such; every other line (file
	// names, hunks, context) is shown too.
	adds, dels := 0, 0
	for _, l := range strings.Split(strings.TrimSuffix(ch.Diff, "\n"), "\n") {
		want := `">` + escaped(l) + `</span>`
		if added, removed := strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "-") && !strings.HasPrefix(l, "---"); added {
			want, adds = `<span class="add`+want, adds+1
		} else if removed {
			want, dels = `<span class="del`+want, dels+1
		}
		if !strings.Contains(change, want) {
			t.Errorf("the diff lacks %s", want)
		}
	}
	if want := fmt.Sprintf("1 file, %d lines added, %d removed", adds, dels); !strings.Contains(change, want) {
		t.Errorf("the diff's summary does not say %q", want)
	}
	if !strings.Contains(change, `<details class="fold" id="diff" open>`) {
		t.Errorf("a short diff is folded")
	}
	if len(left) == 0 {
		t.Fatalf("fixture: nothing left out (the agent's own test run leaves bytecode)")
	}
	for _, l := range left {
		if !strings.Contains(change, `<td class="mono">`+escaped(l.Path)+`</td><td>`+escaped(l.Reason)+`</td>`) {
			t.Errorf("left out %s (%s) not shown", l.Path, l.Reason)
		}
	}
	if strings.Contains(change, `id="diff-cut"`) || strings.Contains(change, `id="left-out-more"`) {
		t.Errorf("the page says the change was cut, and the store says not")
	}
	code, text := get(t, fmt.Sprintf("%s/attempts/%d/text?part=diff&i=0", hs.URL, id))
	if code != 200 || text != ch.Diff {
		t.Errorf("the whole diff: %d, %q", code, text)
	}
}

// What the store holds about a reward that is not the plain case: a
// basis of the exit status alone, a report that could not be read, a
// timeout with the reference solution's time, a cut diff, no change.
func TestAttemptPageSaysWhatTheRewardRestsOn(t *testing.T) {
	id := fixtureAttempt(t, fixtureDB, "full", "recipe-trailing-dot", 0)
	long := strings.Repeat("+x\n", diffOpenLines+1)
	tests := []struct {
		name  string
		stmts []string
		want  []string
		not   []string
	}{
		{"exit status", []string{
			`UPDATE test_results SET basis = 'exit_status', tests_total = NULL, tests_passed = NULL WHERE attempt_id = ?`,
			`DELETE FROM test_cases WHERE attempt_id = ?`,
		}, []string{`<p id="basis" class="basis warn">The reward rests on the exit status alone`}, []string{`id="verdicts-table"`}},
		{"report error", []string{
			`UPDATE test_results SET report_error = 'unittest: no test result line', passed = 0 WHERE attempt_id = ?`,
			`DELETE FROM test_cases WHERE attempt_id = ?`,
			`UPDATE test_results SET tests_total = 0, tests_passed = 0 WHERE attempt_id = ?`,
		}, []string{`id="report-error"`, "The per-test report was not accepted, so the reward is 0: unittest: no test result line",
			"The reward rests on the task&#39;s per-test report, and it could not be read"}, []string{"has no record", `id="verdicts-table"`}},
		{"timeout", []string{
			`UPDATE test_results SET timed_out = 1, exit_code = -1, ref_duration_ms = 1234.5 WHERE attempt_id = ?`,
		}, []string{`id="ref-duration"`, "its tests took 1.2s right after, in the same prepared environment"}, nil},
		{"timeout without the reference's time", []string{
			`UPDATE test_results SET timed_out = 1, exit_code = -1 WHERE attempt_id = ?`,
		}, []string{"its time was not recorded"}, nil},
		{"cut", []string{
			`UPDATE attempt_changes SET diff_cut = 5000, left_out_more = 3 WHERE attempt_id = ?`,
		}, []string{`id="diff-cut"`, "bench keeps its first 256.0 KB, and 4.9 KB more were not stored", "and 3 paths more, not listed"}, nil},
		{"long diff", []string{
			`UPDATE attempt_changes SET diff = '` + long + `' WHERE attempt_id = ?`,
		}, []string{`<details class="fold" id="diff">`, fmt.Sprintf("%d lines added", diffOpenLines+1)}, nil},
		{"no change", []string{
			`DELETE FROM attempt_changes WHERE attempt_id = ?`,
		}, []string{`id="no-change"`, "it was scored before bench kept the agent's change"}, []string{`id="carried-table"`, `id="diff"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stmts []string
			for _, q := range tt.stmts {
				stmts = append(stmts, strings.ReplaceAll(q, "?", strconv.FormatInt(id, 10)))
			}
			hs := testServer(t, changedFixture(t, stmts...))
			code, page := get(t, fmt.Sprintf("%s/attempts/%d", hs.URL, id))
			if code != 200 {
				t.Fatalf("%d: %s", code, page)
			}
			for _, w := range tt.want {
				if !strings.Contains(page, w) {
					t.Errorf("the page lacks %q", w)
				}
			}
			for _, w := range tt.not {
				if strings.Contains(page, w) {
					t.Errorf("the page holds %q", w)
				}
			}
		})
	}
}

// The run page shows the time split and TEST50 as the report computes
// them, and its isolation.
func TestRunPageShowsTheTimeAndTheIsolation(t *testing.T) {
	store := openFixture(t)
	rep, err := store.Report(context.Background(), mainRun, results.ReportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Total.Time.TestMS <= 0 || rep.Total.TestMS.N != 14 {
		t.Fatalf("fixture: test time %v over %d attempts", rep.Total.Time.TestMS, rep.Total.TestMS.N)
	}
	hs := testServer(t, fixtureDB)
	_, page := get(t, hs.URL+"/runs/"+mainRun)
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	arms := append(append([]results.Metrics{}, rep.Arms...), rep.Total)
	for i, m := range arms {
		label := m.Arm
		if i == len(arms)-1 {
			label = "all arms"
		}
		r := row(t, page, "time-table", "arm", label)
		for part, want := range map[string]float64{"model": m.Time.ModelMS, "tools": m.Time.ToolMS, "hidden tests": m.Time.TestMS, "harness": m.Time.HarnessMS} {
			if !strings.Contains(r, `data-part="`+part+`" data-v="`+f(want)+`"`) {
				t.Errorf("%s: %s %v ms not shown: %s", label, part, want, r)
			}
		}
		name, share := m.Time.Dominant()
		if !strings.Contains(r, fmt.Sprintf("<td>%s (%s)</td>", name, pctv(share))) {
			t.Errorf("%s: the dominant part %s (%s) not shown: %s", label, name, pctv(share), r)
		}
		if i < len(rep.Arms) {
			if got := dataValue(t, row(t, page, "arms-table", "arm", m.Arm), "test50"); got != f(m.TestMS.P50) {
				t.Errorf("%s: test p50 %s, report says %v", m.Arm, got, m.TestMS.P50)
			}
		}
	}
	for _, m := range rep.Tasks {
		r := row(t, page, "tasks-table", "task", m.Task) // the first arm's row
		if m.Arm == rep.Arms[0].Arm {
			if got := dataValue(t, r, "test50"); got != f(m.TestMS.P50) {
				t.Errorf("%s/%s: test p50 %s, report says %v", m.Arm, m.Task, got, m.TestMS.P50)
			}
		}
	}
	if line := rep.Total.Time.Line(); line == "" || !strings.Contains(page, `<p id="time-line">`+html.EscapeString(line)+`</p>`) {
		t.Errorf("the page does not say %q as bench report does", line)
	}
	if !strings.Contains(section(t, page, "time"), "<svg") {
		t.Errorf("no time bar")
	}
	iso := rep.Run.Isolation
	if iso == "" || iso == "none" {
		t.Fatalf("fixture: isolation %q: the fixture's runs use the sandbox", iso)
	}
	if strings.Contains(page, `id="isolation-banner"`) || !strings.Contains(page, `<dd id="isolation">`+iso+`</dd>`) {
		t.Errorf("an isolated run (%s) is not shown as one", iso)
	}
	if strings.Contains(page, `id="exit-status-banner"`) {
		t.Errorf("the tasks give per-test reports, and the page says not")
	}
}

// An unisolated run, one whose isolation is unknown, and tasks scored on
// the exit status alone are said so, in the report's words, on the run
// page, the runs page and the attempt page.
func TestUnisolatedRunsAreMarked(t *testing.T) {
	for _, iso := range []string{"none", ""} {
		path := changedFixture(t,
			fmt.Sprintf(`UPDATE runs SET isolation = '%s' WHERE id = '%s'`, iso, mainRun),
			fmt.Sprintf(`UPDATE tasks SET report = '', verdict = 'exit_status' WHERE run_id = '%s' AND id = 'recipe-trailing-dot'`, mainRun))
		store, err := results.OpenReadOnly(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := store.Report(context.Background(), mainRun, results.ReportOptions{})
		store.Close()
		if err != nil {
			t.Fatal(err)
		}
		hs := testServer(t, path)
		_, page := get(t, hs.URL+"/runs/"+mainRun)
		class := map[string]string{"none": "bad", "": "warn"}[iso]
		if want := `<p class="banner ` + class + `" id="isolation-banner">` + html.EscapeString(rep.Run.IsolationNote()) + `</p>`; !strings.Contains(page, want) {
			t.Errorf("isolation %q: the run page lacks %s", iso, want)
		}
		if want := html.EscapeString(rep.Run.ExitStatusNote()); want == "" || !strings.Contains(section(t, page, "exit-status-banner"), want) {
			t.Errorf("the run page does not say %q", want)
		}
		if r := row(t, page, "grid-table", "task", "recipe-trailing-dot"); !strings.Contains(r, ">exit status</span>") {
			t.Errorf("the task scored on the exit status is not marked in the grid: %s", r)
		}
		if r := row(t, page, "grid-table", "task", "mcp-parser-issue"); strings.Contains(r, ">exit status</span>") {
			t.Errorf("a task with per-test reports is marked as scored on the exit status")
		}
		_, runs := get(t, hs.URL+"/")
		tag := map[string]string{"none": ">unisolated</span>", "": ">isolation unknown</span>"}[iso]
		if !strings.Contains(row(t, runs, "runs-table", "run", mainRun), tag) || strings.Contains(row(t, runs, "runs-table", "run", secondRun), tag) {
			t.Errorf("isolation %q: the runs page does not mark the run alone", iso)
		}
		id := fixtureAttempt(t, path, "full", "recipe-trailing-dot", 0)
		_, att := get(t, fmt.Sprintf("%s/attempts/%d", hs.URL, id))
		if !strings.Contains(att, `<p class="banner `+class+`" id="isolation-banner">`+html.EscapeString(rep.Run.IsolationNote())) {
			t.Errorf("isolation %q: the attempt page does not say it", iso)
		}
	}
	// The standalone file says it too.
	path := changedFixture(t, fmt.Sprintf(`UPDATE runs SET isolation = 'none' WHERE id = '%s'`, mainRun))
	store, err := results.OpenReadOnly(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var b strings.Builder
	if err := WriteReport(context.Background(), &b, store, mainRun, "bench.db", results.ReportOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `<p class="banner bad" id="isolation-banner">UNISOLATED: `) {
		t.Errorf("the html report does not say the run is unisolated")
	}
}

// What a reward rests on is said on the attempt page (its verdict kind and
// the suspicion flags of its change) and, per arm, on the run page, with
// the hack rate of impossible tasks.
func TestVerdictsAndFlagsAreShown(t *testing.T) {
	var id int64
	store, err := results.OpenReadOnly(context.Background(), fixtureDB)
	if err != nil {
		t.Fatal(err)
	}
	err = store.DB().QueryRow(`SELECT id FROM attempts WHERE run_id = ? AND status = 'finished' AND reward = 1 ORDER BY id LIMIT 1`, mainRun).Scan(&id)
	store.Close()
	if err != nil {
		t.Fatal(err)
	}
	path := changedFixture(t,
		fmt.Sprintf(`UPDATE attempts SET verdict = 'golden', flags = 'reads-process' WHERE id = %d`, id),
		fmt.Sprintf(`INSERT INTO attempt_flags (attempt_id, idx, flag, path, line, detail) VALUES (%d, 0, 'reads-process', 'recipe.py', 12, 'open("/proc/self/mem")')`, id),
		fmt.Sprintf(`UPDATE attempts SET verdict = 'in_process_canary' WHERE run_id = '%s' AND id <> %d AND status = 'finished'`, mainRun, id),
		fmt.Sprintf(`UPDATE tasks SET tags = '["impossible"]' WHERE run_id = '%s' AND id = 'recipe-trailing-dot'`, mainRun))
	hs := testServer(t, path)
	_, page := get(t, fmt.Sprintf("%s/attempts/%d", hs.URL, id))
	if v := section(t, page, "verdict"); !strings.Contains(v, "Verdict: golden, out of the agent&#39;s reach") {
		t.Errorf("the attempt page does not give the verdict kind: %s", v)
	}
	if f := section(t, page, "flags"); !strings.Contains(f, "reads-process") || !strings.Contains(f, "recipe.py:12") {
		t.Errorf("the attempt page does not list the flag: %s", f)
	}
	_, run := get(t, hs.URL+"/runs/"+mainRun)
	v := section(t, run, "verdicts")
	for _, want := range []string{"golden 1 (1)", "in_process_canary", "hack-rate", "attempts on impossible tasks rewarded 1", "verdict-warning"} {
		if !strings.Contains(v, want) {
			t.Errorf("the run page's verdicts lack %q:\n%s", want, v)
		}
	}
}
