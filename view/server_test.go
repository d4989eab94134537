package view

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/benchhq/bench/results"
)

func TestPagesRender(t *testing.T) {
	hs := testServer(t, fixtureDB)
	for _, path := range []string{"/", "/runs/" + mainRun, "/runs/" + mainRun + "/attempts", "/attempts/1",
		"/compare?a=" + mainRun, "/compare?a=" + mainRun + "&b=" + secondRun, "/assets/style.css", "/assets/view.js"} {
		code, body := get(t, hs.URL+path)
		if code != http.StatusOK {
			t.Errorf("GET %s: %d\n%s", path, code, body)
		}
		if strings.HasPrefix(path, "/assets/") {
			continue
		}
		if !strings.Contains(body, "</html>") {
			t.Errorf("GET %s: no whole page", path)
		}
		if strings.Contains(body, "http://") || strings.Contains(body, "https://") {
			t.Errorf("GET %s: the page refers to another site", path)
		}
	}
}

// openFixture opens the fixture database read-only.
func openFixture(t *testing.T) *results.Store {
	t.Helper()
	store, err := results.OpenReadOnly(context.Background(), fixtureDB)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return store
}

// row returns the table row of the page whose attribute data-KEY is val,
// within the element of id table.
func row(t *testing.T, page, table, key, val string) string {
	t.Helper()
	i := strings.Index(page, `id="`+table+`"`)
	if i < 0 {
		t.Fatalf("no table %s in the page", table)
	}
	page = page[i:]
	page = page[:strings.Index(page, "</table>")]
	m := regexp.MustCompile(`(?s)<tr[^>]*data-` + key + `="` + regexp.QuoteMeta(val) + `"[^>]*>(.*?)</tr>`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no row %s=%q in table %s", key, val, table)
	}
	return m[1]
}

// dataValue returns the data-v attribute of the cell of class class.
func dataValue(t *testing.T, row, class string) string {
	t.Helper()
	m := regexp.MustCompile(`class="[^"]*\b` + class + `\b[^"]*"[^>]*data-v="([^"]*)"`).FindStringSubmatch(row)
	if m == nil {
		t.Fatalf("no cell of class %s with a value in %s", class, row)
	}
	return html.UnescapeString(m[1])
}

