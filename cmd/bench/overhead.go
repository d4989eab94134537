package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/agent/mcp"
	"github.com/benchhq/bench/endpoint"
	"github.com/benchhq/bench/overhead"
	"github.com/benchhq/bench/results"
	"github.com/benchhq/bench/runner"
	"github.com/benchhq/bench/tasks"
)

// DefaultOverheadTurns is the turns per attempt `bench overhead` assumes
// for the cost of an attempt, when neither --turns nor --run says.
const DefaultOverheadTurns = 10

const overheadUsage = `Usage: bench overhead --model MODEL [flags]

Measures what tools cost in prompt tokens: one minimal request (one word,
num_predict 1) per configuration, no tools, each tool set (the built-ins,
each MCP server) alone, all of them, and each tool alone. Prints, per arm,
the tokens every request carries for each tool and set, their share of
num_ctx and their cost over an attempt; as a table, as bars, and as an SVG
chart with --svg. Takes the arms, servers and options of a run file.

Examples:
  bench overhead --model qwen3:0.6b
  bench overhead --config run.toml --svg overhead.svg
  bench overhead --model qwen3:0.6b --tools read_file,run_command --db bench.db --run RUN

Flags:
`

// overheadFlags are the flags of `bench overhead`.
type overheadFlags struct {
	config string
	model  string
	host   string
	api    string
	numCtx int
	tools  string
	arms   string
	task   string
	turns  float64
	db     string
	run    string
	svg    string
	width  int
	noPull bool
	// servers are attached to every arm, as with bench run.
	servers      serverList // startTimeout bounds each MCP server's start.
	startTimeout time.Duration
	// reqTimeout bounds each request to the model server.
	reqTimeout time.Duration
}

