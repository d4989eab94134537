// Package overhead measures what tools cost in prompt tokens: how many
// tokens each tool, and each tool set (the built-ins, one MCP server), adds
// to every request the agent sends, and what share of num_ctx that is.
//
// A measurement is a handful of minimal chat requests (a fixed one-word
// user message, temperature 0, num_predict 1) that differ only in the tools
// they offer; Ollama's prompt_eval_count of each, minus that of the
// request with no tools, is the overhead. Reports render as a table, as
// bars in a terminal and as an SVG chart.
//
// Ollama cuts a prompt longer than its context silently, and lowers a
// num_ctx above the model's own context length to it, silently too: a
// count that reaches the context is a lower bound, and every figure derived
// from it is a bound (package bound), printed with ≥ or ≤.
package overhead

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ollama/ollama/api"
	"golang.org/x/sync/semaphore"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/bound"
)

// Probe is the user message of every measuring request: one fixed word, so
// that the prompt is the tools and the template around them.
const Probe = "Hello"

// BuiltinSet is the conventional name of the tool set of built-in tools.
const BuiltinSet = "builtin"

// ToolSet is a group of tools measured together and reported as one line:
// the built-in tools, or the tools of one MCP server.
type ToolSet struct {
	// Name identifies the set in reports: BuiltinSet, or a server's name.
	Name string
	// Tools are offered in this order, as the runner offers them.
	Tools []agent.Tool
}

// Count is one measured prompt: Ollama's prompt_eval_count of a request.
type Count struct {
	// PromptTokens is the prompt's length in tokens.
	PromptTokens int
	// Truncated is true when PromptTokens reached the context (num_ctx, or
	// the model's context length when smaller): Ollama cut the prompt
	// silently and the true length is unknown (at least PromptTokens).
	Truncated bool
}

// ToolCost is what one tool costs offered alone.
type ToolCost struct {
	// Name is the tool's name as the model sees it.
	Name string
	// Count is the prompt of a request offering this tool alone.
	Count
	// Tokens is the overhead: Count.PromptTokens minus the baseline. A
	// lower bound when Truncated.
	Tokens int
}

// Bound is the count as a bound: at least PromptTokens when truncated.
func (c Count) Bound() bound.Value { return bound.Of(c.PromptTokens, c.Truncated) }

// SetCost is what one tool set costs, offered alone, with its tools.
type SetCost struct {
	// Name is the set's name.
	Name string
	// Count is the prompt of a request offering this set's tools alone.
	Count
	// Tokens is the set's overhead: Count.PromptTokens minus the baseline.
	Tokens int
	// Tools are the set's tools, each measured alone, in offered order.
	Tools []ToolCost
}

// SumOfTools is the sum of the set's tools' overheads, each measured alone.
func (s *SetCost) SumOfTools() int {
	n := 0
	for _, t := range s.Tools {
		n += t.Tokens
	}
	return n
}

// Framing is Tokens minus SumOfTools: what offering the tools together
// costs beyond (or, usually, below) offering them one by one. A template
// writes a header around its tool block once per request; each tool
// measured alone pays it again, so with n tools Framing is about
// -(n-1) × the header.
func (s *SetCost) Framing() int { return s.Tokens - s.SumOfTools() }

// Report is the measured overhead of a group of tool sets (an arm's tools).
type Report struct {
	// Arm is a free label shown in titles (the arm's name); Measure leaves
	// it empty.
	Arm string
	// Model is the model measured and NumCtx the num_ctx sent.
	Model  string
	NumCtx int
	// ModelContext is the model's own context length (0: unknown). Ollama
	// lowers a num_ctx above it to it silently: Context is what was used.
	ModelContext int
	// MeasuredAt is when the measurement started.
	MeasuredAt time.Time
	// Baseline is the prompt of the request with no tools.
	Baseline Count
	// All is the prompt of the request offering every set's tools.
	All Count
	// Sets are the tool sets in the order given, each with its tools.
	Sets []SetCost
	// Requests is the number of chat requests sent (identical
	// configurations are measured once).
	Requests int
}

// Total is the overhead of every tool together: All minus Baseline. This
// is what each request of an attempt pays for the tools. When a count was
// truncated it is only a bound: TotalBound says which.
func (r *Report) Total() int { return r.All.PromptTokens - r.Baseline.PromptTokens }

// TotalBound is Total with what is known of it: at least Total when the
// prompt with all tools was cut.
func (r *Report) TotalBound() bound.Value { return r.tokens(r.Total(), r.All) }