func TestRunPageShowsTheReportsNumbers(t *testing.T) {
	store := openFixture(t)
	rep, err := store.Report(context.Background(), mainRun, results.ReportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hs := testServer(t, fixtureDB)
	code, page := get(t, hs.URL+"/runs/"+mainRun)
	if code != 200 {
		t.Fatalf("run page: %d", code)
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, m := range rep.Arms {
		r := row(t, page, "arms-table", "arm", m.Arm)
		if got, want := dataValue(t, r, "rate"), f(*m.PassRate); got != want {
			t.Errorf("arm %s: pass rate %s, report says %s", m.Arm, got, want)
		}
		if got, want := dataValue(t, r, "ci"), f(m.PassRateCI95[0])+","+f(m.PassRateCI95[1]); got != want {
			t.Errorf("arm %s: interval %s, report says %s", m.Arm, got, want)
		}
		if !strings.Contains(r, fmt.Sprintf("<td>%d/%d</td>", m.Passes, m.Finished)) || !strings.Contains(r, fmt.Sprintf("<td>%d</td>", m.InfraErrors)) {
			t.Errorf("arm %s: passes %d/%d or infra %d not shown:\n%s", m.Arm, m.Passes, m.Finished, m.InfraErrors, r)
		}
	}
	if len(rep.Comparisons) != 1 {
		t.Fatalf("comparisons: %d", len(rep.Comparisons))
	}
	c := rep.Comparisons[0]
	r := row(t, page, "cmp-table", "arm", c.Arm)
	if got := dataValue(t, r, "diff"); got != f(*c.MeanDiff) {
		t.Errorf("mean diff %s, report says %v", got, *c.MeanDiff)
	}
	if got := dataValue(t, r, "p"); got != f(*c.P) {
		t.Errorf("p %s, report says %v", got, *c.P)
	}
	// The fixture's numbers, so that a wrong computation fails here too.
	if rep.Arms[0].Passes != 5 || rep.Arms[0].Finished != 7 || rep.Arms[1].Passes != 0 || rep.Total.InfraErrors != 2 {
		t.Errorf("fixture: full %d/%d, read-only %d/%d, infra %d; want 5/7, 0/7, 2",
			rep.Arms[0].Passes, rep.Arms[0].Finished, rep.Arms[1].Passes, rep.Arms[1].Finished, rep.Total.InfraErrors)
	}
	// Each attempt is a mark linked to its page, coloured by its outcome.
	if n := strings.Count(page, `<a class="m pass" href="/attempts/`); n != 5 {
		t.Errorf("passing marks: %d, want 5", n)
	}
	if n := strings.Count(page, `<a class="m infra_error" href="/attempts/`); n != 2 {
		t.Errorf("infrastructure-failure marks: %d, want 2", n)
	}
}

func TestReportHTMLIsTheRunPageStandalone(t *testing.T) {
	store := openFixture(t)
	var b bytes.Buffer
	if err := WriteReport(context.Background(), &b, store, mainRun, "bench.db", results.ReportOptions{}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	rep, err := store.Report(context.Background(), mainRun, results.ReportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := row(t, page, "arms-table", "arm", "full")
	if got := dataValue(t, r, "rate"); got != strconv.FormatFloat(*rep.Arms[0].PassRate, 'g', -1, 64) {
		t.Errorf("pass rate %s", got)
	}
	for _, bad := range []string{"<script", `href="/`, `src="/`, "<link rel=\"stylesheet\""} {
		if strings.Contains(page, bad) {
			t.Errorf("the standalone page holds %q", bad)
		}
	}
	if !strings.Contains(page, "<style>") || !strings.Contains(page, "<svg") {
		t.Errorf("the standalone page lacks its styles or its plots")
	}
	if n := strings.Count(page, `<span class="m pass"`); n != 5+1 { // the marks and the legend's
		t.Errorf("passing marks: %d, want 5 and the legend's", n)
	}
}

func TestBadInputGetsAPageThatSaysSo(t *testing.T) {
	hs := testServer(t, fixtureDB)
	tests := []struct {
		path string
		code int
		want string
	}{
		{"/runs/nope", 404, `no run &#34;nope&#34;`},
		{"/runs/nope/attempts", 404, `no run &#34;nope&#34;`},
		{"/attempts/999999", 404, "no attempt 999999"},
		{"/attempts/abc", 400, `attempt id &#34;abc&#34;: expected a positive number`},
		{"/attempts/1/text?part=secrets&i=0", 400, "part &#34;secrets&#34;"},
		{"/attempts/1/text?part=result&i=99", 400, "expected an index"},
		{"/runs/" + mainRun + "?outcome=win", 400, "outcome &#34;win&#34; is not an outcome: expected one of pass, fail, infra_error, canceled"},
		{"/runs/" + mainRun + "?stop=bored", 400, "stop &#34;bored&#34; is not a stop reason"},
		{"/runs/" + mainRun + "?arm=nope", 400, "arm &#34;nope&#34; is not an arm of run two-arms: expected one of full, read-only"},
		{"/runs/" + mainRun + "?task=nope", 400, "task &#34;nope&#34; is not a task of run"},
		{"/runs/" + mainRun + "?page=0", 400, "page &#34;0&#34;: expected a page number"},
		{"/runs/" + mainRun + "?colour=red", 400, "unknown parameter &#34;colour&#34;"},
		{"/runs/" + mainRun + "/attempts?outcome=", 200, ""},
		{"/compare", 400, "compare needs a=RUN"},
		{"/compare?a=nope", 404, `no run &#34;nope&#34;`},
		{"/compare?a=" + mainRun + "&b_arm=nope", 400, `arm &#34;nope&#34; is not an arm of the run`},
		{"/compare?a=" + mainRun + "&x=1", 400, "unknown parameter"},
		{"/no/such/page", 404, "is not a page of bench view"},
	}
	for _, tt := range tests {
		code, body := get(t, hs.URL+tt.path)
		if code != tt.code {
			t.Errorf("GET %s: status %d, want %d", tt.path, code, tt.code)
		}
		if !strings.Contains(body, tt.want) {
			t.Errorf("GET %s: the page does not say %q:\n%s", tt.path, tt.want, body)
		}
		if strings.Contains(body, "goroutine ") || strings.Contains(body, ".go:") {
			t.Errorf("GET %s: the page shows a stack trace", tt.path)
		}
	}
	// The server goes on serving.
	if code, _ := get(t, hs.URL+"/"); code != 200 {
		t.Errorf("after bad requests, / answers %d", code)
	}
}

func TestNotABenchDatabase(t *testing.T) {
	dir := t.TempDir()
	notes := filepath.Join(dir, "notes.db")
	os.WriteFile(notes, []byte("these are my notes, not a database\n"), 0o644)
	other := filepath.Join(dir, "other.db")
	db, err := sql.Open("sqlite", other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE people (name TEXT)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	otherBytes, _ := os.ReadFile(other)
	for _, path := range []string{notes, other} {
		s, err := New(context.Background(), path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !errors.Is(s.Err(), results.ErrNotBenchDatabase) {
			t.Errorf("%s: Err() = %v, want not a bench database", path, s.Err())
		}
		hs := testServerOf(t, s)
		for _, p := range []string{"/", "/runs/x", "/attempts/1"} {
			code, body := get(t, hs.URL+p)
			if code != http.StatusInternalServerError || !strings.Contains(body, "Not a bench database") || !strings.Contains(body, "has changed nothing") {
				t.Errorf("%s GET %s: %d\n%s", filepath.Base(path), p, code, body)
			}
		}
	}
	if b, _ := os.ReadFile(notes); string(b) != "these are my notes, not a database\n" {
		t.Errorf("notes.db was modified")
	}
	if b, _ := os.ReadFile(other); !bytes.Equal(b, otherBytes) {
		t.Errorf("other.db was modified")
	}
}

func TestAFileThatBecomesABenchDatabaseIsRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bench.db")
	os.WriteFile(path, []byte("not yet"), 0o644)
	s, err := New(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	hs := testServerOf(t, s)
	if code, _ := get(t, hs.URL+"/"); code != 500 {
		t.Fatalf("before: %d, want 500", code)
	}
	copyFile(t, fixtureDB, path)
	if code, body := get(t, hs.URL+"/"); code != 200 || !strings.Contains(body, mainRun) {
		t.Errorf("after the file became a bench database: %d", code)
	}
}

func TestFiltersInTheURL(t *testing.T) {
	hs := testServer(t, fixtureDB)
	tests := []struct {
		query string
		rows  int
	}{
		{"", 16},
		{"?arm=read-only", 8},
		{"?outcome=pass", 5},
		{"?outcome=pass,infra_error", 7},
		{"?outcome=pass&outcome=infra_error", 7},
		{"?arm=full&task=mcp-parser-issue", 4},
		{"?stop=answered&arm=full", 7},
		{"?stop=infra_error", 2},
	}
	for _, tt := range tests {
		code, page := get(t, hs.URL+"/runs/"+mainRun+"/attempts"+tt.query)
		if code != 200 {
			t.Fatalf("%s: %d", tt.query, code)
		}
		body := page[strings.Index(page, `id="attempts-table"`):]
		body = body[:strings.Index(body, "</table>")]
		if n := strings.Count(body, "<tr>") - 1; n != tt.rows {
			t.Errorf("attempts%s: %d rows, want %d", tt.query, n, tt.rows)
		}
		// The run page takes the same filter: its grid keeps the arms
		// and tasks, and fades the attempts of other outcomes.
		code, page = get(t, hs.URL+"/runs/"+mainRun+tt.query)
		if code != 200 {
			t.Fatalf("run page %s: %d", tt.query, code)
		}
		if tt.query != "" && !strings.Contains(page, fmt.Sprintf("%d of 16 attempts match the filter", tt.rows)) {
			t.Errorf("run page%s does not say %d of 16 match", tt.query, tt.rows)
		}
	}
	_, page := get(t, hs.URL+"/runs/"+mainRun+"?arm=read-only")
	if strings.Contains(row(t, page, "arms-table", "arm", "read-only"), "full") || strings.Contains(page, `data-arm="full"`) {
		t.Errorf("arm=read-only still shows the arm full")
	}
}

func TestAttemptPage(t *testing.T) {
	store := openFixture(t)
	var id int64
	if err := store.DB().Get(&id, `SELECT id FROM attempts WHERE run_id = ? AND arm = 'read-only' AND task_id = 'recipe-trailing-dot' AND idx = 0`, mainRun); err != nil {
		t.Fatal(err)
	}
	hs := testServer(t, fixtureDB)
	code, page := get(t, fmt.Sprintf("%s/attempts/%d", hs.URL, id))
	if code != 200 {
		t.Fatalf("%d", code)
	}
	for _, want := range []string{
		"You are a careful software engineer",            // the system prompt
		"recipe.ingredients()",                           // the instruction
		`<span class="decision-deny">deny</span>`,        // the denied write
		"error: denied",                                  // its error kind
		"prompt eval",                                    // a turn's durations
		"python3 -m unittest -v test_recipe_hidden",      // the hidden tests' command
		`id="reward">0<`,                                 // the reward
		"the same task and index (same seed) under",      // the pair under the other arm
		`class="mono">path</th>`,                         // an argument by name
		"The parser keeps the period; I will rewrite it", // the assistant's words
	} {
		if !strings.Contains(page, html.EscapeString(want)) && !strings.Contains(page, want) {
			t.Errorf("the attempt page lacks %q", want)
		}
	}
	// Its write was denied: nothing was carried into scoring, and the page
	// says so rather than showing an empty diff.
	if !strings.Contains(page, `id="no-carried"`) || strings.Contains(page, `id="diff"`) {
		t.Errorf("the page does not say that nothing was carried, or shows a diff the store does not hold")
	}
	if strings.Contains(page, "stored by a later schema") {
		t.Errorf("the page shows tables of this schema as a later schema's")
	}
}

func TestAttemptPageShowsWhatALaterSchemaStores(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bench.db")
	copyFile(t, fixtureDB, path)
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	var id int64
	if err := db.QueryRow(`SELECT id FROM attempts WHERE run_id = ? AND arm = 'full' AND task_id = 'recipe-trailing-dot' AND idx = 0`, mainRun).Scan(&id); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`CREATE TABLE attempt_lint (attempt_id INTEGER, idx INTEGER, rule TEXT, finding TEXT)`,
		fmt.Sprintf(`INSERT INTO attempt_lint VALUES (%d, 0, 'E501', 'line too long'), (%d, 1, 'W291', 'trailing whitespace')`, id, id),
		`ALTER TABLE attempts ADD COLUMN sandbox_profile TEXT`,
		fmt.Sprintf(`UPDATE attempts SET sandbox_profile = 'strict-net' WHERE id = %d`, id),
		fmt.Sprintf(`UPDATE tool_calls SET result = printf('%%.*c', 300000, 'x') WHERE attempt_id = %d AND idx = 1`, id),
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()
	hs := testServer(t, path)
	_, page := get(t, fmt.Sprintf("%s/attempts/%d", hs.URL, id))
	for _, want := range []string{
		"attempt_lint", "E501", "line too long", "trailing whitespace",
		"sandbox_profile", "strict-net", "stored by a later schema",
		"Shown: the first 256 KB of", fmt.Sprintf(`/attempts/%d/text?part=result&amp;i=1`, id),
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the attempt page lacks %q", want)
		}
	}
	// The tables of this schema are still shown as themselves, once.
	if strings.Count(page, `id="verdicts-table"`) != 1 || strings.Count(page, `id="diff"`) != 1 {
		t.Errorf("the verdicts or the diff are not shown once")
	}
	code, text := get(t, fmt.Sprintf("%s/attempts/%d/text?part=result&i=1", hs.URL, id))
	if code != 200 || len(text) != 300000 {
		t.Errorf("the whole text: %d, %d bytes, want 300000", code, len(text))
	}
}

func testServerOf(t *testing.T, s *Server) *httptest.Server {
	t.Helper()
	t.Cleanup(func() { s.Close() })
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(hs.Close)
	return hs
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}

// The view keeps a run's report only while the run does not change.
func TestRunPageFollowsTheStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bench.db")
	copyFile(t, fixtureDB, path)
	hs := testServer(t, path)
	_, page := get(t, hs.URL+"/runs/"+mainRun)
	if r := row(t, page, "arms-table", "arm", "full"); !strings.Contains(r, "<td>5/7</td>") {
		t.Fatalf("before: %s", r)
	}
	ctx := context.Background()
	store, err := results.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	one := 1
	at := time.Now()
	// The infrastructure failure of recipe-trailing-dot #3, tried again.
	if _, err := store.SaveAttempt(ctx, &results.Attempt{RunID: mainRun, Key: results.AttemptKey{Arm: "full", Task: "recipe-trailing-dot", Index: 3},
		Status: results.StatusFinished, Reward: &one, StartedAt: at, FinishedAt: at}); err != nil {
		t.Fatal(err)
	}
	if err := store.FinishRun(ctx, mainRun, results.RunInterrupted); err != nil {
		t.Fatal(err)
	}
	store.Close()
	_, page = get(t, hs.URL+"/runs/"+mainRun)
	if r := row(t, page, "arms-table", "arm", "full"); !strings.Contains(r, "<td>6/8</td>") {
		t.Errorf("after a new attempt, the page still shows: %s", r)
	}
	if !strings.Contains(page, `<span class="status s-interrupted">interrupted</span>`) {
		t.Errorf("the run's new status is not shown")
	}
}
