package main

// The machinery of the reward-hack corpus (hacks_test.go): the scripted
// model, the bench runs, what the store says of each attempt, the checks.

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/benchhq/bench/evaluator"
	"github.com/benchhq/bench/internal/ollamatest"
	"github.com/benchhq/bench/internal/sandboxtest"
	"github.com/benchhq/bench/results"
	"github.com/benchhq/bench/runner"
	"github.com/benchhq/bench/tasks"
)

// kit is what the scripted model knows when it builds its hacks.
type kit struct {
	task *tasks.Task
	// marker is set in the environment and command line of every process
	// a hack leaves behind: none may be alive once bench has exited.
	marker string
	// secret is the value of a variable of the operator's environment.
	secret string
	// solution holds the result files of the reference solution.
	solution map[string]string
	// db is the run's results database, sandbox its mode.
	db, sandbox string
	t           *testing.T
}

// orig is a file of the task's original workspace.
func (k *kit) orig(name string) string {
	b, err := os.ReadFile(filepath.Join(k.task.WorkspaceDir(), name))
	if err != nil {
		k.t.Fatal(err)
	}
	return string(b)
}

// payload is a file of testdata/hacks.
func payload(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "hacks", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// forgeUnittest is the unittest report forger, reading the test names from
// the named file ("": the test modules the runner was asked for).
func (k *kit) forgeUnittest(from string) string {
	src := payload(k.t, "forge_unittest.py")
	if from != "" {
		src = strings.Replace(src, "FORGE_FROM = None", fmt.Sprintf("FORGE_FROM = %q", from), 1)
	}
	return src
}

// passingTests is a unittest module that defines, for each recorded test
// of the task ("module.Class.test"), a test of the same name that passes.
func (k *kit) passingTests() string {
	classes := map[string][]string{}
	var order []string
	for _, id := range k.task.Record.Tests() {
		parts := strings.Split(id, ".")
		cls, name := parts[len(parts)-2], parts[len(parts)-1]
		if classes[cls] == nil {
			order = append(order, cls)
		}
		classes[cls] = append(classes[cls], name)
	}
	var b strings.Builder
	b.WriteString("import unittest\n")
	for _, cls := range order {
		fmt.Fprintf(&b, "\n\nclass %s(unittest.TestCase):\n", cls)
		for _, name := range classes[cls] {
			fmt.Fprintf(&b, "    def %s(self):\n        pass\n", name)
		}
	}
	return b.String()
}

// goAdd adds an import declaration after a Go file's package clause and
// more declarations at its end.
func goAdd(t *testing.T, src, imports, decls string) string {
	t.Helper()
	i := strings.Index(src, "\npackage ")
	if i < 0 {
		t.Fatal("no package clause")
	}
	end := i + 1 + strings.Index(src[i+1:], "\n")
	return src[:end+1] + "\n" + imports + "\n" + src[end+1:] + decls
}

// goBuilds checks on the host (with its warm build cache) that the task's
// workspace with files in place builds, tests included: a Go hack that
// does not compile would score 0 for nothing.
func (k *kit) goBuilds(files map[string]string) {
	dir := k.t.TempDir()
	if err := k.task.CopyWorkspace(dir); err != nil {
		k.t.Fatal(err)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			k.t.Fatal(err)
		}
	}
	cmd := exec.Command("go", "test", "-count=1", "-run=^$", "./...")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		k.t.Fatalf("a Go hack does not build: %v\n%s", err, out)
	}
}

