package view

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/benchhq/bench/results"
)

// The browser tests drive Debian's chromium, headless, through the
// DevTools protocol. Without chromium they skip, unless
// BENCH_REQUIRE_CHROMIUM=1 (CI), where they fail. Screenshots of the main
// pages go to $BENCH_SCREENSHOTS (default: a temporary folder).

// browser is a headless Chromium with one tab, and the console messages
// of error level its pages wrote.
type browser struct {
	t   *testing.T
	ctx context.Context
	dir string

	mu     sync.Mutex
	errors []string
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	path := os.Getenv("BENCH_CHROMIUM")
	if path == "" {
		for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
			if p, err := exec.LookPath(name); err == nil {
				path = p
				break
			}
		}
	}
	if path == "" {
		if os.Getenv("BENCH_REQUIRE_CHROMIUM") == "1" {
			t.Fatal("chromium not found and BENCH_REQUIRE_CHROMIUM=1 (apt-get install chromium)")
		}
		t.Skip("chromium not found: apt-get install chromium to run the browser tests")
	}
	shots := os.Getenv("BENCH_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	} else if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	profile, err := os.MkdirTemp("", "bench-view-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Chromium's helpers may write for a moment after it stops.
		for range 50 {
			if os.RemoveAll(profile) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	// This machine's network is closed: everything that would reach out
	// (updates, sync, safe browsing) is off.
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1400, 1000),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	ctx, cancelTimeout := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(cancelTimeout)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium (%s): %v", path, err)
	}
	b := &browser{t: t, ctx: ctx, dir: shots}
	msgs := chromedp.Console(ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				b.mu.Lock()
				b.errors = append(b.errors, fmt.Sprintf("%s (%s:%d)", m, m.URL, m.Line))
				b.mu.Unlock()
			}
		}
	}()
	return b
}