// tokens is an overhead of n tokens measured with the prompt c, as a
// bound: c minus the baseline, each exact or cut.
func (r *Report) tokens(n int, c Count) bound.Value {
	b := c.Bound().Minus(r.Baseline.Bound())
	b.N = n
	return b
}

// Context is the context the server used: num_ctx, or the model's context
// length when it is smaller (agent.EffectiveContext).
func (r *Report) Context() int { return agent.EffectiveContext(r.NumCtx, r.ModelContext) }

// contextName names the context in a sentence: "num_ctx 8192", or, when
// Ollama lowered it, "the model's context length 2048 (num_ctx 8192 was
// lowered to it)".
func (r *Report) contextName() string {
	if c := r.Context(); c < r.NumCtx {
		return fmt.Sprintf("the model's context length %d (num_ctx %d was lowered to it)", c, r.NumCtx)
	}
	return fmt.Sprintf("num_ctx %d", r.NumCtx)
}

// ToolCount is the number of tools over all sets.
func (r *Report) ToolCount() int {
	n := 0
	for _, s := range r.Sets {
		n += len(s.Tools)
	}
	return n
}

// SumOfTools is the sum of every tool's overhead, each measured alone.
func (r *Report) SumOfTools() int {
	n := 0
	for i := range r.Sets {
		n += r.Sets[i].SumOfTools()
	}
	return n
}

// Framing is Total minus SumOfTools (see SetCost.Framing).
func (r *Report) Framing() int { return r.Total() - r.SumOfTools() }

// SharedFraming estimates the tokens a template adds once per request as
// soon as any tool is offered (the tool block's header): if each tool alone
// costs header + its own tokens and all together cost header + the sum,
// the header is -Framing / (tools - 1). It needs two tools or more, and no
// truncated measurement; ok is false otherwise.
func (r *Report) SharedFraming() (tokens float64, ok bool) {
	n := r.ToolCount()
	if n < 2 || r.Truncated() {
		return 0, false
	}
	return -float64(r.Framing()) / float64(n-1), true
}

// Share is tokens as a fraction of the context the server used (0 when it
// is unknown).
func (r *Report) Share(tokens int) float64 {
	if r.Context() <= 0 {
		return 0
	}
	return float64(tokens) / float64(r.Context())
}

// Truncated reports whether any measurement reached the context.
func (r *Report) Truncated() bool {
	if r.Baseline.Truncated || r.All.Truncated {
		return true
	}
	for _, s := range r.Sets {
		if s.Truncated {
			return true
		}
		for _, t := range s.Tools {
			if t.Truncated {
				return true
			}
		}
	}
	return false
}

// Warnings says, one sentence each, what the operator should know: a
// truncated measurement (and the num_ctx to try instead, when a larger one
// would help), or tools that leave little of the context for the task. A
// num_ctx above the model's context length is agent.ContextWarning's, said
// before measuring.
func (r *Report) Warnings() []string {
	var out []string
	if r.Truncated() {
		var what []string
		need := r.Baseline.PromptTokens
		if r.Baseline.Truncated {
			what = append(what, "the prompt with no tools")
		}
		if r.All.Truncated {
			what = append(what, "the prompt with all tools")
			need = max(need, r.Baseline.PromptTokens+r.SumOfTools())
		}
		for _, s := range r.Sets {
			if s.Truncated && len(r.Sets) > 1 {
				what = append(what, "tool set "+s.Name)
				need = max(need, r.Baseline.PromptTokens+s.SumOfTools())
			}
			for _, t := range s.Tools {
				if t.Truncated {
					what = append(what, "tool "+t.Name)
				}
			}
		}
		msg := fmt.Sprintf("measurement truncated: %s reached %s, so Ollama cut the prompt silently and the numbers marked ≥ are lower bounds (≤: upper bounds)", listOf(what, 4), r.contextName())
		if r.ModelContext > 0 && r.Context() == r.ModelContext {
			// A larger num_ctx would be lowered again: nothing to try.
			out = append(out, fmt.Sprintf("%s; the model's own context (%d) cannot hold them: offer fewer tools, or use a model with a longer context", msg, r.ModelContext))
		} else {
			n := suggestNumCtx(r.NumCtx, need)
			if r.ModelContext > 0 {
				n = min(n, r.ModelContext)
			}
			out = append(out, fmt.Sprintf("%s; measure again with a larger num_ctx (--num-ctx %d or more)", msg, n))
		}
	} else if share := r.Share(r.All.PromptTokens); share >= 0.5 {
		out = append(out, fmt.Sprintf("the tools and the template alone take %.0f%% of %s before the task starts: the conversation has %d tokens left; consider a larger num_ctx or fewer tools",
			100*share, r.contextName(), r.Context()-r.All.PromptTokens))
	}
	return out
}

