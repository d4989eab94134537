package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/agent/mcp"
	"github.com/benchhq/bench/endpoint"
	"github.com/benchhq/bench/evaluator"
	"github.com/benchhq/bench/harbor"
	"github.com/benchhq/bench/results"
	"github.com/benchhq/bench/runner"
	"github.com/benchhq/bench/sandbox"
	"github.com/benchhq/bench/tasks"
)

// errHelp is returned when -h was asked: usage was printed, exit 0.
var errHelp = errors.New("help")

// DefaultSuite is the suite a run uses when none is named.
const DefaultSuite = "tasks/suites/examples"

// runFlags are the flags of `bench run`.
type runFlags struct {
	config      string
	model       string
	suite       string
	task        string
	only        string
	attempts    int
	concurrency int
	seed        int64
	db          string
	name        string
	hosts       hostList
	api         string
	allowMixed  bool
	shard       string
	temperature float64
	numCtx      int
	numPredict  int
	maxTurns    int
	maxTokens   int
	wallTime    time.Duration
	tools       string
	resume      string
	keep        bool
	noProgress  bool
	maxTries    int
	maxWait     time.Duration
	advantage   string
	reqTimeout  time.Duration
	profile     string
	approver    string
	sandbox     string
	servers     serverList
	noPull      bool
	// startTimeout bounds each MCP server's start.
	startTimeout time.Duration
	// envDir is where prepared environments are kept.
	envDir string
	// harbor are the flags of Harbor suites; harborSuite the suite when
	// it is one (set by planFromFlags).
	harbor      *harborFlags
	harborSuite *harbor.Suite
	// tokens asks for each turn's token ids and logprobs; modelDigest
	// requires the weights every attempt is served by.
	tokens      bool
	modelDigest string
}

// serverList is a repeatable --server flag: each value declares one MCP
// server as the body of a TOML inline table, checked as in a file.
type serverList []tasks.Server

func (l *serverList) String() string { return fmt.Sprint(len(*l), " servers") }

// Set parses one declaration.
func (l *serverList) Set(v string) error {
	s, err := tasks.ParseServer(v)
	if err != nil {
		return err
	}
	*l = append(*l, s)
	return nil
}

// startTimeoutHelp documents --server-start-timeout for every command
// that takes it.
const startTimeoutHelp = "how long an MCP server may take to start, negotiate and list its tools"

// serverFlagHelp documents --server for every command that takes it.
const serverFlagHelp = "attach an MCP server to every arm (repeatable), as a TOML inline table: " +
	`'name = "issues", command = "{bench}", args = ["mcp", "serve", "issues", "--file", "/srv/issues.json"], default_class = "read"'`

func newFlagSet(name string, stderr io.Writer, usageText string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usageText)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args, mapping flag errors to usage errors.
func parseFlags(fs *flag.FlagSet, args []string) error {
	usage, out := fs.Usage, fs.Output()
	// A bad flag gets one line (ours, below), not the flag package's
	// message followed by the whole usage.
	fs.Usage = func() {}
	fs.SetOutput(io.Discard)
	// Flags may come after positional arguments (bench report RUN --format
	// json): parse, keep one positional, parse the rest again.
	var positional []string
	err := fs.Parse(args)
	for err == nil && fs.NArg() > 0 {
		rest := fs.Args()
		if rest[0] == "--" {
			positional = append(positional, rest[1:]...)
			break
		}
		positional = append(positional, rest[0])
		err = fs.Parse(rest[1:])
	}
	fs.Usage = usage
	fs.SetOutput(out)
	if err == nil {
		// Leave the positionals where fs.Args() reads them.
		err = fs.Parse(append([]string{"--"}, positional...))
	}
	if errors.Is(err, flag.ErrHelp) {
		fs.Usage()
		return errHelp
	}
	if err != nil {
		return usagef("%s: %v (see 'bench %s -h')", fs.Name(), flagValueError(fs, err), fs.Name())
	}
	return nil
}

