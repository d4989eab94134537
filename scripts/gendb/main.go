// Command gendb writes a large bench database for measuring bench at
// scale: one finished run of N attempts (default 100,000) of 10 turns
// each, with realistic messages and tool calls, stored through the
// store's own write path (results.Store.SaveAttempts, then the runner's
// advantages). The same flags give the same database: every text, count,
// reward and time comes from a generator seeded with --seed.
//
//	go run ./scripts/gendb --out /tmp/scale.db --attempts 100000
//
// The run has 2 arms (baseline: the six built-in tools; no-exec: the same
// tools under a profile that denies run_command) and G = 16 attempts per
// task, so N/32 tasks. Each attempt: a system prompt, the task's
// instruction, nine turns that each call one tool (list_dir, read_file,
// search, edit_file, run_command...) and get its result (200 to 1,500
// bytes of file contents, listings, matches or command output), and a
// final answer. 1% of attempts end in an infrastructure failure.
// scripts/scale.sh measures bench runs, report and export on the file.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/evaluator"
	"github.com/benchhq/bench/results"
	"github.com/benchhq/bench/runner"
)

func main() {
	out := flag.String("out", "", "the database to write (must not exist)")
	attempts := flag.Int("attempts", 100_000, "attempts in the run (a multiple of 32: 2 arms × G = 16)")
	seed := flag.Uint64("seed", 1, "seed of every text, count and reward")
	batch := flag.Int("batch", 500, "attempts saved per transaction")
	tokens := flag.Bool("tokens", false, "give every turn exact token data (ids and logprobs), as bench run --tokens stores from vLLM")
	flag.Parse()
	if *out == "" || *attempts < 32 || *attempts%32 != 0 || *batch < 1 {
		fmt.Fprintln(os.Stderr, "usage: gendb --out FILE [--attempts N (a multiple of 32)] [--seed S] [--batch B]")
		os.Exit(2)
	}
	if _, err := os.Stat(*out); err == nil {
		fmt.Fprintf(os.Stderr, "gendb: --out %s: the file exists; remove it first\n", *out)
		os.Exit(2)
	}
	start := time.Now()
	if err := Generate(context.Background(), *out, Shape{Attempts: *attempts, Seed: *seed, Batch: *batch, Tokens: *tokens}, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "gendb:", err)
		os.Exit(1)
	}
	fi, _ := os.Stat(*out)
	fmt.Fprintf(os.Stderr, "gendb: %d attempts in %s, %.1f MB, in %s\n", *attempts, *out, float64(fi.Size())/1e6, time.Since(start).Round(time.Millisecond))
}

// Shape is what Generate writes.
type Shape struct {
	// Attempts is the number of attempts: 2 arms × Attempts/32 tasks × 16.
	Attempts int
	// Seed seeds everything random.
	Seed uint64
	// Batch is how many attempts go in one transaction.
	Batch int
	// Tokens gives every turn token data as vLLM returns it (tokens.go),
	// for the exact-token export; the rest of the file is the same.
	Tokens bool
}

// RunID is the id of the generated run.
const RunID = "scale-run"

const (
	arms = 2
	g    = 16
)

// epoch is the generated run's start: fixed, so that the file is the same
// every time.
var epoch = time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC)

