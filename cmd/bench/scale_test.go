package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/benchhq/bench/internal/ollamatest"
	"github.com/benchhq/bench/internal/openaitest"
	"github.com/benchhq/bench/internal/reporttest"
	"github.com/benchhq/bench/results"
)

// lookScript reads the recipe and answers: reward 0, two turns.
var lookScript = ollamatest.Turns(
	ollamatest.Reply{Calls: []ollamatest.Call{{Name: "read_file", Args: map[string]any{"path": "recipe.py"}}}},
	ollamatest.Reply{Content: "I looked at it."},
)

// reportWithoutTimes is `bench report --format json` of a file, without
// the times that differ from one execution to the next.
func reportWithoutTimes(t *testing.T, db string) map[string]any {
	t.Helper()
	code, out, stderr := bench(t, "report", "--db", db, "--format", "json")
	if code != 0 {
		t.Fatalf("report %s: exit %d: %s", db, code, stderr)
	}
	return reporttest.Timeless(t, []byte(out))
}

// TestShardsOnTheirOwnEndpointsThenMerge is the docs/scale.md recipe:
// each shard runs against its own model server into its own file, and
// bench merge gives the report of the run done in one piece.
func TestShardsOnTheirOwnEndpointsThenMerge(t *testing.T) {
	dir := t.TempDir()
	run := func(db string, extra ...string) string {
		srv := ollamatest.New(lookScript, ollamatest.WithDigest("fake", "d1"))
		defer srv.Close()
		args := append([]string{"run", "--name", "recipe", "--host", srv.URL + "=2", "--model", "fake", "--task", recipeTask,
			"--attempts", "4", "--no-progress", "--db", db}, extra...)
		code, _, stderr := bench(t, args...)
		if code != 0 {
			t.Fatalf("run %v: exit %d\n%s", extra, code, stderr)
		}
		return stderr
	}
	single := filepath.Join(dir, "single.db")
	run(single)
	var shards []string
	for i, sh := range []string{"0/3", "1/3", "2/3"} {
		db := filepath.Join(dir, "shard-"+string(rune('0'+i))+".db")
		stderr := run(db, "--shard", sh)
		if !strings.Contains(stderr, "shard "+sh) || !strings.Contains(stderr, "bench merge") {
			t.Errorf("shard %s does not say it is one, or what to do next:\n%s", sh, stderr)
		}
		shards = append(shards, db)
	}
	code, runs, _ := bench(t, "runs", "--db", shards[1])
	if code != 0 || !strings.Contains(runs, "finished (shard 1/3)") {
		t.Errorf("bench runs of a shard:\n%s", runs)
	}
	merged := filepath.Join(dir, "merged.db")
	code, stdout, stderr := bench(t, append([]string{"merge", merged}, shards...)...)
	if code != 0 {
		t.Fatalf("merge: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stdout, "recipe-trailing-dot") || !strings.Contains(stderr, "3 pieces merged") {
		t.Errorf("merge printed:\n%s\n%s", stdout, stderr)
	}
	if want, got := reportWithoutTimes(t, single), reportWithoutTimes(t, merged); !reflect.DeepEqual(want, got) {
		t.Errorf("merged report differs from the single run's:\n%v\n%v", want, got)
	}

	// Missing pieces: listed, the file kept for a resume, exit 1.
	partial := filepath.Join(dir, "partial.db")
	code, _, stderr = bench(t, "merge", partial, shards[0], shards[2])
	if code != 1 || !strings.Contains(stderr, "missing") || !strings.Contains(stderr, "default/recipe-trailing-dot#1") ||
		!strings.Contains(stderr, "bench run --resume recipe --db "+partial) {
		t.Errorf("merge with a shard missing: exit %d\n%s", code, stderr)
	}
	// Pieces that do not fit: exit 2, nothing written.
	other := filepath.Join(dir, "other-seed.db")
	run(other, "--shard", "1/3", "--seed", "9")
	bad := filepath.Join(dir, "bad.db")
	code, _, stderr = bench(t, "merge", bad, shards[0], other)
	if code != 2 || !strings.Contains(stderr, "seed") {
		t.Errorf("merge of two plans: exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(bad); !os.IsNotExist(err) {
		t.Errorf("a refused merge left %s behind", bad)
	}
	code, _, stderr = bench(t, "merge", bad, shards[0], shards[0])
	if code != 2 || !strings.Contains(stderr, "given twice") {
		t.Errorf("the same input twice: exit %d\n%s", code, stderr)
	}
}

// TestSeveralHosts: two --host flags with slots share a run, the
// concurrency is their slots, and each turn names its server.
func TestSeveralHosts(t *testing.T) {
	a := ollamatest.New(lookScript)
	b := ollamatest.New(lookScript)
	defer a.Close()
	defer b.Close()
	db := filepath.Join(t.TempDir(), "bench.db")
	code, _, stderr := bench(t, "run", "--host", a.URL+"=2", "--host", b.URL+"=2", "--model", "fake", "--task", recipeTask,
		"--attempts", "6", "--no-progress", "--db", db)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "concurrency 4") || !strings.Contains(stderr, a.URL+" (2 slots), "+b.URL+" (2 slots)") {
		t.Errorf("stderr does not show the endpoints and their slots:\n%s", stderr)
	}
	s, err := results.OpenReadOnly(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var eps []string
	if err := s.DB().Select(&eps, `SELECT DISTINCT endpoint FROM turns ORDER BY endpoint`); err != nil {
		t.Fatal(err)
	}
	if len(eps) != 2 {
		t.Errorf("turns were served by %v, want both servers", eps)
	}
}

// TestOpenAIAPIRun: --api openai runs against an OpenAI-compatible
// server, and its errors stop the run before any attempt, saying what to do.
func TestOpenAIAPIRun(t *testing.T) {
	srv := openaitest.New(lookScript, openaitest.WithModels("qwen"), openaitest.WithoutTools("base"))
	defer srv.Close()
	dir := t.TempDir()
	code, stdout, stderr := bench(t, "run", "--api", "openai", "--host", srv.URL+"/v1", "--model", "qwen", "--task", recipeTask,
		"--attempts", "2", "--no-progress", "--db", filepath.Join(dir, "ok.db"))
	if code != 0 || !strings.Contains(stdout, "0/2") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, tt := range []struct{ model, want string }{
		{"nope", "does not serve a model named nope"},
		{"base", "--enable-auto-tool-choice"},
	} {
		db := filepath.Join(dir, tt.model+".db")
		code, _, stderr := bench(t, "run", "--api", "openai", "--host", srv.URL, "--model", tt.model, "--task", recipeTask, "--db", db)
		if code != exitCannotStart || !strings.Contains(stderr, tt.want) || !strings.Contains(stderr, "No attempt was stored") {
			t.Errorf("model %s: exit %d, stderr %q; want it to say %q", tt.model, code, stderr, tt.want)
		}
		if _, err := os.Stat(db); !os.IsNotExist(err) {
			t.Errorf("a failed preflight left %s behind", db)
		}
	}
}

func TestScaleBadInput(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "bench.db")
	files := 0
	runFile := func(body string) string {
		files++
		p := filepath.Join(dir, fmt.Sprintf("run%d.toml", files))
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"bad slots", []string{"run", "--model", "m", "--host", "http://a:1=zero", "--task", recipeTask, "--db", db}, "URL=SLOTS"},
		{"bad api", []string{"run", "--model", "m", "--api", "grpc", "--task", recipeTask, "--db", db}, "--api"},
		{"openai without host", []string{"run", "--model", "m", "--api", "openai", "--task", recipeTask, "--db", db}, "--host"},
		{"openai option", []string{"run", "--model", "m", "--api", "openai", "--host", "http://a:8000", "--config", runFile("[options]\nnum_gpu = 1\n"), "--task", recipeTask, "--db", db}, "num_gpu"},
		{"shard without name", []string{"run", "--model", "m", "--shard", "0/2", "--task", recipeTask, "--db", db}, "--name"},
		{"bad shard", []string{"run", "--model", "m", "--name", "x", "--shard", "2/2", "--task", recipeTask, "--db", db}, "--shard"},
		{"same host twice", []string{"run", "--model", "m", "--host", "http://a:1", "--host", "http://a:1=2", "--task", recipeTask, "--db", db}, "given twice"},
		{"endpoint without url", []string{"run", "--model", "m", "--config", runFile("[[endpoints]]\nslots = 2\n"), "--task", recipeTask, "--db", db}, "endpoints[0].url"},
		{"resume with shard", []string{"run", "--resume", "r", "--shard", "0/2", "--db", db}, "conflict"},
		{"merge one file", []string{"merge", db}, "OUT.db and at least one"},
		{"merge missing input", []string{"merge", db, filepath.Join(dir, "nope.db")}, "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := bench(t, tt.args...)
			if code != 2 || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, tt.want)
			}
		})
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Errorf("bad input left %s behind", db)
	}
}

// TestScaleDocFlagsExist keeps docs/scale.md true: every flag it shows
// for bench run and bench merge is one of theirs.
func TestScaleDocFlagsExist(t *testing.T) {
	doc, err := os.ReadFile("../../docs/scale.md")
	if err != nil {
		t.Fatal(err)
	}
	help := map[string]string{}
	for _, cmd := range []string{"run", "merge"} {
		_, _, h := bench(t, cmd, "-h")
		help[cmd] = h
	}
	line := regexp.MustCompile(`bench (run|merge)\b[^\n]*`)
	flag := regexp.MustCompile(`\s--([a-z][a-z-]+)`)
	n := 0
	for _, l := range line.FindAllStringSubmatch(string(doc), -1) {
		for _, f := range flag.FindAllStringSubmatch(l[0], -1) {
			n++
			if !regexp.MustCompile(`\n  -` + f[1] + `[ \n]`).MatchString(help[l[1]]) {
				t.Errorf("docs/scale.md shows bench %s --%s, which bench %s -h does not list", l[1], f[1], l[1])
			}
		}
	}
	if n < 5 {
		t.Errorf("docs/scale.md shows %d flags: the check found no commands", n)
	}
}
