package evaluator

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/benchhq/bench/evaluator/testreport"
	"github.com/benchhq/bench/tasks"
)

// A canary is a test bench plants in the scoring folder, beside the hidden
// tests, that must fail. Code under test runs in the test process and can
// make that process report anything: patch the test framework so that
// every test passes, or print a complete report of its own and exit 0. A
// forged report of that kind reports the canary as passing, or leaves it
// out; so does one that skipped the tests. A canary that does not fail
// with the message bench gave it scores the attempt 0. Its name and message
// are random, new for each scoring run.
//
// Canaries are planted for the report forms whose tests bench can write:
// Go test functions (go-test-json) and Python unittest methods (unittest).
type canary struct {
	// name is the canary test's own name, its id's last part.
	name string
	// nonce is the text its failure must hold.
	nonce string
}

// plantCanary adds a canary to the hidden tests copied into work: a Go test
// file in every folder of tests/ that holds Go tests, in their package; a
// unittest class at the end of every Python test module of tests/. It
// returns nil when the task's report form takes no canary, or when tests/
// holds no test file to put one beside.
func plantCanary(t *tasks.Task, work string) (*canary, error) {
	var write func(rel string, b []byte) (bool, error)
	c := &canary{nonce: randomHex(8)}
	switch t.Tests.Report {
	case tasks.ReportGoTestJSON:
		c.name = "TestBenchCanary" + strings.ToUpper(randomHex(4))
		done := map[string]bool{}
		write = func(rel string, b []byte) (bool, error) {
			dir := filepath.Dir(rel)
			if !strings.HasSuffix(rel, "_test.go") || done[dir] {
				return false, nil
			}
			pkg := goPackage(b)
			if pkg == "" {
				return false, nil
			}
			done[dir] = true
			src := fmt.Sprintf("package %s\n\nimport \"testing\"\n\n// %s was planted by bench to score an attempt: it must fail.\nfunc %s(t *testing.T) { t.Fatal(%q) }\n",
				pkg, c.name, c.name, "bench canary "+c.nonce)
			// zz_: go test runs files in name order, so that the
			// canary, failing, comes last even under -failfast.
			return true, os.WriteFile(filepath.Join(work, dir, "zz_bench_canary_"+strings.ToLower(c.name[len("TestBenchCanary"):])+"_test.go"), []byte(src), 0o644)
		}
	case tasks.ReportUnittest:
		id := randomHex(4)
		c.name = "test_bench_canary_" + id
		write = func(rel string, b []byte) (bool, error) {
			if !strings.HasSuffix(rel, ".py") || !pyTestCase.Match(b) {
				return false, nil
			}
			// unittest runs a module's classes in name order: zz, so
			// that the canary, failing, comes last even under -f.
			src := fmt.Sprintf("\n\nclass zzBenchCanary%s(__import__(\"unittest\").TestCase):\n"+
				"    \"\"\"Planted by bench to score an attempt: it must fail.\"\"\"\n\n"+
				"    def %s(self):\n        self.fail(%q)\n", strings.ToUpper(id), c.name, "bench canary "+c.nonce)
			f, err := os.OpenFile(filepath.Join(work, rel), os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				return false, err
			}
			if _, err := f.WriteString(src); err != nil {
				f.Close()
				return false, err
			}
			return true, f.Close()
		}
	default:
		return nil, nil
	}
	planted := false
	err := filepath.WalkDir(t.TestsDir(), func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, _ := filepath.Rel(t.TestsDir(), p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		ok, err := write(rel, b)
		planted = planted || ok
		return err
	})
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil // no tests/
		}
		return nil, fmt.Errorf("plant bench's canary test: %w", err)
	}
	if !planted {
		return nil, nil
	}
	return c, nil
}

var pyTestCase = regexp.MustCompile(`(?m)^class\s+\w+\s*\([^)]*TestCase[^)]*\)\s*:`)

// goPackage reads the package clause of a Go file.
func goPackage(src []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(src))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "package" {
			return f[1]
		}
	}
	return ""
}

// is reports whether a reported test is (one of) the canary.
func (c *canary) is(id string) bool {
	return strings.HasSuffix(id, "::"+c.name) || strings.HasSuffix(id, "."+c.name)
}

// check says what is wrong with the canary in the cases, or "": it must be
// reported, and every time as failed with its message.
func (c *canary) check(cases []testreport.Case) string {
	seen := false
	for _, k := range cases {
		if !c.is(k.ID) {
			continue
		}
		seen = true
		if k.Outcome != testreport.Fail {
			return fmt.Sprintf("bench's canary test %s, which must fail, was reported as %s: the test run was tampered with", k.ID, k.Outcome)
		}
		if !strings.Contains(k.Message, c.nonce) {
			return fmt.Sprintf("bench's canary test %s failed without the message bench gave it: the test run was tampered with", k.ID)
		}
	}
	if !seen {
		return fmt.Sprintf("the report does not list bench's canary test %s: the tests did not run as a whole, or their report was forged (a command that runs only part of a test module must say canary = false)", c.name)
	}
	return ""
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