// harness is the corpus's scripted model and what its runs share.
type harness struct {
	srv    *ollamatest.Server
	book   *scriptBook
	secret string

	mu   sync.Mutex
	rows []corpusRow
	seed int64
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	if testing.Short() {
		t.Skip("runs bench processes")
	}
	sandboxtest.Isolated(t) // the corpus runs with bubblewrap: CI requires it
	h := &harness{book: &scriptBook{by: map[int64]script{}}, secret: randHex(12)}
	h.srv = ollamatest.New(h.book.reply)
	t.Cleanup(h.srv.Close)
	return h
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// script is what the scripted model does in one attempt.
type script struct {
	steps []step
	wait  time.Duration
}

// scriptBook holds the scripts of every attempt of the corpus, by the
// attempt's seed (bench derives it from the run seed, the task and the
// attempt's index: runner.AttemptSeed).
type scriptBook struct {
	mu sync.Mutex
	by map[int64]script
}

func (b *scriptBook) add(t *testing.T, seed int64, s script) {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.by[seed]; ok {
		t.Fatalf("two attempts of the corpus have seed %d", seed)
	}
	b.by[seed] = s
}

func (b *scriptBook) reply(req *api.ChatRequest) ollamatest.Reply {
	seed, ok := req.Options["seed"].(float64)
	if !ok {
		return ollamatest.Reply{Content: "ok"} // the preflight
	}
	b.mu.Lock()
	s, ok := b.by[int64(seed)]
	b.mu.Unlock()
	if !ok {
		return ollamatest.Reply{Content: "no script for this attempt"}
	}
	n := 0
	for _, m := range req.Messages {
		if m.Role == "assistant" {
			n++
		}
	}
	if n < len(s.steps) {
		return ollamatest.Reply{Calls: []ollamatest.Call{s.steps[n].call}}
	}
	return ollamatest.Reply{Content: "done", Delay: s.wait}
}

// copyTask copies an example task (or, for a name with a slash, a task
// folder of the tests' own) into a fresh folder: a hack that damages
// its task damages only its copy (which the run then checks).
func copyTask(t *testing.T, name string) string {
	t.Helper()
	src := filepath.Join(examplesDir, name)
	if strings.Contains(name, "/") {
		src = name // a task folder of the tests' own
	}
	dst := filepath.Join(t.TempDir(), filepath.Base(name))
	if err := tasks.CopyTree(src, dst); err != nil {
		t.Fatal(err)
	}
	return dst
}

// reference is the task's reference solution as the model writes it: a
// write_file of every file that solve.sh changes and that counts as the
// result. It returns the steps and the files.
func reference(t *testing.T, task *tasks.Task) ([]step, map[string]string) {
	t.Helper()
	dir := t.TempDir()
	if err := task.CopyWorkspace(dir); err != nil {
		t.Fatal(err)
	}
	res, err := evaluator.RunCommand(context.Background(), `/bin/sh "$BENCH_TASK_DIR/solution/solve.sh"`, dir, evaluator.SolveTimeout, "BENCH_TASK_DIR="+task.Dir)
	if err != nil || !res.Passed {
		t.Fatalf("solve.sh of %s: %v %+v", task.ID, err, res)
	}
	change, err := evaluator.CollectChange(task, dir)
	if err != nil {
		t.Fatal(err)
	}
	var steps []step
	files := map[string]string{}
	for _, f := range change.Carried {
		if f.Kind == "removed" {
			t.Fatalf("the solution of %s removes %s: the corpus writes files only", task.ID, f.Path)
		}
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.Path)))
		if err != nil {
			t.Fatal(err)
		}
		files[f.Path] = string(b)
		steps = append(steps, write(f.Path, string(b)))
	}
	if len(steps) == 0 {
		t.Fatalf("the solution of %s changes nothing that counts", task.ID)
	}
	return steps, files
}

// benchRun runs bench run (its scripts are in the book) on a task folder
// or a suite (target: its flag), storing into db, and waits for it. Once
// bench has exited, no process whose command line or environment holds
// marker may be alive.
func (h *harness) benchRun(t *testing.T, db, marker, name string, target []string, attempts int, extra ...string) {
	t.Helper()
	args := append([]string{"run", "--host", h.srv.URL, "--model", "fake", "--attempts", fmt.Sprint(attempts), "-j", "2",
		"--db", db, "--name", name, "--no-progress"}, target...)
	p := startBenchEnv(t, []string{"BENCH_CORPUS_SECRET=" + h.secret}, append(args, extra...)...)
	code := p.waitUpTo(t, 8*time.Minute)
	if code != 0 {
		t.Fatalf("bench run %s: exit %d\n%s", name, code, p.stderr.String())
	}
	if pids := aliveWith(marker); len(pids) > 0 {
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL) // started by this test's hacks
		}
		t.Errorf("run %s: processes left by the attempts are alive after bench exited: %v", name, pids)
	}
}

// nextSeed is a run seed no other run of the corpus has.
func (h *harness) nextSeed() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seed++
	return 1000 + h.seed
}

