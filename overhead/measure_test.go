package overhead_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/ollama/ollama/api"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/internal/ollamatest"
	"github.com/benchhq/bench/overhead"
)

// stubTool is a tool that is only ever described, never called.
type stubTool struct{ spec agent.Spec }

func (s stubTool) Spec() agent.Spec { return s.spec }
func (s stubTool) Call(context.Context, map[string]any) (agent.Result, error) {
	return agent.Result{Text: "stub"}, nil
}

// serverTool is a stub standing for an MCP server's tool.
func serverTool(server, name, desc string, params ...string) agent.Tool {
	props := map[string]*jsonschema.Schema{}
	for _, p := range params {
		props[p] = &jsonschema.Schema{Type: "string", Description: "the " + p + " to use"}
	}
	return stubTool{agent.Spec{
		Name:        server + "__" + name,
		Description: desc,
		InputSchema: &jsonschema.Schema{Type: "object", Properties: props, Required: params},
		Class:       agent.ClassRead,
		Origin:      "mcp:" + server,
	}}
}

func builtins(t testing.TB) []agent.Tool {
	t.Helper()
	ws, err := agent.NewWorkspace(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return agent.Builtins(ws, agent.BuiltinOptions{})
}

func issuesSet() overhead.ToolSet {
	return overhead.ToolSet{Name: "issues", Tools: []agent.Tool{
		serverTool("issues", "list_issues", "List the issues of the tracker, newest first.", "label", "state"),
		serverTool("issues", "get_issue", "Get one issue with its comments.", "id"),
		serverTool("issues", "search_issues", "Search issues by words of their title and body.", "query"),
	}}
}

func memorySet() overhead.ToolSet {
	return overhead.ToolSet{Name: "memory", Tools: []agent.Tool{
		serverTool("memory", "remember", "Store a fact for later.", "fact"),
	}}
}

// words is what a tool costs under the fake server's tokenizer.
func words(t testing.TB, tool agent.Tool) int {
	t.Helper()
	def, err := agent.OllamaTool(tool.Spec())
	if err != nil {
		t.Fatal(err)
	}
	return ollamatest.ToolWords(def)
}

func model(t testing.TB, script ollamatest.Script, opts ...ollamatest.Option) (*agent.Ollama, *ollamatest.Server) {
	t.Helper()
	if script == nil {
		script = ollamatest.Turns()
	}
	srv := ollamatest.New(script, opts...)
	t.Cleanup(srv.Close)
	m, err := agent.NewOllama(srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	return m, srv
}

// baseline is the no-tools prompt under CountWords: one user message of
// one word, plus 4 for its template.
const baseline = 4 + 1

func TestMeasureBuiltins(t *testing.T) {
	m, srv := model(t, nil)
	tools := builtins(t)
	opts := map[string]any{"num_ctx": 32768, "temperature": 0.7, "num_predict": 2048, "top_k": 20}
	r, err := overhead.Measure(context.Background(), m, "fake", opts, 0, []overhead.ToolSet{{Name: overhead.BuiltinSet, Tools: tools}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Baseline.PromptTokens != baseline || r.Baseline.Truncated {
		t.Errorf("baseline %+v, want %d tokens, not truncated", r.Baseline, baseline)
	}
	if r.Model != "fake" || r.NumCtx != 32768 || r.MeasuredAt.IsZero() {
		t.Errorf("report header: model %q num_ctx %d measured %v", r.Model, r.NumCtx, r.MeasuredAt)
	}
	if len(r.Sets) != 1 || len(r.Sets[0].Tools) != len(tools) {
		t.Fatalf("sets: %+v", r.Sets)
	}
	sum := 0
	for i, tool := range tools {
		tc := r.Sets[0].Tools[i]
		want := words(t, tool)
		sum += want
		if tc.Name != tool.Spec().Name || tc.Tokens != want || tc.PromptTokens != baseline+want || tc.Truncated {
			t.Errorf("tool %d: %+v, want %s costing %d tokens", i, tc, tool.Spec().Name, want)
		}
	}
	set := r.Sets[0]
	if set.Tokens != sum || set.SumOfTools() != sum || set.Framing() != 0 {
		t.Errorf("set: tokens %d, sum %d, framing %d; want %d, %d, 0", set.Tokens, set.SumOfTools(), set.Framing(), sum, sum)
	}
	if r.Total() != sum || r.All.PromptTokens != baseline+sum || r.Framing() != 0 || r.ToolCount() != len(tools) {
		t.Errorf("total %d (all %d), framing %d, tools %d; want %d", r.Total(), r.All.PromptTokens, r.Framing(), r.ToolCount(), sum)
	}
	if r.Truncated() || len(r.Warnings()) != 0 {
		t.Errorf("truncated %v, warnings %q", r.Truncated(), r.Warnings())
	}
	if got := r.Share(r.Total()); got != float64(sum)/32768 {
		t.Errorf("share %v", got)
	}

	// One request for the baseline, one for the set (also "all"), one per tool.
	reqs := srv.Requests()
	if r.Requests != 2+len(tools) || len(reqs) != r.Requests {
		t.Errorf("requests: report %d, server %d, want %d", r.Requests, len(reqs), 2+len(tools))
	}
	for i, req := range reqs {
		if len(req.Messages) != 1 || req.Messages[0].Role != "user" || req.Messages[0].Content != overhead.Probe {
			t.Errorf("request %d: messages %+v, want one user message %q", i, req.Messages, overhead.Probe)
		}
		o := req.Options
		if o["temperature"] != 0.0 || o["num_predict"] != 1.0 || o["num_ctx"] != 32768.0 || o["top_k"] != 20.0 {
			t.Errorf("request %d: options %v, want temperature 0, num_predict 1, num_ctx and top_k kept", i, o)
		}
	}
	if len(reqs[0].Tools) != 0 || len(reqs[1].Tools) != len(tools) {
		t.Errorf("the first requests should be the baseline, then all tools: %d, %d tools", len(reqs[0].Tools), len(reqs[1].Tools))
	}
	if opts["temperature"] != 0.7 || opts["num_predict"] != 2048 {
		t.Errorf("the caller's options were changed: %v", opts)
	}
}

func TestMeasureServers(t *testing.T) {
	m, srv := model(t, nil)
	tools := builtins(t)[:2]
	sets := []overhead.ToolSet{{Name: overhead.BuiltinSet, Tools: tools}, issuesSet(), memorySet()}
	r, err := overhead.Measure(context.Background(), m, "fake", map[string]any{"num_ctx": int64(16384)}, 0, sets)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for i, s := range sets {
		want := 0
		for _, tool := range s.Tools {
			want += words(t, tool)
		}
		total += want
		got := r.Sets[i]
		if got.Name != s.Name || got.Tokens != want || got.SumOfTools() != want || len(got.Tools) != len(s.Tools) {
			t.Errorf("set %s: %+v, want %d tokens", s.Name, got, want)
		}
	}
	if r.Total() != total || r.SumOfTools() != total || r.Framing() != 0 {
		t.Errorf("total %d, sum %d, framing %d; want %d", r.Total(), r.SumOfTools(), r.Framing(), total)
	}
	// baseline + all + 3 sets + 6 tools, less the memory set that is its
	// single tool: measured once.
	if want := 1 + 1 + 3 + 6 - 1; r.Requests != want || len(srv.Requests()) != want {
		t.Errorf("requests %d (server %d), want %d", r.Requests, len(srv.Requests()), want)
	}
}

// A template that wraps the tool block in a fixed header: tools measured
// one by one pay it each time, together once.
func TestMeasureFraming(t *testing.T) {
	const header = 50
	m, _ := model(t, func(req *api.ChatRequest) ollamatest.Reply {
		n := ollamatest.CountWords(req)
		if len(req.Tools) > 0 {
			n += header
		}
		return ollamatest.Reply{PromptTokens: n}
	})
	sets := []overhead.ToolSet{issuesSet(), memorySet()}
	r, err := overhead.Measure(context.Background(), m, "fake", map[string]any{"num_ctx": 8192}, 0, sets)
	if err != nil {
		t.Fatal(err)
	}
	tools := r.ToolCount()
	if want := -header * (tools - 1); r.Framing() != want {
		t.Errorf("framing %d, want %d", r.Framing(), want)
	}
	if want := -header * 2; r.Sets[0].Framing() != want {
		t.Errorf("issues framing %d, want %d", r.Sets[0].Framing(), want)
	}
	if h, ok := r.SharedFraming(); !ok || h != header {
		t.Errorf("shared framing %v %v, want %d", h, ok, header)
	}
	if got, want := r.Sets[1].Tools[0].Tokens, header+words(t, sets[1].Tools[0]); got != want {
		t.Errorf("memory tool alone: %d, want %d", got, want)
	}
}

func TestMeasureTruncated(t *testing.T) {
	m, _ := model(t, nil)
	sets := []overhead.ToolSet{issuesSet(), memorySet()}
	memory := baseline + words(t, memorySet().Tools[0])
	// num_ctx fits the memory tool alone but not the issues tools together.
	numCtx := memory + 2
	r, err := overhead.Measure(context.Background(), m, "fake", map[string]any{"num_ctx": numCtx}, 0, sets)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Truncated() || !r.All.Truncated || r.All.PromptTokens != numCtx {
		t.Errorf("all: %+v, want truncated at %d", r.All, numCtx)
	}
	if !r.Sets[0].Truncated || r.Sets[1].Truncated || r.Sets[1].Tools[0].Truncated {
		t.Errorf("issues truncated %v, memory truncated %v", r.Sets[0].Truncated, r.Sets[1].Truncated)
	}
	if r.Baseline.Truncated {
		t.Error("the baseline fits, it is not truncated")
	}
	w := strings.Join(r.Warnings(), "\n")
	for _, want := range []string{"truncated", "num_ctx " + strconv.Itoa(numCtx), "--num-ctx", "lower bounds"} {
		if !strings.Contains(w, want) {
			t.Errorf("warnings %q do not say %q", w, want)
		}
	}
	if _, ok := r.SharedFraming(); ok {
		t.Error("no framing estimate from truncated numbers")
	}
}

func TestMeasureWarnsWhenToolsFillTheContext(t *testing.T) {
	m, _ := model(t, nil)
	set := issuesSet()
	all := baseline
	for _, tool := range set.Tools {
		all += words(t, tool)
	}
	r, err := overhead.Measure(context.Background(), m, "fake", map[string]any{"num_ctx": all + all/2}, 0, []overhead.ToolSet{set})
	if err != nil {
		t.Fatal(err)
	}
	if w := r.Warnings(); len(w) != 1 || !strings.Contains(w[0], "67% of num_ctx") {
		t.Errorf("warnings %q, want one about 67%% of num_ctx", w)
	}
}

// chatFunc is an agent.Model written as a function.
type chatFunc func(ctx context.Context, req *api.ChatRequest) (*api.ChatResponse, error)

func (f chatFunc) Chat(ctx context.Context, req *api.ChatRequest) (*api.ChatResponse, error) {
	return f(ctx, req)
}

func TestMeasureErrors(t *testing.T) {
	ctx := context.Background()
	good := []overhead.ToolSet{issuesSet()}
	badSchema := stubTool{agent.Spec{Name: "odd", InputSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
		"x": {AllOf: []*jsonschema.Schema{{Type: "string"}, {Type: "integer"}}},
	}}}}
	notPulled, _ := model(t, nil, ollamatest.WithModels("other"))
	noTools, noToolsSrv := model(t, nil, ollamatest.WithoutTools("fake"))
	fine, fineSrv := model(t, nil)
	zero := chatFunc(func(context.Context, *api.ChatRequest) (*api.ChatResponse, error) {
		return &api.ChatResponse{Done: true}, nil
	})
	tests := []struct {
		name  string
		model agent.Model
		opts  map[string]any
		sets  []overhead.ToolSet
		want  []string
	}{
		{"no num_ctx", fine, map[string]any{"temperature": 0}, good, []string{"num_ctx: missing"}},
		{"num_ctx not a number", fine, map[string]any{"num_ctx": "big"}, good, []string{"num_ctx: expected an integer"}},
		{"model not pulled", notPulled, map[string]any{"num_ctx": 4096}, good, []string{"with no tools", "ollama pull fake"}},
		{"no tool support", noTools, map[string]any{"num_ctx": 4096}, good, []string{"with all tools", "cannot take tools"}},
		{"no prompt count", zero, map[string]any{"num_ctx": 4096}, good, []string{"no prompt_eval_count"}},
		{"duplicate tool", fine, map[string]any{"num_ctx": 4096}, []overhead.ToolSet{issuesSet(), {Name: "again", Tools: issuesSet().Tools[:1]}},
			[]string{`"issues__list_issues" collides`, "set issues"}},
		{"duplicate set", fine, map[string]any{"num_ctx": 4096}, []overhead.ToolSet{issuesSet(), {Name: "issues"}}, []string{`"issues": named twice`}},
		{"unnamed set", fine, map[string]any{"num_ctx": 4096}, []overhead.ToolSet{{}}, []string{"empty name"}},
		{"schema", fine, map[string]any{"num_ctx": 4096}, []overhead.ToolSet{{Name: "odd", Tools: []agent.Tool{badSchema}}}, []string{"tool set odd", "allOf"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := overhead.Measure(ctx, tt.model, "fake", tt.opts, 0, tt.sets)
			if err == nil {
				t.Fatalf("no error; report %+v", r)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
	if n := len(fineSrv.Requests()); n != 0 {
		t.Errorf("bad input sent %d requests, want none", n)
	}
	if n := len(noToolsSrv.Requests()); n != 2 {
		t.Errorf("a model without tools got %d requests, want 2 (baseline, then all tools)", n)
	}
	var me *agent.ModelError
	_, err := overhead.Measure(ctx, notPulled, "fake", map[string]any{"num_ctx": 4096}, 0, good)
	if !errors.As(err, &me) {
		t.Errorf("error %v does not wrap the ModelError", err)
	}
}

func TestMeasureNoTools(t *testing.T) {
	m, srv := model(t, nil)
	r, err := overhead.Measure(context.Background(), m, "fake", map[string]any{"num_ctx": 4096.0}, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Total() != 0 || r.ToolCount() != 0 || r.Requests != 1 || len(srv.Requests()) != 1 {
		t.Errorf("total %d, tools %d, requests %d", r.Total(), r.ToolCount(), r.Requests)
	}
}

func TestMeasureCanceled(t *testing.T) {
	m, _ := model(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := overhead.Measure(ctx, m, "fake", map[string]any{"num_ctx": 4096}, 0, []overhead.ToolSet{issuesSet()}); !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
}

// Requests says beforehand how many requests Measure sends.
func TestRequests(t *testing.T) {
	tools := builtins(t)
	tests := []struct {
		name string
		sets []overhead.ToolSet
	}{
		{"no sets", nil},
		{"an empty set", []overhead.ToolSet{{Name: "empty"}}},
		{"one tool", []overhead.ToolSet{memorySet()}},
		{"builtins", []overhead.ToolSet{{Name: overhead.BuiltinSet, Tools: tools}}},
		{"builtins and servers", []overhead.ToolSet{{Name: overhead.BuiltinSet, Tools: tools[:2]}, issuesSet(), memorySet()}},
		{"a single-tool set beside another", []overhead.ToolSet{memorySet(), issuesSet()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, srv := model(t, nil)
			r, err := overhead.Measure(context.Background(), m, "fake", map[string]any{"num_ctx": int64(16384)}, 0, tt.sets)
			if err != nil {
				t.Fatal(err)
			}
			if got := overhead.Requests(tt.sets); got != r.Requests || got != len(srv.Requests()) {
				t.Errorf("Requests = %d; Measure sent %d (server saw %d)", got, r.Requests, len(srv.Requests()))
			}
		})
	}
}
