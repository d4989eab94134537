// Package runner turns a plan (arms × tasks × attempts) into stored,
// scored attempts: it runs them concurrently, shows progress, retries
// infrastructure failures, and resumes an interrupted run.
package runner

import (
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/endpoint"
	"github.com/benchhq/bench/evaluator"
	"github.com/benchhq/bench/sandbox"
	"github.com/benchhq/bench/tasks"
)

// Plan is everything a run needs to know: the model and its options, the
// suite, how many attempts per task, and the arms to compare.
type Plan struct {
	// Name is a free label for the run.
	Name string
	// Model is the Ollama model name.
	Model string
	// Options are the Ollama options sent with every request (temperature,
	// num_ctx, num_predict, top_p, ...). The seed is set per attempt.
	Options map[string]any
	// Seed is the run seed; every attempt's seed derives from it.
	Seed int64
	// Attempts is G, the attempts per task and arm.
	Attempts int
	// Suite holds the tasks.
	Suite *tasks.Suite
	// Arms are the setups compared; at least one.
	Arms []Arm
	// Concurrency is how many attempts run their agent loop at once;
	// up to half as many more set up or are scored meanwhile.
	Concurrency int
	// Limits override the tasks' own limits where non-zero.
	Limits tasks.Limits
	// System is the system prompt ("" for the default).
	System string
	// KeepWorkspaces keeps each attempt's temp folder for debugging.
	KeepWorkspaces bool
	// Profiles are the permission profiles arms may name (the built-in
	// ones when nil); ProfilesRaw is their run-file form, kept to store
	// with the run.
	Profiles    agent.Profiles
	ProfilesRaw map[string]any
	// Sandbox configures the isolation of commands and sandboxed servers.
	Sandbox sandbox.Config
	// BaseDir is the folder relative approver commands are found from
	// (the run file's folder).
	BaseDir string
	// RequestTimeout bounds one model request (default 10 minutes): a
	// server that does not answer in time is an infrastructure failure.
	RequestTimeout time.Duration
	// Advantage is the method of the advantages stored (default GRPO).
	Advantage evaluator.Method
	// MaxTries bounds the tries of an attempt cut short by an
	// infrastructure failure (default DefaultMaxTries).
	MaxTries int
	// API is the protocol of the model servers: "" (Ollama's native API)
	// or "openai" (an OpenAI-compatible server), which takes only the
	// options agent.OpenAIOptions lists.
	API string
	// Shard, when not the whole plan, runs only that slice of the jobs.
	Shard Shard
	// Tokens asks the model servers for each turn's token ids and
	// logprobs (agent.Config.Tokens), stored for the exact-token export;
	// each attempt's endpoint is then asked which weights it serves
	// before and after the attempt, and each turn records them.
	Tokens bool
	// ModelDigest, when set, is the identity of the weights every attempt
	// must be served by (Ollama's digest, an OpenAI-compatible server's
	// /v1/models identity, as endpoint.Endpoint.Identify gives it): an
	// attempt whose endpoint serves others, before or after its loop, is
	// an infrastructure failure, never scored.
	ModelDigest string
}

// Arm is one setup under comparison: the same tasks, seeds and G run
// under every arm.
type Arm struct {
	// Name identifies the arm in the store and reports.
	Name string `toml:"name" json:"name"`
	// Tools is the allow-list of built-in tools offered; empty offers all.
	Tools []string `toml:"tools" json:"tools,omitempty"`
	// Servers are MCP servers attached in this arm, on top of the task's.
	Servers []tasks.Server `toml:"servers" json:"servers,omitempty"`
	// Profile names the permission profile of the arm ("" for standard).
	Profile string `toml:"profile" json:"profile,omitempty"`
	// Approver answers the calls the profile asks about: "deny" (default),
	// "allow", "terminal" or "command:PROG ARGS".
	Approver string `toml:"approver" json:"approver,omitempty"`
}

// Defaults applied to a plan that leaves them unset.
const (
	DefaultAttempts    = 4
	DefaultConcurrency = 1
	DefaultNumCtx      = 8192
	DefaultNumPredict  = 2048
	DefaultMaxTries    = 5
	// DefaultRequestTimeout is generous: a small model on a CPU can take
	// minutes for a long reply.
	DefaultRequestTimeout = 10 * time.Minute
)