// Generate writes the database at path.
func Generate(ctx context.Context, path string, sh Shape, log io.Writer) error {
	store, err := results.Open(ctx, path)
	if err != nil {
		return err
	}
	defer store.Close()
	nTasks := sh.Attempts / (arms * g)
	rng := rand.New(rand.NewPCG(sh.Seed, 0x6265_6e63_68))
	tokenRNG := rand.New(rand.NewPCG(sh.Seed, 0x746f_6b65_6e)) // its own: the rest is the same with or without tokens
	run := &results.Run{
		ID: RunID, Name: "scale", CreatedAt: epoch, Model: "qwen3:4b",
		Options: map[string]any{"num_ctx": 16384, "num_predict": 2048, "temperature": 0.7},
		Seed:    int64(sh.Seed), AttemptsPerTask: g, Suite: "scale", SuiteDir: "/srv/suites/scale",
		Config: `{"generated":"scripts/gendb"}`, Status: results.RunRunning, BenchVersion: "gendb",
		Arms: []results.Arm{{Name: "baseline", Index: 0, Config: `{"name":"baseline"}`},
			{Name: "no-exec", Index: 1, Config: `{"name":"no-exec","profile":"no-exec"}`}},
	}
	tasks := make([]task, nTasks)
	for i := range tasks {
		tasks[i] = newTask(rng, i)
		run.Tasks = append(run.Tasks, results.TaskInfo{ID: tasks[i].id, Dir: "/srv/suites/scale/" + tasks[i].id,
			Hash: fmt.Sprintf("%016x", rng.Uint64()), Instruction: tasks[i].instruction})
	}
	if err := store.CreateRun(ctx, run); err != nil {
		return err
	}
	tools, err := toolLists()
	if err != nil {
		return err
	}
	firstPrompts := make([][]int32, nTasks*arms) // each group's first prompt, with --tokens
	var pending []*results.Attempt
	flush := func() error {
		if len(pending) == 0 {
			return nil
		}
		if err := save(ctx, store, pending); err != nil {
			return err
		}
		pending = pending[:0]
		return nil
	}
	n := 0
	// In the runner's order: attempt i of every task under every arm.
	for idx := range g {
		for ti := range tasks {
			for arm := range arms {
				a := attempt(rng, &tasks[ti], arm, idx, tools[arm], n)
				if sh.Tokens && len(a.Trajectory.Turns) > 0 {
					addTokens(tokenRNG, a.Trajectory, &firstPrompts[ti*arms+arm])
				}
				pending = append(pending, a)
				n++
				if len(pending) >= sh.Batch {
					if err := flush(); err != nil {
						return err
					}
				}
			}
		}
		if log != nil {
			fmt.Fprintf(log, "\rgendb: %d of %d attempts", n, sh.Attempts)
		}
	}
	if err := flush(); err != nil {
		return err
	}
	if log != nil {
		fmt.Fprintln(log)
	}
	if _, err := runner.StoreAdvantages(ctx, store, RunID, evaluator.GRPO); err != nil {
		return err
	}
	return store.FinishRun(ctx, RunID, results.RunFinished)
}

// armTools is an arm's tool list, as the loop keeps it.
type armTools struct {
	tools []api.Tool
	json  []byte
}