// suggestNumCtx proposes a num_ctx for a new measurement: at least double,
// and at least a quarter above what the prompt is estimated to need, in
// steps of 1024.
func suggestNumCtx(numCtx, need int) int {
	n := max(2*numCtx, need+need/4)
	return (n + 1023) / 1024 * 1024
}

func listOf(items []string, most int) string {
	if len(items) <= most {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:most], ", "), len(items)-most)
}

// Measure sends one minimal chat request per configuration (no tools;
// every set together; each set alone; each tool alone), one after
// another, and reports the prompt tokens each tool and set adds, by
// difference with the request with no tools. options are the run's Ollama
// options: num_ctx is required (a measurement without it would be cut at
// Ollama's small default); temperature and num_predict are overridden with
// 0 and 1. modelCtx is the model's own context length
// (agent.Ollama.ContextLength; 0 when unknown): Ollama lowers a larger
// num_ctx to it silently, so a count is judged truncated against the
// smaller of the two. A tool set whose tools cannot be converted, or two tools of one
// name, are errors, as they would stop a run. Model errors say what to do
// about them (agent.ModelError.Hint).
func Measure(ctx context.Context, model agent.Model, modelName string, options map[string]any, modelCtx int, sets []ToolSet) (*Report, error) {
	return MeasureLimited(ctx, semaphore.NewWeighted(1), model, modelName, options, modelCtx, sets)
}

// MeasureLimited is Measure with its requests sent at once, as many in
// flight as slots allows: a model server with N parallel slots answers
// the measurement in the time of a few requests rather than of all of
// them. Measurements running at the same time may share slots. The report
// and the error are Measure's: when requests fail, the error is that of
// the first configuration in Measure's order (no tools, all tools, each
// set, each tool), and no request starts after a failure. With one slot
// the requests go in that order and stop at the first failure, as
// Measure's do.
func MeasureLimited(ctx context.Context, slots *semaphore.Weighted, model agent.Model, modelName string, options map[string]any, modelCtx int, sets []ToolSet) (*Report, error) {
	numCtx, err := agent.NumCtx(options)
	if err != nil {
		return nil, fmt.Errorf("measure tool overhead: %w", err)
	}
	if numCtx <= 0 {
		return nil, errors.New("measure tool overhead: options: num_ctx: missing, expected the context window the run uses (e.g. 8192)")
	}
	defs, err := definitions(sets)
	if err != nil {
		return nil, fmt.Errorf("measure tool overhead: %w", err)
	}
	p := &prober{model: model, modelName: modelName, limit: agent.EffectiveContext(numCtx, modelCtx)}
	p.options = maps.Clone(options)
	p.options["temperature"] = 0
	p.options["num_predict"] = 1

	r := &Report{Model: modelName, NumCtx: numCtx, ModelContext: max(modelCtx, 0), MeasuredAt: time.Now().UTC()}
	// The configurations in the order they are reported (and, with one
	// slot, sent): the baseline first, then everything, so that a missing
	// model or one without tool support fails at once, with a clear
	// message.
	baseline, everything, setProbes, toolProbes := p.configure(sets, defs)
	if err := p.run(ctx, slots); err != nil {
		return nil, err
	}
	r.Baseline, r.All = baseline.count, everything.count
	base := r.Baseline.PromptTokens
	for i, s := range sets {
		sc := SetCost{Name: s.Name, Count: setProbes[i].count}
		sc.Tokens = sc.PromptTokens - base
		for j, d := range defs[i] {
			c := toolProbes[i][j].count
			sc.Tools = append(sc.Tools, ToolCost{Name: d.Function.Name, Count: c, Tokens: c.PromptTokens - base})
		}
		r.Sets = append(r.Sets, sc)
	}
	r.Requests = len(p.probes)
	return r, nil
}