// flagValueError rewrites the flag package's "invalid value "10" for flag
// -wall-time: parse error" as what was expected, the way a bench file's
// field error says it: "--wall-time: expected a duration such as "90s" or
// "5m", got "10"". Other errors are returned as they are.
func flagValueError(fs *flag.FlagSet, err error) error {
	var value, name string
	if n, _ := fmt.Sscanf(err.Error(), "invalid value %q for flag -%s", &value, &name); n != 2 {
		return err
	}
	name = strings.TrimSuffix(name, ":")
	fl := fs.Lookup(name)
	if fl == nil {
		return err
	}
	g, ok := fl.Value.(flag.Getter)
	if !ok {
		return err
	}
	msg := ""
	switch g.Get().(type) {
	case time.Duration:
		if _, derr := tasks.ParseDuration(value); derr != nil {
			msg = derr.Error()
		}
	case int, int64, uint, uint64:
		msg = fmt.Sprintf("expected an integer, got %q", value)
	case float64:
		msg = fmt.Sprintf("expected a number, got %q", value)
	case bool:
		msg = fmt.Sprintf("expected true or false, got %q", value)
	}
	if msg == "" {
		return err
	}
	return fmt.Errorf("--%s: %s", name, msg)
}

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f runFlags
	fs := newFlagSet("run", stderr, "Usage: bench run [flags]\n\nRuns every task of a suite G times against a model (Ollama, or an OpenAI-compatible server) and stores scored attempts.\n\nFlags:\n")
	fs.StringVar(&f.config, "config", "", "run file (TOML) with the plan; flags given here override it")
	fs.StringVar(&f.model, "model", "", "Ollama model to run, e.g. qwen3:0.6b (required)")
	fs.StringVar(&f.suite, "suite", "", "suite folder (default "+DefaultSuite+")")
	fs.StringVar(&f.task, "task", "", "run a single task folder instead of a suite")
	fs.StringVar(&f.only, "tasks", "", "comma-separated task ids of the suite to run (default all)")
	fs.IntVar(&f.attempts, "attempts", 0, fmt.Sprintf("attempts per task and arm, G (default %d)", runner.DefaultAttempts))
	fs.IntVar(&f.concurrency, "concurrency", 0, "attempts in their agent loop at once (default 1); up to half as many more set up or are scored meanwhile")
	fs.IntVar(&f.concurrency, "j", 0, "shorthand for -concurrency")
	fs.Int64Var(&f.seed, "seed", 0, "run seed; each attempt's seed derives from it and the attempt (default 1)")
	fs.StringVar(&f.db, "db", "", "SQLite file for results (default bench.db)")
	fs.StringVar(&f.name, "name", "", "name the run: it becomes the run id, and the same command again continues it")
	fs.Var(&f.hosts, "host", hostFlagHelp)
	fs.StringVar(&f.api, "api", "", "API of the model servers: ollama (default, native /api/chat) or openai (/v1/chat/completions: vLLM, SGLang, llama.cpp, LM Studio)")
	fs.BoolVar(&f.noPull, "no-pull", false, "refuse to start when a server lacks the model, rather than pull it there with a progress bar, as ollama run does")
	fs.BoolVar(&f.allowMixed, "allow-mixed-models", false, "run even when the endpoints serve different weights under the model's name (their digests differ)")
	fs.StringVar(&f.shard, "shard", "", "run only shard I of N of the plan (I from 0), e.g. --shard $JOB_COMPLETION_INDEX/8; needs --name; put the shards together with bench merge")
	temperature := floatFlag{v: &f.temperature}
	fs.Var(&temperature, "temperature", "sampling temperature `T`, 0 or more (default: the model's)")
	fs.IntVar(&f.numCtx, "num-ctx", 0, fmt.Sprintf("context window, num_ctx (default %d)", runner.DefaultNumCtx))
	fs.IntVar(&f.numPredict, "num-predict", 0, fmt.Sprintf("max tokens per reply, num_predict (default %d)", runner.DefaultNumPredict))
	fs.IntVar(&f.maxTurns, "max-turns", 0, "override every task's turn limit")
	fs.IntVar(&f.maxTokens, "max-tokens", 0, "override every task's total-token limit")
	fs.DurationVar(&f.wallTime, "wall-time", 0, "override every task's wall-time limit, e.g. 5m")
	fs.StringVar(&f.tools, "tools", "", "comma-separated built-in tools to offer (default all)")
	fs.StringVar(&f.resume, "resume", "", "continue the stored run of this id")
	fs.BoolVar(&f.keep, "keep-workspaces", false, "keep each attempt's temp folder for debugging")
	fs.BoolVar(&f.noProgress, "no-progress", false, "no progress: neither the live bar (on a terminal) nor a line per finished attempt (otherwise)")
	fs.IntVar(&f.maxTries, "max-tries", 0, fmt.Sprintf("tries of an attempt cut short by an infrastructure failure (default %d)", runner.DefaultMaxTries))
	fs.DurationVar(&f.reqTimeout, "request-timeout", 0, "bound on one model request; no reply in time is an infrastructure failure (default 10m)")
	fs.DurationVar(&f.maxWait, "max-wait", runner.DefaultMaxWait, "bound on the time in all an attempt waits, using no try, while every model server is out of service; past it the attempt is an infrastructure failure")
	fs.Var(&f.servers, "server", serverFlagHelp)
	fs.DurationVar(&f.startTimeout, "server-start-timeout", mcp.DefaultStartTimeout, startTimeoutHelp)
	fs.StringVar(&f.profile, "profile", "", "permission profile: full, standard (default), no-exec, read-only, ask-exec, or one of the run file's")
	fs.StringVar(&f.approver, "approver", "", "who answers calls the profile asks about: deny (default), allow, terminal, command:PROG ARGS")
	fs.StringVar(&f.envDir, "cache", "", "`folder` where the tasks' prepared environments are kept (default $BENCH_CACHE/envs or ~/.cache/bench/envs; bench cache lists and clears them)")
	fs.StringVar(&f.sandbox, "sandbox", "", "isolate commands and hidden tests with bubblewrap: required (default; refuse without it) or off (run them on the host, unisolated: the run is marked so)")
	fs.StringVar(&f.advantage, "advantage", "", "advantage method stored per attempt: grpo, grpo-batch, drgrpo, rloo (default grpo)")
	f.harbor = addHarborFlags(fs)
	fs.BoolVar(&f.tokens, "tokens", false, "store each turn's token ids and logprobs, for bench export --tokens (vLLM gives exact ids; Ollama logprobs as text, not exact)")
	fs.StringVar(&f.modelDigest, "model-digest", "", "require every attempt to be served by these weights (Ollama's digest, or an OpenAI-compatible server's /v1/models identity such as root=/models/qwen, as runs.model_digest stores it); others are infrastructure failures")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("run: unexpected argument %q (flags only; did you mean --suite %s?)", fs.Arg(0), fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	if err := checkRunFlags(&f, set); err != nil {
		return err
	}
	if f.maxWait <= 0 {
		return usagef("run: --max-wait: expected a positive duration such as \"10m\", got %s", f.maxWait)
	}
	if f.startTimeout <= 0 {
		return usagef("run: --server-start-timeout: expected a positive duration such as \"90s\", got %s", f.startTimeout)
	}
	if set["task"] && set["suite"] {
		return usagef("run: --task and --suite conflict: give one")
	}
	if set["task"] && set["tasks"] {
		return usagef("run: --task and --tasks conflict: --tasks selects from a suite")
	}

	if f.resume != "" {
		// A resumed run keeps its plan: only what paces it may be given.
		paces := map[string]bool{"resume": true, "db": true, "host": true, "concurrency": true, "j": true,
			"keep-workspaces": true, "request-timeout": true, "sandbox": true, "no-progress": true, "max-tries": true, "max-wait": true,
			"allow-mixed-models": true, "server-start-timeout": true, "cache": true, "no-pull": true, "tokens": true, "model-digest": true}
		var conflict error
		fs.Visit(func(fl *flag.Flag) {
			if !paces[fl.Name] && conflict == nil {
				var may []string
				for name := range paces {
					if name != "resume" && name != "db" && name != "j" {
						may = append(may, "--"+name)
					}
				}
				sort.Strings(may)
				conflict = usagef("run: --resume and --%s conflict: a resumed run keeps its plan (it may change only %s)", fl.Name, strings.Join(may, ", "))
			}
		})
		if conflict != nil {
			return conflict
		}
	}
	var rf *runner.RunFile
	if f.config != "" {
		var err error
		if rf, err = runner.LoadRunFile(f.config); err != nil {
			return err
		}
	} else {
		rf = &runner.RunFile{}
	}

	// Everything that can be checked without the database is checked
	// first, so that bad input leaves no file behind.
	var plan *runner.Plan
	var sb *sandbox.Sandbox
	var pool *endpoint.Pool
	var err error
	defer func() {
		if pool != nil {
			pool.Close()
		}
	}()
	// The model servers are made ready (a local `ollama serve` started,
	// the model pulled) after every check of the input, the database's
	// too, and before anything is stored (a new database is removed
	// again when they cannot be). stopServer ends a server bench
	// started, on every way out.
	stopServer := func() {}
	defer func() { stopServer() }()
	prep := modelPrep{cmd: "run", noPull: f.noPull, db: first(f.db, rf.Resolve(rf.DB), "bench.db"),
		again: commandLine("run", args), stderr: stderr, bar: isTerminal(stderr) && !f.noProgress}
	if f.resume == "" {
		if plan, err = planFromFlags(&f, set, rf); err != nil {
			return err
		}
		if pool, err = endpointPool(first(f.api, rf.API), f.hosts, rf, stderr); err != nil {
			return err
		}
		if !set["concurrency"] && !set["j"] && rf.Concurrency == 0 && pool.Slots() > 0 {
			plan.Concurrency = pool.Slots() // one attempt per slot
		}
		if sb, err = readyPlan(ctx, plan, &f, set, stderr); err != nil {
			return err
		}
		prep.local = defaultOllama(first(f.api, rf.API), f.hosts, rf)
	}
	dbPath := first(f.db, rf.Resolve(rf.DB), "bench.db")
	_, statErr := os.Stat(dbPath)
	newDB := os.IsNotExist(statErr)
	if newDB && f.resume != "" {
		return usagef("run: --resume %s: --db %s: no such file", f.resume, dbPath)
	}
	store, err := results.Open(ctx, dbPath)
	if err != nil {
		return err
	}
	closed := false
	defer func() {
		if !closed {
			store.Close()
		}
	}()

	runID := f.resume
	if f.resume != "" {
		stored, err := store.GetRun(ctx, f.resume)
		if errors.Is(err, results.ErrNoRun) {
			return usagef("run: --resume %s: no such run in %s ('bench runs --db %s' lists them)", f.resume, dbPath, dbPath)
		}
		if err != nil {
			return fmt.Errorf("resume %s: %w", f.resume, err)
		}
		if plan, err = f.planFromRun(stored); err != nil {
			return fmt.Errorf("resume %s: %w", f.resume, err)
		}
		if set["concurrency"] || set["j"] {
			plan.Concurrency = f.concurrency
		}
		if set["keep-workspaces"] {
			plan.KeepWorkspaces = f.keep
		}
		if set["request-timeout"] {
			plan.RequestTimeout = f.reqTimeout
		}
		if set["max-tries"] {
			plan.MaxTries = f.maxTries
		}
		if pool, err = endpointPool(plan.API, f.hosts, rf, stderr); err != nil {
			return err
		}
		if !set["concurrency"] && !set["j"] && len(f.hosts) > 0 && pool.Slots() > 0 {
			plan.Concurrency = pool.Slots()
		}
		if sb, err = readyPlan(ctx, plan, &f, set, stderr); err != nil {
			return err
		}
		prep.local = defaultOllama(plan.API, f.hosts, rf)
	} else if plan.Name != "" {
		// A named run is its own id: running the same run file (or the same
		// --name) again continues it, keeping the attempts it finished.
		runID = plan.Name
		if prev, err := store.GetRun(ctx, runID); err == nil {
			// Refused before it is announced: the plan must be the run's.
			if err := runner.CheckResume(prev, plan); err != nil {
				return usagef("run: cannot continue run %s: %v", runID, err)
			}
			fmt.Fprintf(stderr, "continuing run %s (started %s, %s)\n", runID, prev.CreatedAt.Local().Format("2006-01-02 15:04"), prev.Status)
		}
	} else {
		runID = runner.NewRunID(time.Now())
	}

	if stopServer, err = prepareModel(ctx, pool, plan.Model, prep); err != nil {
		if newDB {
			// Nothing was stored: leave no empty database behind.
			closed = true
			store.Close()
			for _, suffix := range []string{"", "-wal", "-shm"} {
				os.Remove(dbPath + suffix)
			}
		}
		return err
	}

	plan.Tokens, plan.ModelDigest = f.tokens, f.modelDigest
	exe, _ := os.Executable()
	rooted, err := f.rooted(sb, plan, stderr)
	if err != nil {
		return err
	}
	r := &runner.Runner{Rooted: rooted, Endpoints: pool, AllowMixedModels: f.allowMixed || rf.AllowMixedModels, Store: store, Log: stderr, BenchPath: exe, Version: version, Sandbox: sb,
		StartTimeout: f.startTimeout, EnvDir: f.envDir, MaxWait: f.maxWait}
	switch {
	case f.noProgress:
	case isTerminal(stderr):
		r.Progress = stderr
	default:
		// No terminal (a log, a pipe): a line per attempt, not silence.
		r.Lines = stderr
	}
	fmt.Fprintf(stderr, "sandbox: %s\n", sb)
	if !sb.Isolated() {
		fmt.Fprintln(stderr, "warning: --sandbox off: the agent's commands and the hidden tests run on the host, unisolated; the run is marked so in the store and in every report")
	}
	fmt.Fprintf(stderr, "run %s: model %s, %s × %s × %s, concurrency %d\n",
		runID, plan.Model, count(len(plan.Suite.Tasks), "task"), count(plan.Attempts, "attempt"), count(max(len(plan.Arms), 1), "arm"), plan.Concurrency)
	if eps := pool.Endpoints(); len(eps) > 1 || !plan.Shard.Whole() {
		names := make([]string, len(eps))
		for i, e := range eps {
			names[i] = e.Name
			if e.Slots > 0 {
				names[i] += fmt.Sprintf(" (%d slots)", e.Slots)
			}
		}
		what := ""
		if !plan.Shard.Whole() {
			what = fmt.Sprintf("shard %s of the plan, ", plan.Shard)
		}
		fmt.Fprintf(stderr, "%sendpoints: %s\n", what, strings.Join(names, ", "))
	}
	out, err := r.Run(ctx, plan, runID)
	if err != nil {
		if errors.Is(err, runner.ErrPreflight) {
			if newDB {
				// Nothing was stored: leave no empty database behind.
				closed = true
				store.Close()
				for _, suffix := range []string{"", "-wal", "-shm"} {
					os.Remove(dbPath + suffix)
				}
			}
			// Interrupted, exitFailed; else nothing could start, exitCannotStart.
			return startFailure(ctx, fmt.Errorf("%v\nNo attempt was stored.", strings.TrimPrefix(err.Error(), "preflight: ")))
		}
		if out != nil {
			return fmt.Errorf("%w\nAttempts finished so far are stored; continue with: bench run --resume %s --db %s", err, runID, dbPath)
		}
		return err
	}
	if out.Interrupted {
		fmt.Fprintf(stderr, "\ninterrupted: %d attempts stored this time. Continue with:\n  bench run --resume %s --db %s\n", out.Ran, runID, dbPath)
		return errSilent
	}
	if err := writeRunReport(ctx, store, runID, stdout); err != nil {
		return err
	}
	// Said once something is stored: a run stopped before its first
	// attempt leaves nothing in dbPath.
	fmt.Fprintf(stderr, "results in %s (bench report --db %s %s)\n", dbPath, dbPath, runID)
	if out.Skipped > 0 {
		fmt.Fprintf(stderr, "%d attempts were already stored and kept\n", out.Skipped)
	}
	if !plan.Shard.Whole() {
		fmt.Fprintf(stderr, "shard %s stored in %s; when every shard is done: bench merge OUT.db SHARD.db...\n", plan.Shard, dbPath)
	}
	if plan.Tokens {
		tokenNotice(ctx, store, runID, stderr)
	}
	if out.InfraErrors > 0 {
		return &notScoredError{n: out.InfraErrors, runID: runID, dbArg: " --db " + dbPath}
	}
	return nil
}