// cmdOverhead is `bench overhead`: it measures the prompt tokens of each
// arm's tools and prints them as a table and bars (and an SVG chart).
func cmdOverhead(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f overheadFlags
	fs := newFlagSet("overhead", stderr, overheadUsage)
	fs.StringVar(&f.config, "config", "", "run file (TOML): model, options, servers and arms are taken from it")
	fs.StringVar(&f.model, "model", "", "Ollama model to measure, e.g. qwen3:0.6b (required unless the run file names one)")
	fs.StringVar(&f.host, "host", "", "model server URL (default $OLLAMA_HOST or http://127.0.0.1:11434)")
	fs.BoolVar(&f.noPull, "no-pull", false, "refuse to start when the server lacks the model, rather than pull it (with a progress bar)")
	fs.StringVar(&f.api, "api", "", "API of the server: ollama (default) or openai (an OpenAI-compatible server: usage.prompt_tokens is measured)")
	fs.IntVar(&f.numCtx, "num-ctx", 0, fmt.Sprintf("context window, num_ctx (default: the run file's, or %d)", runner.DefaultNumCtx))
	fs.StringVar(&f.tools, "tools", "", "comma-separated built-in tools to offer (default all)")
	fs.Var(&f.servers, "server", serverFlagHelp)
	fs.DurationVar(&f.startTimeout, "server-start-timeout", mcp.DefaultStartTimeout, startTimeoutHelp)
	fs.DurationVar(&f.reqTimeout, "request-timeout", runner.DefaultRequestTimeout, "bound on one request to the model server")
	fs.StringVar(&f.arms, "arm", "", "comma-separated arms of the run file to measure (default all)")
	fs.StringVar(&f.task, "task", "", "a task folder: its MCP servers are measured too, and fill {task}, {data} and {workspace}")
	fs.Float64Var(&f.turns, "turns", 0, fmt.Sprintf("turns per attempt, for the cost of an attempt (default %d)", DefaultOverheadTurns))
	fs.StringVar(&f.db, "db", "", "SQLite file of results, with --run (default bench.db)")
	fs.StringVar(&f.run, "run", "", "take the turns per attempt from the mean of this stored run")
	fs.StringVar(&f.svg, "svg", "", "also write the chart as SVG to this file")
	fs.IntVar(&f.width, "width", overhead.DefaultBarWidth, "width of the longest bar, in columns")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("overhead: unexpected argument %q (flags only)", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	switch {
	case set["turns"] && set["run"]:
		return usagef("overhead: --turns and --run conflict: give one")
	case set["db"] && !set["run"]:
		return usagef("overhead: --db is read only with --run RUN (the run whose mean turns to use)")
	case set["turns"] && f.turns <= 0:
		return usagef("overhead: --turns: expected a positive number, got %g", f.turns)
	case set["num-ctx"] && f.numCtx < 1:
		return usagef("overhead: --num-ctx: expected a positive number, got %d", f.numCtx)
	case f.width < 1:
		return usagef("overhead: --width: expected a positive number, got %d", f.width)
	case f.reqTimeout <= 0:
		return usagef("overhead: --request-timeout: expected a positive duration such as \"2m\", got %s", f.reqTimeout)
	case f.startTimeout <= 0:
		return usagef("overhead: --server-start-timeout: expected a positive duration such as \"90s\", got %s", f.startTimeout)
	}
	if f.svg != "" {
		if fi, err := os.Stat(filepath.Dir(f.svg)); err != nil || !fi.IsDir() {
			return usagef("overhead: --svg %s: no such folder %s", f.svg, filepath.Dir(f.svg))
		}
	}

	rf := &runner.RunFile{}
	if f.config != "" {
		var err error
		if rf, err = runner.LoadRunFile(f.config); err != nil {
			return err
		}
	}
	modelName := first(f.model, rf.Model)
	if modelName == "" {
		return usagef("overhead: --model is required (for example --model qwen3:0.6b; `ollama list` shows the models you have)")
	}
	opts := maps.Clone(rf.Options)
	if opts == nil {
		opts = map[string]any{}
	}
	if set["num-ctx"] {
		opts["num_ctx"] = f.numCtx
	}
	if _, ok := opts["num_ctx"]; !ok {
		opts["num_ctx"] = runner.DefaultNumCtx
	}
	arms, err := overheadArms(&f, rf)
	if err != nil {
		return err
	}
	var task *tasks.Task
	if f.task != "" {
		if _, err := os.Stat(filepath.Join(f.task, tasks.FileName)); err != nil {
			return usagef("overhead: --task %s: not a task folder (no %s in it)", f.task, tasks.FileName)
		}
		if task, err = tasks.Load(f.task); err != nil {
			return err
		}
	}
	view := overhead.View{Turns: DefaultOverheadTurns, TurnsFrom: "an estimate: set it with --turns", Width: f.width}
	switch {
	case set["turns"]:
		view.Turns, view.TurnsFrom = f.turns, ""
	case f.run != "":
		if view.Turns, view.TurnsFrom, err = meanTurns(ctx, first(f.db, "bench.db"), f.run); err != nil {
			return err
		}
	}
	kind, err := endpoint.ParseAPI(f.api)
	if err != nil {
		return usagef("overhead: --api: %v", err)
	}
	ep, err := endpoint.New(kind, endpoint.Spec{URL: f.host}, nil)
	if err != nil {
		return usagef("overhead: --host: %v", err)
	}
	pool, err := endpoint.NewPool(ep)
	if err != nil {
		return err
	}
	defer pool.Close()
	stopServer, err := prepareModel(ctx, pool, modelName, modelPrep{cmd: "overhead", noPull: f.noPull,
		local: f.host == "" && defaultOllama(f.api, nil, &runner.RunFile{}), db: first(f.db, "bench.db"),
		again: commandLine("overhead", args), stderr: stderr, bar: isTerminal(stderr)})
	if err != nil {
		return err
	}
	defer stopServer()
	var model agent.Model = runner.Bounded{Model: ep.Model, Timeout: f.reqTimeout}
	// Ollama lowers a num_ctx above the model's context length to it,
	// silently: the counts are judged against the smaller of the two.
	modelCtx, err := agent.ModelContextLength(ctx, model, modelName)
	switch {
	case agent.OnlyUnknown(err):
		fmt.Fprintf(stderr, "warning: the model server did not give the context length of %s (%v): truncation is judged against num_ctx alone\n", modelName, err)
	case err != nil:
		return startFailure(ctx, agent.WithHint(err))
	}
	numCtx, _ := agent.NumCtx(opts)
	if w := agent.ContextWarning(modelName, numCtx, modelCtx); w != "" {
		fmt.Fprintf(stderr, "warning: %s\n", w)
	}

	var reports []*overhead.Report
	for i, arm := range arms {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		r, err := measureArm(ctx, model, modelName, opts, modelCtx, arm, task, f.startTimeout, stderr)
		if err != nil {
			if len(arms) > 1 || arm.Name != "default" {
				err = fmt.Errorf("arm %s: %w", arm.Name, err)
			}
			return startFailure(ctx, err)
		}
		reports = append(reports, r)
		if err := overhead.WriteTable(stdout, r, view); err != nil {
			return err
		}
		fmt.Fprintln(stdout)
		if err := overhead.WriteBars(stdout, r, view); err != nil {
			return err
		}
		for _, w := range r.Warnings() {
			fmt.Fprintf(stderr, "warning: arm %s: %s\n", arm.Name, w)
		}
	}
	fmt.Fprintln(stdout)
	if err := overhead.WriteLegend(stdout, view); err != nil {
		return err
	}
	if f.svg != "" {
		var b bytes.Buffer
		if err := overhead.WriteSVG(&b, reports, view); err != nil {
			return err
		}
		if err := os.WriteFile(f.svg, b.Bytes(), 0o644); err != nil {
			return fmt.Errorf("write --svg %s: %w", f.svg, err)
		}
		fmt.Fprintf(stderr, "chart written to %s\n", f.svg)
	}
	return nil
}

// overheadArms are the arms to measure: the run file's (or one "default"
// arm), with the run file's servers attached to each, as `bench run` does.
func overheadArms(f *overheadFlags, rf *runner.RunFile) ([]runner.Arm, error) {
	arms := slices.Clone(rf.Arms)
	if len(arms) == 0 {
		arms = []runner.Arm{{Name: "default"}}
	}
	for i := range arms {
		arms[i].Servers = append(append(slices.Clone(rf.Servers), f.servers...), arms[i].Servers...)
	}
	if f.arms != "" {
		var picked []runner.Arm
		for _, name := range splitList(f.arms) {
			j := slices.IndexFunc(arms, func(a runner.Arm) bool { return a.Name == name })
			if j < 0 {
				var names []string
				for _, a := range arms {
					names = append(names, a.Name)
				}
				return nil, usagef("overhead: --arm: no arm %q (the arms are: %s)", name, strings.Join(names, ", "))
			}
			picked = append(picked, arms[j])
		}
		arms = picked
	}
	if f.tools != "" {
		if len(arms) > 1 {
			return nil, usagef("overhead: --tools conflicts with the arms of %s: set tools per arm in the run file, or pick one with --arm", rf.Path)
		}
		arms[0].Tools = splitList(f.tools)
	}
	known := agent.BuiltinNames()
	for _, a := range arms {
		for _, srv := range a.Servers {
			if ph := taskPlaceholder(srv); ph != "" && f.task == "" {
				return nil, usagef("overhead: arm %s: server %s uses %s, which only a task gives: name the task with --task DIR", a.Name, srv.Name, ph)
			}
		}
		for _, name := range a.Tools {
			if !slices.Contains(known, name) {
				where := "--tools"
				if f.tools == "" {
					where = fmt.Sprintf("%s: arm %s: tools", rf.Path, a.Name)
				}
				return nil, usagef("overhead: %s: no built-in tool %q (expected some of: %s)", where, name, strings.Join(known, ", "))
			}
		}
	}
	return arms, nil
}

// taskPlaceholder returns the first placeholder of a server declaration
// that needs a task ({task}, {data}), or "".
func taskPlaceholder(srv tasks.Server) string {
	fields := append([]string{srv.Command, srv.URL}, srv.Args...)
	fields = append(fields, slices.Collect(maps.Values(srv.Env))...)
	fields = append(fields, slices.Collect(maps.Values(srv.Headers))...)
	for _, ph := range []string{"{task}", "{data}"} {
		for _, s := range fields {
			if strings.Contains(s, ph) {
				return ph
			}
		}
	}
	return ""
}

// measureArm measures an arm's tool sets, as a run does at its start
// (runner.Runner.ToolSets), with the task's own servers too when a task
// is given.
func measureArm(ctx context.Context, model agent.Model, modelName string, opts map[string]any, modelCtx int, arm runner.Arm, task *tasks.Task, startTimeout time.Duration, stderr io.Writer) (*overhead.Report, error) {
	r := &runner.Runner{Model: model, Log: stderr, StartTimeout: startTimeout}
	r.BenchPath, _ = os.Executable()
	list := arm.Servers
	if task != nil {
		list = append(slices.Clone(task.Servers), list...)
	}
	sets, err := r.ToolSets(ctx, arm, list, task)
	if err != nil {
		return nil, err
	}
	n := 0
	for _, s := range sets {
		n += len(s.Tools)
	}
	fmt.Fprintf(stderr, "measuring arm %s: %d tools in %d sets, model %s, num_ctx %v\n", arm.Name, n, len(sets), modelName, opts["num_ctx"])
	rep, err := overhead.Measure(ctx, model, modelName, opts, modelCtx, sets)
	if err != nil {
		return nil, err
	}
	rep.Arm = arm.Name
	return rep, nil
}

// meanTurns is the mean number of turns of a stored run's finished attempts.
func meanTurns(ctx context.Context, db, runID string) (float64, string, error) {
	store, err := openResults(ctx, "overhead", db)
	if err != nil {
		return 0, "", err
	}
	defer store.Close()
	if _, err := store.GetRun(ctx, runID); errors.Is(err, results.ErrNoRun) {
		return 0, "", usagef("overhead: --run %s: no such run in %s", runID, db)
	}
	attempts, err := store.AttemptMetrics(ctx, runID)
	if err != nil {
		return 0, "", err
	}
	turns, finished := 0, 0
	for _, a := range attempts {
		if a.Finished() {
			turns += a.Turns
			finished++
		}
	}
	if finished == 0 {
		return 0, "", usagef("overhead: --run %s: the run has no finished attempt to take the turns from; give --turns N", runID)
	}
	mean := math.Round(float64(turns)/float64(finished)*10) / 10
	return mean, fmt.Sprintf("mean of run %s, %d attempts", runID, finished), nil
}
