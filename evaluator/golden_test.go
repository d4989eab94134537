package evaluator_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchhq/bench/evaluator"
	"github.com/benchhq/bench/internal/sandboxtest"
	"github.com/benchhq/bench/tasks"
)

// goldenTask writes a task folder: task.toml with toml, files by path
// (relative to the task folder), and returns it loaded for recording.
func goldenTask(t *testing.T, toml string, files map[string]string) *tasks.Task {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "task")
	files["task.toml"] = "format = 1\ninstruction = \"Double the number.\"\n" + toml
	for p, body := range files {
		p = filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(filepath.Join(dir, "workspace"), 0o755)
	s, err := tasks.LoadSuiteToRecord(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s.Tasks[0]
}

// solve writes files into a fresh copy of t's workspace and returns it.
func solve(t *testing.T, task *tasks.Task, files map[string]string) string {
	t.Helper()
	ws := t.TempDir()
	if err := task.CopyWorkspace(ws); err != nil {
		t.Fatal(err)
	}
	for p, body := range files {
		if err := os.WriteFile(filepath.Join(ws, p), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return ws
}

const doubleRight = "import sys\nprint(2 * int(sys.stdin.read()))\n"

// doubleTask is a golden task: double.py doubles the number on standard
// input; three hidden cases.
func doubleTask(t *testing.T, golden string, extra map[string]string) *tasks.Task {
	files := map[string]string{
		"workspace/double.py": "print(0)\n",
		"solution/double.py":  doubleRight,
		"solution/solve.sh":   `cp "$BENCH_TASK_DIR/solution/double.py" double.py` + "\n",
		"cases/a":             "3\n",
		"cases/b":             "10\n",
		"cases/neg":           "-5\n",
	}
	for k, v := range extra {
		files[k] = v
	}
	return goldenTask(t, "[tests]\nresult = [\"double.py\"]\n"+golden, files)
}

func TestGoldenScoring(t *testing.T) {
	sb := sandboxtest.New(t)
	ctx := context.Background()
	for _, c := range []struct {
		name, golden string
		extra        map[string]string
		// agent is double.py as the agent left it.
		agent string
		// reward and cases passed, and a part of the first failing
		// case's reason.
		reward, passed int
		why            string
	}{
		{name: "each, solved", golden: "[golden]\neach = \"python3 double.py\"\ncompare = \"numbers\"\n",
			agent: doubleRight, reward: 1, passed: 3},
		{name: "each, the visible case hard-coded", golden: "[golden]\neach = \"python3 double.py\"\ncompare = \"numbers\"\n",
			agent: "print(6)\n", reward: 0, passed: 1, why: "word 1: got \"6\", expected 20"},
		{name: "command writes observations", golden: "[golden]\ncommand = 'for c in \"$BENCH_CASES\"/*; do python3 double.py < \"$c\" > \"$BENCH_OBSERVATIONS/${c##*/}\"; done'\n",
			agent: doubleRight, reward: 1, passed: 3},
		{name: "an observation past the bound", golden: "[golden]\neach = \"python3 double.py\"\n",
			agent: "import sys\nn = int(sys.stdin.read())\nprint(2 * n)\nif n == 10: sys.stdout.write('x' * (2 << 20))\n", reward: 0, passed: 2, why: "larger than 1024 KiB"},
		{name: "an observation that is a link", golden: "[golden]\neach = \"python3 double.py\"\n",
			agent: replaceObservation + "os.symlink('/etc/passwd', p)\n", reward: 0, passed: 0, why: "is a symbolic link"},
		{name: "an observation that is a pipe", golden: "[golden]\neach = \"python3 double.py\"\n",
			agent: replaceObservation + "os.mkfifo(p)\n", reward: 0, passed: 0, why: "not a regular file"},
		{name: "a command that hangs", golden: "[golden]\neach = \"python3 double.py\"\ntimeout = \"2s\"\n",
			agent: "import time, sys\nn = int(sys.stdin.read())\nif n == 10: time.sleep(60)\nprint(2 * n)\n", reward: 0, passed: 1, why: "killed after 2s"},
		{name: "checker judges", golden: "[golden]\neach = \"python3 double.py\"\ncompare = \"checker\"\nchecker = \"python3 -I -S check.py\"\n",
			extra: map[string]string{"checker/check.py": checkerPy}, agent: doubleRight, reward: 1, passed: 3},
		{name: "checker rejects", golden: "[golden]\neach = \"python3 double.py\"\ncompare = \"checker\"\nchecker = \"python3 -I -S check.py\"\n",
			extra: map[string]string{"checker/check.py": checkerPy}, agent: "print(7)\n", reward: 0, passed: 0, why: "the checker: wanted"},
		{name: "the checker's HOME is not the one the agent's code wrote", golden: "[golden]\neach = \"python3 double.py\"\ncompare = \"checker\"\nchecker = \"python3 -I -S check.py\"\n",
			extra: map[string]string{"checker/check.py": "import os\nif os.path.exists(os.path.expanduser('~/poison')):\n    import json\n    json.dump({c: {'pass': True} for c in os.listdir('cases')}, open(os.environ['BENCH_VERDICTS'], 'w'))\n    raise SystemExit\n" + checkerPy},
			agent: "import os\nopen(os.path.expanduser('~/poison'), 'w').close()\nprint(7)\n", reward: 0, passed: 0, why: "the checker: wanted"},
		{name: "the observations folder replaced by a link", golden: "[golden]\neach = \"python3 double.py\"\n",
			agent:  "import os, shutil\nd = os.environ['BENCH_OBSERVATIONS']\nif os.path.isdir(d) and not os.path.islink(d):\n    shutil.rmtree(d); os.symlink('/etc', d)\nprint(1)\n",
			reward: 0, passed: 0, why: "was replaced or removed"},
		{name: "checker crashes on the agent's output", golden: "[golden]\neach = \"python3 double.py\"\ncompare = \"checker\"\nchecker = \"python3 -I -S check.py\"\n",
			extra: map[string]string{"checker/check.py": checkerPy}, agent: "print('boom')\n", reward: 0, passed: 0, why: "the checker failed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			task := doubleTask(t, c.golden, c.extra)
			scorer := &evaluator.Scorer{Sandbox: sb, TempDir: t.TempDir()}
			v, err := evaluator.Validate(ctx, task, scorer, evaluator.ValidateOptions{TempDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			if !v.OK() || !v.RecordedExpected {
				t.Fatalf("validate: %v (recorded %v)\n%s", v.Problems, v.RecordedExpected, v.SolveOutput)
			}
			res, err := scorer.Score(ctx, task, solve(t, task, map[string]string{"double.py": c.agent}))
			if err != nil {
				t.Fatal(err)
			}
			if res.Reward() != c.reward || res.CasesPassed != c.passed || res.CasesTotal != 3 || res.Verdict != evaluator.VerdictGolden {
				t.Fatalf("reward %d, %d/%d cases, verdict %s; want %d, %d/3, golden\n%s", res.Reward(), res.CasesPassed, res.CasesTotal, res.Verdict, c.reward, c.passed, res.Output)
			}
			if c.why != "" && !strings.Contains(res.Output, c.why) {
				t.Errorf("output does not say %q:\n%s", c.why, res.Output)
			}
		})
	}
}

// replaceObservation is the start of an agent's code that replaces its
// own observation file by something else, at p.
const replaceObservation = "import os\np = os.path.join(os.environ['BENCH_OBSERVATIONS'], os.path.basename(os.environ['BENCH_CASE']))\nos.remove(p)\n"

// checkerPy accepts an observation that is twice the case, and crashes on
// one that is not a number.
const checkerPy = `import json, os
out = {}
for c in sorted(os.listdir("cases")):
    got = int(open("observed/" + c).read())
    want = 2 * int(open("cases/" + c).read())
    out[c] = {"pass": got == want, "reason": "" if got == want else "wanted %d" % want}
json.dump(out, open(os.environ["BENCH_VERDICTS"], "w"))
`

func TestGoldenValidateRefuses(t *testing.T) {
	sb := sandboxtest.New(t)
	ctx := context.Background()
	for _, c := range []struct {
		name, golden string
		extra        map[string]string
		why          string
	}{
		{"nondeterministic", "[golden]\neach = \"python3 double.py\"\n",
			map[string]string{"solution/double.py": "import random\nprint(random.random())\n"}, "nondeterministic"},
		{"untouched passes", "[golden]\neach = \"python3 double.py\"\n",
			map[string]string{"workspace/double.py": doubleRight}, "untouched workspace passes"},
		{"no observation from the reference", "[golden]\ncommand = \"true\"\n", nil, "left no usable observation"},
		{"checker fails on the reference", "[golden]\neach = \"python3 double.py\"\ncompare = \"checker\"\nchecker = \"exit 3\"\n",
			map[string]string{"checker/x": ""}, "the checker failed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			task := doubleTask(t, c.golden, c.extra)
			scorer := &evaluator.Scorer{Sandbox: sb, TempDir: t.TempDir()}
			v, err := evaluator.Validate(ctx, task, scorer, evaluator.ValidateOptions{TempDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			if v.OK() || !strings.Contains(strings.Join(v.Problems, "; "), c.why) {
				t.Fatalf("problems %q, want one saying %q", v.Problems, c.why)
			}
			if _, err := os.Stat(task.ExpectedPath()); err == nil {
				t.Error("an invalid task's expected observations were written")
			}
		})
	}
}

// A record of expected observations that no longer matches the cases is
// refused when the task loads, naming the cases and the command.
func TestGoldenStaleRecord(t *testing.T) {
	sb := sandboxtest.New(t)
	task := doubleTask(t, "[golden]\neach = \"python3 double.py\"\n", nil)
	scorer := &evaluator.Scorer{Sandbox: sb, TempDir: t.TempDir()}
	if v, err := evaluator.Validate(context.Background(), task, scorer, evaluator.ValidateOptions{TempDir: t.TempDir()}); err != nil || !v.OK() {
		t.Fatalf("validate: %v %v", err, v)
	}
	if _, err := tasks.Load(task.Dir); err != nil {
		t.Fatalf("recorded task does not load: %v", err)
	}
	os.WriteFile(filepath.Join(task.Dir, "cases", "new"), []byte("4\n"), 0o644)
	os.Remove(filepath.Join(task.Dir, "cases", "neg"))
	os.WriteFile(filepath.Join(task.Dir, "cases", "a"), []byte("5\n"), 0o644)
	_, err := tasks.Load(task.Dir)
	if err == nil {
		t.Fatal("a stale record loads")
	}
	for _, want := range []string{"added since): new", "gone (removed or renamed): neg", "cases/a", "bench validate --record " + task.Dir} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// A black-box check sees the result read-only, and its verdict is the
// reward, whatever the agent's files contain.
func TestBlackBoxCheck(t *testing.T) {
	sb := sandboxtest.New(t)
	ctx := context.Background()
	files := map[string]string{
		"workspace/config.json": `{"port": 80}`,
		"solution/solve.sh":     `printf '{"port": 8080}' > config.json` + "\n",
		"checks/check.py": `import json, os, sys, unittest
R = os.environ["BENCH_RESULT"]
class Check(unittest.TestCase):
    def test_port(self):
        self.assertEqual(json.load(open(os.path.join(R, "config.json")))["port"], 8080)
    def test_read_only(self):
        with self.assertRaises(OSError):
            open(os.path.join(R, "config.json"), "w")
unittest.main()
`,
	}
	task := goldenTask(t, "[tests]\nresult = [\"config.json\"]\n[check]\ncommand = \"python3 -I -S check.py -v\"\nreport = \"unittest\"\n", files)
	scorer := &evaluator.Scorer{Sandbox: sb, TempDir: t.TempDir()}
	v, err := evaluator.Validate(ctx, task, scorer, evaluator.ValidateOptions{TempDir: t.TempDir()})
	if err != nil || !v.OK() {
		t.Fatalf("validate: %v %+v", err, v)
	}
	for _, c := range []struct {
		config string
		reward int
	}{
		{`{"port": 8080}`, 1},
		{`{"port": 8080, "port": 80}`, 0},
		{`import os; os._exit(0)`, 0},
	} {
		res, err := scorer.Score(ctx, task, solve(t, task, map[string]string{"config.json": c.config}))
		if err != nil {
			t.Fatal(err)
		}
		if res.Reward() != c.reward || res.Verdict != evaluator.VerdictBlackBox {
			t.Errorf("config %s: reward %d, verdict %s; want %d, black_box\n%s", c.config, res.Reward(), res.Verdict, c.reward, res.Output)
		}
	}
}

// A checker's verdicts are read strictly: exactly "pass" and "reason", as
// written (no case folding, no other key).
func TestCheckerVerdictsAreStrict(t *testing.T) {
	sb := sandboxtest.New(t)
	for _, c := range []struct{ name, verdicts string }{
		{"a key in capitals", `{"a": {"PASS": true}, "b": {"PASS": true}, "neg": {"PASS": true}}`},
		{"both spellings", `{"a": {"pass": false, "PASS": true}, "b": {"pass": true}, "neg": {"pass": true}}`},
		{"pass as a string", `{"a": {"pass": "true"}, "b": {"pass": true}, "neg": {"pass": true}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			checker := "import os\nopen(os.environ['BENCH_VERDICTS'], 'w').write(" + fmt.Sprintf("%q", c.verdicts) + ")\n"
			task := doubleTask(t, "[golden]\neach = \"python3 double.py\"\ncompare = \"checker\"\nchecker = \"python3 -I -S check.py\"\n",
				map[string]string{"checker/check.py": checkerPy})
			scorer := &evaluator.Scorer{Sandbox: sb, TempDir: t.TempDir()}
			if v, err := evaluator.Validate(context.Background(), task, scorer, evaluator.ValidateOptions{TempDir: t.TempDir()}); err != nil || !v.OK() {
				t.Fatalf("validate: %v %+v", err, v)
			}
			if err := os.WriteFile(filepath.Join(task.CheckerDir(), "check.py"), []byte(checker), 0o644); err != nil {
				t.Fatal(err)
			}
			res, err := scorer.Score(context.Background(), task, solve(t, task, map[string]string{"double.py": "print(7)\n"}))
			if err != nil {
				t.Fatal(err)
			}
			if res.Reward() != 0 || !strings.Contains(res.Output, "cannot be read") {
				t.Errorf("reward %d from verdicts %s\n%s", res.Reward(), c.verdicts, res.Output)
			}
		})
	}
}