// planFromFlags builds the plan from the run file, then the flags on top.
func planFromFlags(f *runFlags, set map[string]bool, rf *runner.RunFile) (*runner.Plan, error) {
	p := &runner.Plan{
		Name:           first(f.name, rf.Name),
		Model:          first(f.model, rf.Model),
		Options:        rf.Options,
		Seed:           1,
		Attempts:       rf.Attempts,
		Concurrency:    rf.Concurrency,
		Limits:         rf.Limits,
		System:         rf.System,
		KeepWorkspaces: rf.KeepWorkspaces || f.keep,
		MaxTries:       rf.MaxTries,
		Advantage:      rf.Advantage,
		RequestTimeout: rf.RequestTimeout.Duration,
		Arms:           rf.Arms,
		ProfilesRaw:    rf.Profiles,
		Sandbox:        rf.Sandbox,
	}
	if rf.Path != "" {
		abs, err := filepath.Abs(filepath.Dir(rf.Path))
		if err != nil {
			return nil, err
		}
		p.BaseDir = abs
	} else if wd, err := os.Getwd(); err == nil {
		p.BaseDir = wd
	}
	p.Profiles = rf.ParsedProfiles // nil without a run file: Normalize gives the built-in ones
	if set["sandbox"] {
		p.Sandbox.Mode = f.sandbox
	}
	if err := p.Sandbox.Validate("--sandbox"); err != nil {
		return nil, usagef("run: --sandbox: expected required or off, got %q", f.sandbox)
	}
	if set["request-timeout"] {
		p.RequestTimeout = f.reqTimeout
	}
	if set["advantage"] {
		p.Advantage = evaluator.Method(f.advantage)
	}
	p.API = planAPI(first(f.api, rf.API))
	if set["api"] {
		if _, err := endpoint.ParseAPI(f.api); err != nil {
			return nil, usagef("run: --api: %v", err)
		}
	}
	if set["shard"] {
		sh, err := runner.ParseShard(f.shard)
		if err != nil {
			return nil, usagef("run: --shard: %v", err)
		}
		if p.Name == "" {
			return nil, usagef("run: --shard needs --name (or name in the run file): the shards of one run share its id")
		}
		p.Shard = sh
	}
	if p.Name != "" && !runner.ValidName(p.Name) {
		return nil, usagef("run: name %q: expected letters, digits, '.', '_' or '-' (it becomes the run id)", p.Name)
	}
	if p.Model == "" {
		return nil, usagef("run: --model is required (for example --model qwen3:0.6b; `ollama list` shows the models you have)")
	}
	if rf.Seed != nil {
		p.Seed = *rf.Seed
	}
	if set["seed"] {
		p.Seed = f.seed
	}
	if set["attempts"] {
		p.Attempts = f.attempts
	}
	if set["concurrency"] || set["j"] {
		p.Concurrency = f.concurrency
	}
	if set["max-tries"] {
		p.MaxTries = f.maxTries
	}
	p.Options = maps.Clone(p.Options)
	if p.Options == nil {
		p.Options = map[string]any{}
	}
	maps.Copy(p.Options, flagOptions(f, set))
	p.Limits = flagLimits(f, set, p.Limits)

	var suite *tasks.Suite
	var err error
	switch {
	case f.task != "":
		if _, serr := os.Stat(filepath.Join(f.task, tasks.FileName)); serr != nil {
			return nil, usagef("run: --task %s: not a task folder (no %s in it)", f.task, tasks.FileName)
		}
		suite, err = f.loadSuite(f.task)
	default:
		dir := first(f.suite, rf.Resolve(rf.Suite), DefaultSuite)
		if _, serr := os.Stat(dir); serr != nil {
			return nil, usagef("run: --suite %s: no such folder", dir)
		}
		suite, err = f.loadSuite(dir)
	}
	if err != nil {
		return nil, err
	}
	only := rf.Tasks
	if f.only != "" {
		only = splitList(f.only)
	}
	if len(only) > 0 {
		sub := &tasks.Suite{Name: suite.Name, Dir: suite.Dir}
		for _, id := range only {
			t, ok := suite.Task(id)
			if !ok {
				return nil, usagef("run: --tasks: suite %s has no task %q", suite.Dir, id)
			}
			sub.Tasks = append(sub.Tasks, t)
		}
		suite = sub
	}
	p.Suite = suite

	if len(p.Arms) == 0 {
		p.Arms = []runner.Arm{{Name: "default"}}
	}
	if all := append(append([]tasks.Server(nil), rf.Servers...), f.servers...); len(all) > 0 {
		if err := tasks.ValidateServers("--server", "servers", all); err != nil {
			return nil, usagef("run: %v", err)
		}
		for i := range p.Arms {
			p.Arms[i].Servers = append(append([]tasks.Server(nil), all...), p.Arms[i].Servers...)
		}
	}
	for _, fl := range []string{"tools", "profile", "approver"} {
		if set[fl] && len(p.Arms) > 1 {
			return nil, usagef("run: --%s conflicts with the arms of %s: set it per arm in the run file", fl, rf.Path)
		}
	}
	if f.tools != "" {
		p.Arms[0].Tools = splitList(f.tools)
	}
	if set["profile"] {
		if _, err := p.Profiles.Lookup(f.profile); err != nil {
			return nil, usagef("run: --profile: %v", err)
		}
		p.Arms[0].Profile = f.profile
	}
	if set["approver"] {
		if _, err := agent.ParseApprover(f.approver, p.BaseDir); err != nil {
			return nil, usagef("run: --approver: %v", err)
		}
		p.Arms[0].Approver = f.approver
	}
	return p, nil
}

