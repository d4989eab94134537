package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/benchhq/bench/runner"
)

func readme(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Every flag of bench run -h is in the README's table of run's flags, each
// help line says its default once, and the README's defaults are the code's.
func TestRunHelpAndReadmeAgree(t *testing.T) {
	code, _, help := bench(t, "run", "-h")
	if code != 0 {
		t.Fatalf("run -h: exit %d", code)
	}
	if strings.Contains(help, ") (default") {
		t.Errorf("run -h says a default twice:\n%s", help)
	}
	doc := readme(t)
	_, table, _ := strings.Cut(doc, "### `bench run`")
	table, _, _ = strings.Cut(table, "#### The run file")
	for _, m := range regexp.MustCompile(`(?m)^  -([a-z-]+)`).FindAllStringSubmatch(help, -1) {
		name := m[1]
		want := "`--" + name
		if name == "j" {
			want = "`-j N`"
		}
		if !strings.Contains(table, want) {
			t.Errorf("README's bench run table lacks %s", want)
		}
	}
	if want := fmt.Sprintf("infrastructure failure (default %d)", runner.DefaultMaxTries); !strings.Contains(table, want) {
		t.Errorf("README's --max-tries default is not %d", runner.DefaultMaxTries)
	}
}

// The README's layout table names every package of the module.
func TestReadmeLayoutListsEveryPackage(t *testing.T) {
	doc := readme(t)
	_, layout, _ := strings.Cut(doc, "## Layout")
	layout, _, _ = strings.Cut(layout, "\n## ")
	seen := map[string]bool{}
	err := filepath.WalkDir("../..", func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && p != "../.." || d.Name() == "suites" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel("../..", filepath.Dir(p))
		if top, _, _ := strings.Cut(rel, "/"); top == "cmd" || top == "servers" {
			rel = filepath.Join(top, strings.Split(rel, "/")[1])
		}
		seen[filepath.ToSlash(rel)] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for dir := range seen {
		if !strings.Contains(layout, "`"+dir+"`") {
			t.Errorf("README's layout table lacks %s", dir)
		}
	}
}