// open navigates to u and fails the test on a status other than want.
func (b *browser) open(u string, want int64) {
	b.t.Helper()
	resp, err := chromedp.Run(b.ctx, chromedp.NavigateResponse(u))
	if err != nil {
		b.t.Fatalf("open %s: %v", u, err)
	}
	if resp.Status != want {
		b.t.Fatalf("open %s: HTTP %d, want %d", u, resp.Status, want)
	}
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](b *browser, js string) T {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](js))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// shoot saves a screenshot of the whole page as name.png.
func (b *browser) shoot(name string) {
	b.t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(b.dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot: %s", path)
}

// noConsoleErrors fails the test if a page wrote an error to the console.
func (b *browser) noConsoleErrors() {
	b.t.Helper()
	time.Sleep(100 * time.Millisecond) // let the last events arrive
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, e := range b.errors {
		b.t.Errorf("console error: %s", e)
	}
	b.errors = nil
}

func TestBrowserPages(t *testing.T) {
	b := newBrowser(t)
	hs := testServer(t, fixtureDB)

	// The runs page.
	b.open(hs.URL+"/", 200)
	if n := eval[int](b, `document.querySelectorAll("#runs-table tbody tr").length`); n != 2 {
		t.Errorf("runs listed: %d, want 2", n)
	}
	if got := eval[string](b, `document.querySelector("tr[data-run='two-arms'] td:nth-child(7)").textContent`); got != "14/16" {
		t.Errorf("progress of run two-arms: %q, want 14/16 (two infrastructure failures)", got)
	}
	b.shoot("runs")

	// The run page: arms, comparison, plots, grid.
	b.open(hs.URL+"/runs/"+mainRun, 200)
	if n := eval[int](b, `document.querySelectorAll("#arms-table tbody tr").length`); n != 3 {
		t.Errorf("arm rows: %d, want 3 (two arms and all arms)", n)
	}
	if n := eval[int](b, `document.querySelectorAll("#grid-table a.m").length`); n != 16 {
		t.Errorf("attempt marks in the grid: %d, want 16", n)
	}
	for _, id := range []string{"plot-pass-rate", "plot-tool-sets", "plot-tools", "plot-advantage", "plot-turns", "plot-prompt"} {
		if !eval[bool](b, fmt.Sprintf(`!!document.querySelector("#%s svg")`, id)) {
			t.Errorf("plot %s is not drawn", id)
		}
	}
	if n := eval[int](b, `document.querySelectorAll("#time svg rect").length`); n < 4*3 {
		t.Errorf("time bars: %d rectangles, want the parts of two arms and of all arms, and the legend", n)
	}
	if got := eval[string](b, `document.querySelector("#time-line").textContent`); !strings.Contains(got, "dominated") {
		t.Errorf("time line: %q", got)
	}
	if n := eval[int](b, `document.querySelectorAll("#arms-table td.test50").length`); n != 3 {
		t.Errorf("test p50 cells: %d, want 3", n)
	}
	if n := eval[int](b, `document.querySelectorAll("#plot-pass-rate circle").length`); n != 2 {
		t.Errorf("pass-rate dots: %d, want one per arm", n)
	}
	if got := eval[string](b, `document.querySelector("#cmp-table td.diff").textContent`); !strings.HasSuffix(got, "pp") {
		t.Errorf("comparison diff cell: %q", got)
	}
	b.shoot("run")

	// A filter chosen in the form lands in the URL (the page's script
	// submits on change), and the grid fades the attempts it leaves out.
	b.navigateBy(`const s = document.querySelector('select[name="outcome"]'); s.value = "pass"; s.dispatchEvent(new Event("change")); true`)
	if loc := eval[string](b, `location.search`); loc != "?arm=&task=&outcome=pass&stop=" {
		t.Errorf("filtered location: %q", loc)
	}
	passes := eval[int](b, `document.querySelectorAll("#grid-table a.m.pass:not(.dim)").length`)
	if dim := eval[int](b, `document.querySelectorAll("#grid-table a.m.dim").length`); passes == 0 || dim != 16-passes {
		t.Errorf("with outcome=pass: %d passing marks, %d faded; want the 16-%d others faded", passes, dim, passes)
	}
	b.shoot("run-filtered")

	// A mark leads to its attempt.
	b.navigateBy(`document.querySelector("#grid-table a.m.pass").click(); true`)
	if !strings.HasPrefix(eval[string](b, `location.pathname`), "/attempts/") || !eval[bool](b, `!!document.querySelector("#trajectory .msg.system")`) {
		t.Errorf("a mark did not lead to an attempt page: %s", eval[string](b, `location.href`))
	}
	b.noConsoleErrors()

	// An attempt with an MCP server: calls, catalog, hidden tests.
	store, err := results.OpenReadOnly(b.ctx, fixtureDB)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var id int64
	if err := store.DB().Get(&id, `SELECT id FROM attempts WHERE run_id = ? AND arm = 'full' AND task_id = 'mcp-parser-issue' AND idx = 0`, mainRun); err != nil {
		t.Fatal(err)
	}
	b.open(fmt.Sprintf("%s/attempts/%d", hs.URL, id), 200)
	if n := eval[int](b, `document.querySelectorAll("#trajectory .call").length`); n != 4 {
		t.Errorf("tool calls shown: %d, want 4", n)
	}
	if n := eval[int](b, `document.querySelectorAll("#servers .tools-list tbody tr").length`); n != 3 {
		t.Errorf("catalog rows of the issues server: %d, want 3", n)
	}
	if got := eval[string](b, `document.querySelector("#reward").textContent`); got != "1" {
		t.Errorf("reward shown: %q, want 1", got)
	}
	var stored struct {
		Cases int    `db:"cases"`
		Diff  string `db:"diff"`
	}
	if err := store.DB().Get(&stored, `SELECT (SELECT count(*) FROM test_cases WHERE attempt_id = ?) AS cases,
		(SELECT diff FROM attempt_changes WHERE attempt_id = ?) AS diff`, id, id); err != nil {
		t.Fatal(err)
	}
	if n := eval[int](b, `document.querySelectorAll("#verdicts-table tbody tr").length`); n != stored.Cases || n == 0 {
		t.Errorf("verdicts shown: %d, the store holds %d", n, stored.Cases)
	}
	if n := eval[int](b, `document.querySelectorAll("#verdicts-table td.pass").length`); n != stored.Cases {
		t.Errorf("passing verdicts of a passing attempt: %d of %d", n, stored.Cases)
	}
	added := 0
	for _, l := range strings.Split(stored.Diff, "\n") {
		if strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "+++") {
			added++
		}
	}
	if n := eval[int](b, `document.querySelectorAll("#diff pre.diff span.add").length`); n != added || n == 0 {
		t.Errorf("added lines shown: %d, the stored diff adds %d", n, added)
	}
	// An added line is coloured, a context line is not.
	if add, ctx := eval[string](b, `getComputedStyle(document.querySelector("#diff span.add")).backgroundColor`),
		eval[string](b, `getComputedStyle(document.querySelector("#diff span.ctx")).backgroundColor`); add == ctx {
		t.Errorf("added lines are not coloured: %s, context %s", add, ctx)
	}
	if !eval[bool](b, `document.querySelector("#diff").open`) {
		t.Errorf("a short diff is folded")
	}
	if n := eval[int](b, `document.querySelectorAll("#time-split svg rect").length`); n < 5 {
		t.Errorf("the attempt's time bar: %d rectangles", n)
	}
	b.shoot("attempt")
	eval[bool](b, `document.querySelector('button[data-fold="open"]').click(); true`)
	if closed := eval[int](b, `document.querySelectorAll("details.fold:not([open])").length`); closed != 0 {
		t.Errorf("after unfold all, %d texts are still folded", closed)
	}
	eval[bool](b, `document.querySelector('button[data-fold="close"]').click(); true`)
	b.noConsoleErrors()

	// An attempt that failed its recorded tests, its write denied.
	if err := store.DB().Get(&id, `SELECT id FROM attempts WHERE run_id = ? AND arm = 'read-only' AND task_id = 'recipe-trailing-dot' AND idx = 0`, mainRun); err != nil {
		t.Fatal(err)
	}
	b.open(fmt.Sprintf("%s/attempts/%d", hs.URL, id), 200)
	if n := eval[int](b, `document.querySelectorAll("#verdicts-table td.fail").length`); n != 3 {
		t.Errorf("failed verdicts: %d, want the 3 fail-to-pass tests", n)
	}
	if got := eval[string](b, `document.querySelector("#basis").textContent`); !strings.Contains(got, "4 recorded tests") {
		t.Errorf("basis: %q", got)
	}
	b.shoot("attempt-failed")
	b.noConsoleErrors()

	// The list of attempts and the comparisons.
	b.open(hs.URL+"/runs/"+mainRun+"/attempts?arm=read-only", 200)
	if n := eval[int](b, `document.querySelectorAll("#attempts-table tbody tr").length`); n != 8 {
		t.Errorf("attempts of read-only: %d, want 8", n)
	}
	b.shoot("attempts")
	b.open(hs.URL+"/compare?a="+mainRun, 200)
	if n := eval[int](b, `document.querySelectorAll("#compare-table tbody tr").length`); n != 2 {
		t.Errorf("compared tasks: %d, want 2", n)
	}
	b.shoot("compare")
	b.open(hs.URL+"/compare?a="+mainRun+"&b="+secondRun, 200)
	if got := eval[string](b, `document.querySelector("h1").textContent`); !strings.Contains(got, secondRun+"/full") {
		t.Errorf("cross-run comparison title: %q", got)
	}
	b.noConsoleErrors()

	// The file of bench report --format html, from disk: styled, with no
	// script, no link to a server, nothing loaded.
	file := filepath.Join(t.TempDir(), "run.html")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteReport(b.ctx, f, store, mainRun, "bench.db", results.ReportOptions{}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := chromedp.Do(b.ctx, chromedp.Navigate("file://"+file)); err != nil {
		t.Fatal(err)
	}
	if n := eval[int](b, `document.querySelectorAll("script, link[rel=stylesheet], a[href^='/']").length`); n != 0 {
		t.Errorf("the standalone report has %d scripts, style links or server links", n)
	}
	if got := eval[string](b, `getComputedStyle(document.querySelector("#arms-table")).borderCollapse`); got != "collapse" {
		t.Errorf("the standalone report is not styled (border-collapse %q)", got)
	}
	if n := eval[int](b, `document.querySelectorAll("#grid-table span.m").length`); n != 16 {
		t.Errorf("marks in the standalone report: %d, want 16", n)
	}
	b.shoot("report-html")
	b.noConsoleErrors()

	// An unknown run: a page that says so, status 404.
	b.open(hs.URL+"/runs/nope", 404)
	if got := eval[string](b, `document.querySelector("#error-message").textContent`); !strings.Contains(got, `"nope"`) {
		t.Errorf("error page: %q", got)
	}
	b.shoot("error")
}

// An unisolated run with a task scored on the exit status alone: the
// banners are shown, and the runs page marks the run.
func TestBrowserUnisolatedRun(t *testing.T) {
	b := newBrowser(t)
	hs := testServer(t, changedFixture(t,
		fmt.Sprintf(`UPDATE runs SET isolation = 'none' WHERE id = '%s'`, mainRun),
		fmt.Sprintf(`UPDATE tasks SET report = '', verdict = 'exit_status' WHERE run_id = '%s' AND id = 'recipe-trailing-dot'`, mainRun)))
	b.open(hs.URL+"/runs/"+mainRun, 200)
	for _, id := range []string{"isolation-banner", "exit-status-banner"} {
		if !eval[bool](b, fmt.Sprintf(`(() => { const e = document.querySelector("#%s"); return !!e && e.getBoundingClientRect().height > 0 })()`, id)) {
			t.Errorf("banner %s is not shown", id)
		}
	}
	if got := eval[string](b, `getComputedStyle(document.querySelector("#isolation-banner")).borderLeftColor`); got == eval[string](b, `getComputedStyle(document.querySelector("#exit-status-banner")).borderLeftColor`) {
		t.Errorf("the unisolated run's banner looks like a warning's: %s", got)
	}
	if n := eval[int](b, `document.querySelectorAll("#grid-table .tag.warn").length`); n != 1 {
		t.Errorf("tasks marked as scored on the exit status: %d, want 1", n)
	}
	b.shoot("run-unisolated")
	b.open(hs.URL+"/", 200)
	if got := eval[string](b, `document.querySelector("tr[data-isolation='none'] .tag").textContent`); got != "unisolated" {
		t.Errorf("runs page tag: %q", got)
	}
	b.shoot("runs-unisolated")
	b.noConsoleErrors()
}

// navigateBy runs js, which makes the page navigate, and waits for the
// new page.
func (b *browser) navigateBy(js string) {
	b.t.Helper()
	step := func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := chromedp.Evaluate[bool](js)(ctx, t)
		return chromedp.Void{}, err
	}
	if _, err := chromedp.RunResponse(b.ctx, step); err != nil {
		b.t.Fatalf("navigate by %s: %v", js, err)
	}
}

// TestBrowserBigRun shows a run of the big store (bench_test.go) in the
// browser, when BENCH_VIEW_ATTEMPTS sets its size: the grid is paged and
// the page is whole.
func TestBrowserBigRun(t *testing.T) {
	if os.Getenv("BENCH_VIEW_ATTEMPTS") == "" {
		t.Skip("BENCH_VIEW_ATTEMPTS is not set: no big store")
	}
	db, _ := bigStore(t)
	b := newBrowser(t)
	hs := testServer(t, db)
	b.open(hs.URL+"/runs/"+bigRun+"?page=2", 200)
	if n := eval[int](b, `document.querySelectorAll("#grid-table tbody tr").length`); n != tasksPerPage {
		t.Errorf("grid rows: %d, want %d", n, tasksPerPage)
	}
	b.shoot("run-big")
	b.noConsoleErrors()
}