// toolLists are the arms' tools: the six built-ins, encoded as the agent
// loop encodes them.
func toolLists() ([]armTools, error) {
	dir, err := os.MkdirTemp("", "gendb-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	ws, err := agent.NewWorkspace(dir)
	if err != nil {
		return nil, err
	}
	var out []armTools
	for arm := range arms {
		var at armTools
		for _, t := range agent.Builtins(ws, agent.BuiltinOptions{}) {
			def, err := agent.OllamaTool(t.Spec())
			if err != nil {
				return nil, err
			}
			if arm == 1 && def.Function.Name == "write_file" {
				continue // the no-exec arm is offered five tools
			}
			at.tools = append(at.tools, def)
		}
		out = append(out, at)
	}
	return out, encodeToolLists(out)
}

// task is a generated task: its files and how hard it is.
type task struct {
	id          string
	instruction string
	files       []string
	pass        float64
}

func newTask(rng *rand.Rand, i int) task {
	t := task{id: fmt.Sprintf("task-%05d", i), pass: rng.Float64()}
	mod := pick(rng, modules)
	t.files = []string{mod + ".py", "test_" + mod + ".py", "README.md", "lib/" + pick(rng, modules) + ".py", "data/" + pick(rng, nouns) + ".csv"}
	t.instruction = fmt.Sprintf("The function %s in %s %s. %s Keep the public interface as it is and make the existing tests pass; add a test for the case you fixed.",
		pick(rng, funcs), t.files[0], pick(rng, bugs), sentence(rng, 12+rng.IntN(20)))
	return t
}

// attempt is one generated attempt: ten turns, nine tool calls.
func attempt(rng *rand.Rand, t *task, arm, idx int, tools armTools, n int) *results.Attempt {
	armName := []string{"baseline", "no-exec"}[arm]
	started := epoch.Add(time.Duration(n) * 700 * time.Millisecond)
	tr := &agent.Trajectory{Tools: tools.tools}
	setToolsJSON(tr, tools.json)
	tr.Messages = []api.Message{
		{Role: "system", Content: agent.DefaultSystemPrompt},
		{Role: "user", Content: t.instruction},
	}
	prompt := 3000 + rng.IntN(400)
	for turn := range 9 {
		name, args, result := toolCall(rng, t)
		callID := fmt.Sprintf("call_%d", turn)
		a := api.NewToolCallFunctionArguments()
		for _, kv := range args {
			a.Set(kv.k, kv.v)
		}
		content := ""
		if rng.IntN(3) == 0 {
			content = sentence(rng, 6+rng.IntN(14))
		}
		tr.Messages = append(tr.Messages, api.Message{Role: "assistant", Content: content,
			ToolCalls: []api.ToolCall{{ID: callID, Function: api.ToolCallFunction{Name: name, Arguments: a}}}})
		rec := agent.CallRecord{Turn: turn, Index: turn, Tool: name, Origin: agent.OriginBuiltin, Class: classOf(name),
			Decision: agent.Allow, Rule: string(classOf(name)) + ":*", Arguments: a.String(), Result: result,
			Duration: time.Duration(200+rng.IntN(30000)) * time.Microsecond}
		if arm == 1 && name == "run_command" {
			rec.Decision, rec.Rule, rec.IsError, rec.ErrorKind = agent.Deny, "exec:deny", true, "denied"
			rec.Result = "Denied by policy: run_command (class exec) is not allowed under the profile no-exec (rule exec:deny). Do not retry it; use another tool."
		}
		tr.Calls = append(tr.Calls, rec)
		tr.Messages = append(tr.Messages, api.Message{Role: "tool", Content: rec.Result, ToolName: name, ToolCallID: callID})
		compl := 20 + rng.IntN(120)
		tr.Turns = append(tr.Turns, agent.Turn{Index: turn, PromptTokens: prompt, CompletionTokens: compl,
			TotalDuration: time.Duration(800+rng.IntN(2000)) * time.Millisecond, LoadDuration: 2 * time.Millisecond,
			PromptDuration: 300 * time.Millisecond, EvalDuration: time.Duration(compl*20) * time.Millisecond,
			Wall: time.Duration(900+rng.IntN(2000)) * time.Millisecond, DoneReason: "stop", ToolCalls: 1})
		prompt += 150 + len(result)/4
	}
	tr.Messages = append(tr.Messages, api.Message{Role: "assistant", Content: "Done. " + sentence(rng, 20+rng.IntN(30))})
	tr.Turns = append(tr.Turns, agent.Turn{Index: 9, PromptTokens: min(prompt, 16384), CompletionTokens: 60 + rng.IntN(90),
		TotalDuration: 1500 * time.Millisecond, Wall: 1600 * time.Millisecond, DoneReason: "stop", Truncated: prompt >= 16384})
	tr.Stop = agent.StopAnswered
	tr.Wall = time.Duration(12+rng.IntN(30)) * time.Second
	a := &results.Attempt{RunID: RunID, Key: results.AttemptKey{Arm: armName, Task: t.id, Index: idx},
		Seed: int64(rng.Uint32() >> 1), Trajectory: tr, StartedAt: started, FinishedAt: started.Add(tr.Wall + 2*time.Second), Tries: 1}
	if rng.IntN(100) == 0 {
		a.Status, a.Error = results.StatusInfraError, "ollama at http://127.0.0.1:11434, model qwen3:4b: connection refused"
		tr.Stop, tr.Err = agent.StopInfraError, a.Error
		return a
	}
	reward := 0
	if rng.Float64() < t.pass {
		reward = 1
	}
	a.Status, a.Reward = results.StatusFinished, &reward
	out := "..........\n----------------------------------------------------------------------\nRan 10 tests in 0.004s\n\nOK\n"
	if reward == 0 {
		out = "..F.......\nFAIL: test_" + pick(rng, funcs) + " (test_" + pick(rng, modules) + ".Test)\nAssertionError: " + sentence(rng, 8) + "\nRan 10 tests in 0.005s\n\nFAILED (failures=1)\n"
	}
	a.Test = &evaluator.TestResult{Command: "python3 -m unittest -q", ExitCode: 1 - reward, Passed: reward == 1, Output: out,
		Duration: time.Duration(80+rng.IntN(400)) * time.Millisecond}
	return a
}

func classOf(tool string) agent.Class {
	switch tool {
	case "write_file", "edit_file":
		return agent.ClassWrite
	case "run_command":
		return agent.ClassExec
	}
	return agent.ClassRead
}

// arg is one argument of a call, in the order the model wrote them.
type arg struct {
	k string
	v any
}

// toolCall is one realistic call: the tool, its arguments in order, and
// what it answers.
func toolCall(rng *rand.Rand, t *task) (string, []arg, string) {
	file := t.files[rng.IntN(len(t.files))]
	switch rng.IntN(6) {
	case 0:
		var b strings.Builder
		for _, f := range t.files {
			fmt.Fprintf(&b, "%s %d\n", f, 100+rng.IntN(5000))
		}
		for range rng.IntN(12) {
			fmt.Fprintf(&b, "%s/%s.py %d\n", pick(rng, dirs), pick(rng, modules), 100+rng.IntN(5000))
		}
		return "list_dir", []arg{{"path", "."}, {"recursive", true}}, b.String()
	case 1, 2:
		return "read_file", []arg{{"path", file}}, code(rng, 200+rng.IntN(1300))
	case 3:
		word := pick(rng, funcs)
		var b strings.Builder
		for range 1 + rng.IntN(8) {
			fmt.Fprintf(&b, "%s:%d:    %s\n", t.files[rng.IntN(len(t.files))], 1+rng.IntN(300), codeLine(rng))
		}
		return "search", []arg{{"pattern", word + `\(`}}, b.String()
	case 4:
		old := codeLine(rng)
		return "edit_file", []arg{{"path", file}, {"old_string", old}, {"new_string", codeLine(rng)}},
			fmt.Sprintf("Edited %s: replaced 1 occurrence (%d lines changed).", file, 1+rng.IntN(4))
	}
	return "run_command", []arg{{"command", "python3 -m unittest -q"}},
		"exit status 1\n" + code(rng, 150+rng.IntN(900)) + "\nFAILED (failures=1)\n"
}

// code is about n bytes of Python-looking lines.
func code(rng *rand.Rand, n int) string {
	var b strings.Builder
	for line := 1; b.Len() < n; line++ {
		fmt.Fprintf(&b, "%6d\t%s\n", line, codeLine(rng))
	}
	return b.String()
}

func codeLine(rng *rand.Rand) string {
	switch rng.IntN(5) {
	case 0:
		return fmt.Sprintf("def %s(%s, %s):", pick(rng, funcs), pick(rng, nouns), pick(rng, nouns))
	case 1:
		return fmt.Sprintf("    return [%s.strip() for %s in %s.split(%q)]", pick(rng, nouns), pick(rng, nouns), pick(rng, nouns), ",")
	case 2:
		return fmt.Sprintf("    if not %s: raise ValueError(\"%s\")", pick(rng, nouns), sentence(rng, 4))
	case 3:
		return fmt.Sprintf("    %s = %s(%s) + %d", pick(rng, nouns), pick(rng, funcs), pick(rng, nouns), rng.IntN(100))
	}
	return "    # " + sentence(rng, 5+rng.IntN(8))
}

func sentence(rng *rand.Rand, words int) string {
	w := make([]string, words)
	for i := range w {
		w[i] = pick(rng, vocabulary)
	}
	s := strings.Join(w, " ")
	return strings.ToUpper(s[:1]) + s[1:] + "."
}

func pick(rng *rand.Rand, from []string) string { return from[rng.IntN(len(from))] }

var (
	modules    = strings.Fields("recipe csv_sum parser inventory ledger scheduler tokenizer invoice report geometry cache graph")
	funcs      = strings.Fields("ingredients total parse_line load_rows normalise merge_ranges schedule tokenize render area lookup shortest_path")
	nouns      = strings.Fields("item items line row rows value values name names key total text parts result cell record")
	dirs       = strings.Fields("src lib tools docs scripts tests")
	bugs       = []string{"keeps the trailing period of the last item", "counts the header row", "fails on an empty file", "drops the last line when it has no newline", "returns the ranges unsorted", "breaks on a quoted comma"}
	vocabulary = strings.Fields("the file function returns list each value test fails when input has trailing spaces around a comma so we need to strip them before comparing and keep order of the items in output then check edge case empty string one element")
)