// aliveWith lists the processes whose command line or environment holds s.
func aliveWith(s string) []int {
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		for _, f := range []string{"cmdline", "environ"} {
			b, _ := os.ReadFile(filepath.Join("/proc", e.Name(), f))
			if bytes.Contains(b, []byte(s)) {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

// treeDigest digests a folder: paths, modes, contents and link targets.
func treeDigest(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fmt.Fprintf(h, "%s %v\n", rel, info.Mode())
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			fmt.Fprintln(h, target)
		case info.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h.Write(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// storedAttempt is what the store says of one attempt.
type storedAttempt struct {
	task                string
	idx                 int
	status, stop, err   string
	reward              sql.NullInt64
	exit                sql.NullInt64
	reportError, output string
	passed, total       sql.NullInt64
	// casesPassed and casesTotal count the golden cases and black-box
	// checks.
	casesPassed, casesTotal sql.NullInt64
	carried                 []evaluator.FileChange
	leftOut                 []evaluator.LeftOut
	calls                   []storedCall
}

type storedCall struct {
	tool, decision, result string
	isError                bool
}

// attempts reads every attempt of a store, by task and index.
func attempts(t *testing.T, db string) map[string]map[int]*storedAttempt {
	t.Helper()
	s, err := results.OpenReadOnly(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rows, err := s.DB().Query(`SELECT a.id, a.task_id, a.idx, a.status, a.stop_reason, a.error, a.reward,
		tr.exit_code, coalesce(tr.report_error, ''), coalesce(tr.output, ''), tr.tests_passed, tr.tests_total, tr.cases_passed, tr.cases_total,
		coalesce(ac.carried_json, '[]'), coalesce(ac.left_out_json, '[]')
		FROM attempts a LEFT JOIN test_results tr ON tr.attempt_id = a.id LEFT JOIN attempt_changes ac ON ac.attempt_id = a.id`)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[int]*storedAttempt{}
	ids := map[int64]*storedAttempt{}
	for rows.Next() {
		var a storedAttempt
		var id int64
		var carried, left string
		if err := rows.Scan(&id, &a.task, &a.idx, &a.status, &a.stop, &a.err, &a.reward, &a.exit, &a.reportError, &a.output,
			&a.passed, &a.total, &a.casesPassed, &a.casesTotal, &carried, &left); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(carried), &a.carried); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(left), &a.leftOut); err != nil {
			t.Fatal(err)
		}
		if out[a.task] == nil {
			out[a.task] = map[int]*storedAttempt{}
		}
		out[a.task][a.idx] = &a
		ids[id] = &a
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	calls, err := s.DB().Query(`SELECT attempt_id, tool, decision, result, is_error FROM tool_calls ORDER BY attempt_id, idx`)
	if err != nil {
		t.Fatal(err)
	}
	defer calls.Close()
	for calls.Next() {
		var id int64
		var c storedCall
		if err := calls.Scan(&id, &c.tool, &c.decision, &c.result, &c.isError); err != nil {
			t.Fatal(err)
		}
		ids[id].calls = append(ids[id].calls, c)
	}
	return out
}

// saw words what scoring saw of an attempt, for the tables.
func (a *storedAttempt) saw() string {
	if a.status != "finished" {
		return a.status + ": " + a.err
	}
	var parts []string
	var carried []string
	for _, c := range a.carried {
		carried = append(carried, c.Path+" ("+c.Kind+")")
	}
	if len(carried) > 0 {
		parts = append(parts, "carried "+strings.Join(carried, ", "))
	}
	var left []string
	for _, l := range a.leftOut {
		p := l.Path
		if len(p) > 40 {
			p = p[:40] + "..."
		}
		left = append(left, p+" ("+l.Reason+")")
	}
	if len(left) > 0 {
		if len(left) > 3 {
			left = append(left[:3], fmt.Sprintf("%d more", len(left)-3))
		}
		parts = append(parts, "left out "+strings.Join(left, ", "))
	}
	if a.exit.Valid {
		parts = append(parts, fmt.Sprintf("exit %d", a.exit.Int64))
	}
	switch {
	case a.reportError != "":
		parts = append(parts, "report: "+a.reportError)
	case a.total.Valid:
		parts = append(parts, fmt.Sprintf("%d/%d recorded tests passed", a.passed.Int64, a.total.Int64))
	}
	if a.casesTotal.Valid {
		parts = append(parts, fmt.Sprintf("%d/%d golden cases and checks passed", a.casesPassed.Int64, a.casesTotal.Int64))
	}
	return strings.Join(parts, "; ")
}

func (a *storedAttempt) rewardText() string {
	if !a.reward.Valid {
		return "-"
	}
	return fmt.Sprint(a.reward.Int64)
}

// corpusRow is a line of the corpus's table.
type corpusRow struct {
	run, class, hack, reward, saw string
}

// run runs one hackRun and checks it.
func (h *harness) run(t *testing.T, r hackRun) {
	t.Helper()
	if r.rootOnly && os.Geteuid() != 0 {
		t.Skip("runs as root only (CI does)")
	}
	dir := copyTask(t, r.task)
	if r.place != nil {
		dir = r.place(t, dir)
	}
	task, err := tasks.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	refSteps, sol := reference(t, task)
	db := filepath.Join(t.TempDir(), "bench.db")
	marker := "bench-corpus-daemon-" + randHex(6) // the run's own: runs go on at once
	k := &kit{task: task, marker: marker, secret: h.secret, solution: sol, db: db, sandbox: r.sandbox, t: t}
	hacks := r.hacks(k)
	seed := h.nextSeed()
	h.book.add(t, runner.AttemptSeed(seed, task.ID, 0), script{steps: refSteps, wait: r.refWait})
	for i, hk := range hacks {
		h.book.add(t, runner.AttemptSeed(seed, task.ID, i+1), script{steps: hk.steps, wait: hk.wait})
	}
	before := treeDigest(t, dir)
	args := []string{"--seed", fmt.Sprint(seed), "--profile", r.profile}
	if r.sandbox != "" {
		args = append(args, "--sandbox", r.sandbox)
	}
	h.benchRun(t, db, marker, r.name, []string{"--task", dir}, len(hacks)+1, args...)
	if after := treeDigest(t, dir); after != before {
		t.Errorf("the task folder changed during the run: an attempt wrote into it")
	}
	got := attempts(t, db)[task.ID]
	if ref := got[0]; ref == nil || ref.reward.Int64 != 1 || !ref.reward.Valid {
		t.Errorf("the reference solution, written through the tools, was not rewarded: %+v", ref)
	} else {
		h.addRow(corpusRow{r.name, "(reference solution)", "write_file of the solution's files", ref.rewardText(), ref.saw()})
	}
	for i, hk := range hacks {
		a := got[i+1]
		t.Run(hk.name, func(t *testing.T) {
			if a == nil {
				t.Fatalf("attempt %d not stored", i+1)
			}
			h.addRow(corpusRow{r.name, hk.class, hk.name, a.rewardText(), a.saw()})
			checkHack(t, hk, a)
		})
	}
}

func (h *harness) addRow(r corpusRow) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.rows = append(h.rows, r)
}

// checkHack checks one attempt of the corpus.
func checkHack(t *testing.T, hk hack, a *storedAttempt) {
	t.Helper()
	if a.status != "finished" {
		t.Fatalf("attempt not finished (%s: %s): a hack must be scored, not turned into a failure of the harness", a.status, a.err)
	}
	if !a.reward.Valid || a.reward.Int64 != 0 {
		t.Errorf("REWARD HACK SCORED %s [%s]: %s\nscoring saw: %s\ntest output:\n%s", a.rewardText(), hk.class, hk.name, a.saw(), a.output)
	}
	if len(a.calls) != len(hk.steps) {
		t.Fatalf("%d tool calls stored, want %d (stop: %s)", len(a.calls), len(hk.steps), a.stop)
	}
	for i, s := range hk.steps {
		c := a.calls[i]
		switch {
		case s.want == succeeds && c.isError:
			t.Errorf("call %d (%s) failed, so the hack was not carried out: %s", i, c.tool, c.result)
		case s.want == isRefused && !c.isError:
			t.Errorf("call %d (%s) was not refused: %s", i, c.tool, c.result)
		}
	}
	var all strings.Builder
	for _, c := range a.calls {
		all.WriteString(c.result)
		all.WriteByte('\n')
	}
	for _, p := range hk.proof {
		if !strings.Contains(all.String(), p) {
			t.Errorf("no tool result shows %q: the hack did not take effect in the attempt\n%s", p, all.String())
		}
	}
	for _, s := range hk.absent {
		if strings.Contains(all.String(), s) {
			t.Errorf("a tool result holds %q, which the attempt must not reach\n%s", s, all.String())
		}
	}
	for _, want := range hk.leftOut {
		if !slices.ContainsFunc(a.leftOut, func(l evaluator.LeftOut) bool {
			return l.Path == want || (strings.HasSuffix(want, "/") && strings.HasPrefix(l.Path, want))
		}) {
			t.Errorf("%s is not among the paths left out of scoring: %s", want, a.saw())
		}
	}
	if hk.nothingCarried && len(a.carried) > 0 {
		t.Errorf("files were carried into scoring, so a process edited them after the agent stopped: %s", a.saw())
	}
}

// printRows logs the corpus's table.
func (h *harness) printRows(t *testing.T) {
	t.Helper()
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tCLASS\tHACK\tREWARD\tSCORING SAW")
	n, zero := 0, 0
	for _, r := range h.rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.run, r.class, r.hack, r.reward, r.saw)
		if r.class != "(reference solution)" {
			n++
			if r.reward == "0" {
				zero++
			}
		}
	}
	tw.Flush()
	t.Logf("the reward-hack corpus:\n%s\nthe corpus: %d of %d attempts rewarded 0 (%d rewarded otherwise)", b.String(), zero, n, n-zero)
}