// Normalize fills defaults and checks the plan; the error names the field.
func (p *Plan) Normalize() error {
	if p.Model == "" {
		return fmt.Errorf("plan: model: missing (e.g. --model qwen3:0.6b)")
	}
	if p.Suite == nil || len(p.Suite.Tasks) == 0 {
		return fmt.Errorf("plan: suite: no tasks")
	}
	if p.Attempts == 0 {
		p.Attempts = DefaultAttempts
	}
	if msg := atLeastOne(p.Attempts); msg != "" {
		return fmt.Errorf("plan: attempts: %s", msg)
	}
	if p.Concurrency == 0 {
		p.Concurrency = DefaultConcurrency
	}
	if msg := atLeastOne(p.Concurrency); msg != "" {
		return fmt.Errorf("plan: concurrency: %s", msg)
	}
	if p.MaxTries == 0 {
		p.MaxTries = DefaultMaxTries
	}
	if msg := atLeastOne(p.MaxTries); msg != "" {
		return fmt.Errorf("plan: max_tries: %s", msg)
	}
	if p.Advantage == "" {
		p.Advantage = evaluator.GRPO
	}
	if _, err := evaluator.ParseMethod(string(p.Advantage)); err != nil {
		return fmt.Errorf("plan: advantage: %w", err)
	}
	if p.RequestTimeout == 0 {
		p.RequestTimeout = DefaultRequestTimeout
	}
	if msg := positiveDuration(p.RequestTimeout); msg != "" {
		return fmt.Errorf("plan: request_timeout: %s", msg)
	}
	if field, msg := p.Limits.Check(); field != "" {
		return fmt.Errorf("plan: limits.%s: %s", field, msg)
	}
	opts := maps.Clone(p.Options)
	if opts == nil {
		opts = map[string]any{}
	}
	if _, ok := opts["num_ctx"]; !ok {
		opts["num_ctx"] = DefaultNumCtx // Ollama's own default is small and silent truncation hides it
	}
	if _, ok := opts["num_predict"]; !ok {
		opts["num_predict"] = DefaultNumPredict
	}
	if key, msg := agent.CheckOptions(opts); key != "" {
		return fmt.Errorf("plan: options.%s: %s", key, msg)
	}
	p.Options = opts
	switch p.API {
	case "":
	case string(endpoint.OpenAI):
		if err := agent.CheckOpenAIOptions(opts); err != nil {
			return fmt.Errorf("plan: options: %w", err)
		}
	default:
		return fmt.Errorf("plan: api: %q, expected \"\" (Ollama) or \"openai\"", p.API)
	}
	if err := p.Shard.Validate(); err != nil {
		return fmt.Errorf("plan: %w", err)
	}
	if len(p.Arms) == 0 {
		p.Arms = []Arm{{Name: "default"}}
	}
	if p.Profiles == nil {
		p.Profiles = agent.BuiltinProfiles()
	}
	if err := p.Sandbox.Validate("run plan"); err != nil {
		return err
	}
	for _, t := range p.Suite.Tasks {
		if err := t.MissingExpected(); err != nil {
			return fmt.Errorf("plan: task %s: %w", t.ID, err)
		}
		if t.Tests.Report != "" && t.Record == nil {
			return fmt.Errorf("plan: task %s: its tests report each test (report = %q) but have no record of which must pass: write it with %s", t.ID, t.Tests.Report, t.RecordCommand())
		}
	}
	builtins := agent.BuiltinNames()
	seen := map[string]bool{}
	for i, a := range p.Arms {
		if a.Name == "" {
			return fmt.Errorf("plan: arms[%d].name: missing", i)
		}
		if seen[a.Name] {
			return fmt.Errorf("plan: arms[%d].name: %q used twice", i, a.Name)
		}
		seen[a.Name] = true
		if err := tasks.ValidateServers("run plan", fmt.Sprintf("arms[%d].servers", i), a.Servers); err != nil {
			return err
		}
		if err := sameServerName(p.Suite.Tasks, a); err != nil {
			return err
		}
		for _, name := range a.Tools {
			if !slices.Contains(builtins, name) {
				return fmt.Errorf("plan: arms[%d].tools: no built-in tool %q (expected some of: %s)", i, name, strings.Join(builtins, ", "))
			}
		}
		if _, err := p.Profiles.Lookup(a.Profile); err != nil {
			return fmt.Errorf("plan: arms[%d].profile: %w", i, err)
		}
		if _, err := agent.ParseApprover(a.Approver, p.BaseDir); err != nil {
			return fmt.Errorf("plan: arms[%d].approver: %w", i, err)
		}
	}
	return nil
}

// Job is one attempt to run: an arm, a task, an attempt index and its seed.
type Job struct {
	Arm   Arm
	Task  *tasks.Task
	Index int
	Seed  int64
}

// Jobs lists every attempt of the plan, interleaved so that early results
// cover every task and arm: attempt 0 of every task under every arm first,
// then attempt 1, and so on.
func (p *Plan) Jobs() []Job {
	var out []Job
	for i := 0; i < p.Attempts; i++ {
		for _, t := range p.Suite.Tasks {
			for _, a := range p.Arms {
				out = append(out, Job{Arm: a, Task: t, Index: i, Seed: AttemptSeed(p.Seed, t.ID, i)})
			}
		}
	}
	return out
}

// AttemptSeed derives an attempt's sampling seed from the run seed, the task
// and the attempt index. It does not depend on the arm, so the arms of a run
// are compared attempt by attempt under the same seeds. The result fits in
// 31 bits, which every backend's seed accepts.
func AttemptSeed(runSeed int64, taskID string, index int) int64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d\x00%s\x00%d", runSeed, taskID, index)
	x := h.Sum64()
	// splitmix64 finaliser, for well-spread bits
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return int64(x & 0x7fffffff)
}

// limits merges the plan's overrides onto a task's limits.
func (p *Plan) limits(t *tasks.Task) (turns, tokens int, wall time.Duration) {
	l := t.Limits
	if p.Limits.MaxTurns > 0 {
		l.MaxTurns = p.Limits.MaxTurns
	}
	if p.Limits.MaxTokens > 0 {
		l.MaxTokens = p.Limits.MaxTokens
	}
	if p.Limits.WallTime.Duration > 0 {
		l.WallTime = p.Limits.WallTime
	}
	return l.MaxTurnsOr(), l.MaxTokensOr(), l.WallTimeOr()
}

// sameServerName refuses an arm server named like a server a task declares
// itself: both would offer their tools as "<name>__<tool>".
func sameServerName(ts []*tasks.Task, a Arm) error {
	for _, t := range ts {
		for _, own := range t.Servers {
			for _, s := range a.Servers {
				if s.Name == own.Name {
					return fmt.Errorf("plan: task %s declares an MCP server %q ([[servers]] in its task.toml), and the run declares another of the same name for arm %s (--server, or [[servers]] or [[arms.servers]] of the run file): rename one of them", t.ID, s.Name, a.Name)
				}
			}
		}
	}
	return nil
}