// readyPlan applies the --sandbox flag, checks the plan whole and finds
// the sandbox it asks for: the last checks before a run can start.
func readyPlan(ctx context.Context, plan *runner.Plan, f *runFlags, set map[string]bool, stderr io.Writer) (*sandbox.Sandbox, error) {
	if set["sandbox"] {
		plan.Sandbox.Mode = f.sandbox
	}
	if err := plan.Normalize(); err != nil {
		return nil, usagef("run: %v", err)
	}
	return sandboxFor(ctx, plan.Sandbox.Mode)
}

// sandboxFor makes the sandbox of a mode. Without bubblewrap only the Off
// mode runs, when asked for: bench never falls back to running commands
// unisolated on its own.
func sandboxFor(ctx context.Context, mode string) (*sandbox.Sandbox, error) {
	sb, err := sandbox.New(ctx, mode)
	if err != nil {
		if mode == sandbox.Off {
			return nil, fmt.Errorf("--sandbox off: %w", err)
		}
		return nil, fmt.Errorf("commands run isolated, but %w", err)
	}
	return sb, nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func first(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// runFlagField is the run-file field of the plan value a flag of bench run
// sets ("" for a flag that sets none): the flags are checked as a run file
// (runner.RunFile.Check), by the same rules.
func runFlagField(flag string) string {
	switch flag {
	case "name", "attempts", "concurrency", "advantage":
		return flag
	case "j":
		return "concurrency"
	case "max-tries", "request-timeout":
		return strings.ReplaceAll(flag, "-", "_")
	case "temperature":
		return "options.temperature"
	case "num-ctx", "num-predict":
		return "options." + strings.ReplaceAll(flag, "-", "_")
	case "max-turns", "max-tokens", "wall-time":
		return "limits." + strings.ReplaceAll(flag, "-", "_")
	case "sandbox":
		return "sandbox.mode"
	}
	return ""
}

// checkRunFlags checks the values the flags give by the rules of a run
// file; the error names the flag.
func checkRunFlags(f *runFlags, set map[string]bool) error {
	rf := &runner.RunFile{
		Name: f.name, Attempts: f.attempts, Concurrency: f.concurrency, MaxTries: f.maxTries,
		RequestTimeout: tasks.Duration{Duration: f.reqTimeout}, Advantage: evaluator.Method(f.advantage),
		Options: flagOptions(f, set), Sandbox: sandbox.Config{Mode: f.sandbox},
	}
	rf.Limits = flagLimits(f, set, tasks.Limits{})
	given := func(field string) bool { return flagFor(field, set) != "" }
	err := rf.Check(given)
	var fe *tasks.FieldError
	if !errors.As(err, &fe) {
		return err
	}
	return usagef("run: --%s: %s", first(flagFor(fe.Field, set), fe.Field), fe.Msg)
}

// flagFor is the flag given that sets a run-file field, or "".
func flagFor(field string, set map[string]bool) string {
	for fl := range set {
		if runFlagField(fl) == field {
			return fl
		}
	}
	return ""
}

// flagLimits are the limits of base with those the flags set on top.
func flagLimits(f *runFlags, set map[string]bool, base tasks.Limits) tasks.Limits {
	if set["max-turns"] {
		base.MaxTurns = f.maxTurns
	}
	if set["max-tokens"] {
		base.MaxTokens = f.maxTokens
	}
	if set["wall-time"] {
		base.WallTime = tasks.Duration{Duration: f.wallTime}
	}
	return base
}

// flagOptions are the Ollama options the flags set.
func flagOptions(f *runFlags, set map[string]bool) map[string]any {
	opts := map[string]any{}
	if set["temperature"] {
		opts["temperature"] = f.temperature
	}
	if set["num-ctx"] {
		opts["num_ctx"] = f.numCtx
	}
	if set["num-predict"] {
		opts["num_predict"] = f.numPredict
	}
	return opts
}

// tokenNotice says how much of a --tokens run's token data is exact, and
// why the rest is not: those attempts are left out of bench export --tokens.
func tokenNotice(ctx context.Context, store *results.Store, runID string, stderr io.Writer) {
	sum, err := store.TokenSummary(ctx, runID)
	if err != nil {
		fmt.Fprintf(stderr, "warning: %v\n", err)
		return
	}
	fmt.Fprintf(stderr, "token data: %d of %d turns exact", sum.Exact, sum.Turns)
	if sum.Turns == sum.Exact {
		fmt.Fprintln(stderr)
		return
	}
	fmt.Fprintln(stderr, "; attempts with other turns are left out of bench export --tokens:")
	for _, p := range slices.Sorted(maps.Keys(sum.Problems)) {
		fmt.Fprintf(stderr, "  %d: %s\n", sum.Problems[p], p)
	}
}
