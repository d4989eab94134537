package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/benchhq/bench/internal/ollamatest"
)

// fakeRun runs the recipe task twice against the fake model and returns
// the results file.
func fakeRun(t *testing.T) string {
	t.Helper()
	srv := ollamatest.New(ollamatest.Turns(ollamatest.Reply{Content: "I give up."}))
	t.Cleanup(srv.Close)
	db := filepath.Join(t.TempDir(), "bench.db")
	if code, _, stderr := bench(t, "run", "--host", srv.URL, "--model", "fake", "--task", recipeTask, "--attempts", "2",
		"--db", db, "--sandbox", "off", "--no-progress", "--name", "r1"); code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	return db
}

func TestViewBadFlags(t *testing.T) {
	db := fakeRun(t)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"view", "--db", db, "--addr", "0.0.0.0:0"}, "not a loopback address"},
		{[]string{"view", "--db", db, "--addr", ":0"}, "not a loopback address"},
		{[]string{"view", "--db", db, "--addr", "localhost"}, "expected HOST:PORT"},
		{[]string{"view", "--db", filepath.Join(t.TempDir(), "none.db")}, "no such file"},
		{[]string{"view", "--db", db, "extra"}, "unexpected argument"},
		{[]string{"report", "--db", db, "--format", "pdf"}, "markdown, csv), or html"},
	}
	for _, tt := range tests {
		code, _, stderr := bench(t, tt.args...)
		if code != 2 || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tt.args, code, stderr, tt.want)
		}
	}
}

func TestViewServesUntilCanceled(t *testing.T) {
	db := fakeRun(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, w := io.Pipe()
	done := make(chan int, 1)
	var stderr strings.Builder
	go func() {
		done <- Main(ctx, []string{"view", "--db", db, "--addr", "127.0.0.1:0"}, w, &stderr)
		w.Close()
	}()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("no URL printed: %v (stderr %s)", err, stderr.String())
	}
	url := regexp.MustCompile(`http://127\.0\.0\.1:\d+/`).FindString(line)
	if url == "" {
		t.Fatalf("no URL in %q", line)
	}
	go io.Copy(io.Discard, out)
	for _, p := range []string{"", "runs/r1"} {
		resp, err := http.Get(url + p)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(b), "r1") {
			t.Errorf("GET /%s: %d", p, resp.StatusCode)
		}
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d after the context ended: %s", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("bench view did not stop")
	}
}

func TestReportFormatHTML(t *testing.T) {
	db := fakeRun(t)
	code, page, stderr := bench(t, "report", "--db", db, "--format", "html")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// The run used --sandbox off: the file says so first, as bench report does.
	for _, want := range []string{"<!doctype html>", "Run r1", `id="arms-table"`, "0/2", "<style>",
		`<p class="banner bad" id="isolation-banner">UNISOLATED: run with --sandbox off`, `<dd id="isolation">none</dd>`, `id="time-table"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the html report lacks %q", want)
		}
	}
	if strings.Contains(page, "<script") {
		t.Errorf("the html report has a script")
	}
}