// configure adds the probes of every configuration (no tools, every tool,
// each set, each tool alone: one per distinct list of tools), in the
// order they are reported and, with one slot, sent.
func (p *prober) configure(sets []ToolSet, defs [][]api.Tool) (baseline, everything *probe, setProbes []*probe, toolProbes [][]*probe) {
	var all []api.Tool
	for _, d := range defs {
		all = append(all, d...)
	}
	baseline = p.add("with no tools", nil)
	everything = p.add("with all tools", all)
	setProbes = make([]*probe, len(sets))
	toolProbes = make([][]*probe, len(sets))
	for i, s := range sets {
		setProbes[i] = p.add("with tool set "+s.Name, defs[i])
		for _, d := range defs[i] {
			toolProbes[i] = append(toolProbes[i], p.add("with tool "+d.Function.Name, []api.Tool{d}))
		}
	}
	return baseline, everything, setProbes, toolProbes
}

// Requests is how many requests Measure sends for sets, so that a caller
// can keep that many model slots for the measurement: 0 for sets Measure
// refuses.
func Requests(sets []ToolSet) int {
	defs, err := definitions(sets)
	if err != nil {
		return 0
	}
	p := &prober{}
	p.configure(sets, defs)
	return len(p.probes)
}

// definitions converts every set's tools as the agent loop would, refusing
// what a run would refuse.
func definitions(sets []ToolSet) ([][]api.Tool, error) {
	setNames := map[string]bool{}
	owner := map[string]string{}
	out := make([][]api.Tool, len(sets))
	for i, s := range sets {
		if s.Name == "" {
			return nil, fmt.Errorf("tool set %d: empty name", i)
		}
		if setNames[s.Name] {
			return nil, fmt.Errorf("tool set %q: named twice", s.Name)
		}
		setNames[s.Name] = true
		for _, t := range s.Tools {
			spec := t.Spec()
			if prev, ok := owner[spec.Name]; ok {
				return nil, fmt.Errorf("tool set %s: tool %q collides with the tool of the same name in set %s", s.Name, spec.Name, prev)
			}
			owner[spec.Name] = s.Name
			def, err := agent.OllamaTool(spec)
			if err != nil {
				return nil, fmt.Errorf("tool set %s: %w", s.Name, err)
			}
			out[i] = append(out[i], def)
		}
	}
	return out, nil
}

// prober sends the measuring requests, each distinct tool list once.
type prober struct {
	model     agent.Model
	modelName string
	options   map[string]any
	limit     int               // the context the server uses: a count reaching it was cut
	probes    []*probe          // distinct configurations, in order
	byKey     map[string]*probe // by the names of their tools
}

// probe is one distinct configuration: its request and, once run, its count.
type probe struct {
	what  string
	tools []api.Tool
	count Count
	err   error
}

// add returns the probe of a tool list, the earlier one when the same
// list was added before.
func (p *prober) add(what string, tools []api.Tool) *probe {
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Function.Name
	}
	key := strings.Join(names, "\x00")
	if pr, ok := p.byKey[key]; ok {
		return pr
	}
	if p.byKey == nil {
		p.byKey = map[string]*probe{}
	}
	pr := &probe{what: what, tools: tools}
	p.byKey[key] = pr
	p.probes = append(p.probes, pr)
	return pr
}

// run sends every probe, as many at once as slots allows, in order. After
// a failure no more start; the error is the first probe's, in order, that
// failed.
func (p *prober) run(ctx context.Context, slots *semaphore.Weighted) error {
	var wg sync.WaitGroup
	var failed atomic.Bool
	for _, pr := range p.probes {
		if err := slots.Acquire(ctx, 1); err != nil {
			pr.err = fmt.Errorf("measure the prompt %s: %w", pr.what, err)
			break
		}
		if failed.Load() {
			slots.Release(1)
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer slots.Release(1)
			pr.count, pr.err = p.count(ctx, pr.what, pr.tools)
			if pr.err != nil {
				failed.Store(true)
			}
		}()
	}
	wg.Wait()
	for _, pr := range p.probes {
		if pr.err != nil {
			return pr.err
		}
	}
	return nil
}

func (p *prober) count(ctx context.Context, what string, tools []api.Tool) (Count, error) {
	resp, err := p.model.Chat(ctx, &api.ChatRequest{
		Model:    p.modelName,
		Messages: []api.Message{{Role: "user", Content: Probe}},
		Tools:    tools,
		Options:  p.options,
	})
	if err != nil {
		return Count{}, fmt.Errorf("measure the prompt %s: %w", what, agent.WithHint(err))
	}
	if resp.PromptEvalCount <= 0 {
		return Count{}, fmt.Errorf("measure the prompt %s: the model server reported no prompt_eval_count, so prompt tokens cannot be measured", what)
	}
	return Count{PromptTokens: resp.PromptEvalCount, Truncated: resp.PromptEvalCount >= p.limit}, nil
}
