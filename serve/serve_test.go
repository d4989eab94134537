package serve

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/endpoint"
	"github.com/benchhq/bench/results"
	"github.com/benchhq/bench/runner"
	"github.com/benchhq/bench/tasks"
)

func newService(t *testing.T) *Service {
	t.Helper()
	suite, err := tasks.LoadSuite("../tasks/suites/examples")
	if err != nil {
		t.Fatal(err)
	}
	pool, err := endpoint.NewPool(endpoint.Of("fake", nil, 2))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	s, err := New(Config{Suite: suite, Model: "qwen", Pool: pool, Runner: func() *runner.Runner { return &runner.Runner{} }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// TestRequestsRefused: each request the service refuses says which field
// is wrong and what it expected.
func TestRequestsRefused(t *testing.T) {
	s := newService(t)
	for _, tt := range []struct{ body, want string }{
		{`{"tasks": ["nope"]}`, `tasks: "nope" is not a task of the suite examples (tasks: access-log-regex,`},
		{`{"tasks": []}`, "tasks: missing"},
		{`{"tasks": ["recipe-trailing-dot", "recipe-trailing-dot"]}`, "given twice"},
		{`{"tasks": ["recipe-trailing-dot"], "attempts": -1}`, "attempts: expected 1 or more"},
		{`{"tasks": ["recipe-trailing-dot"], "advantage": "ppo"}`, "advantage:"},
		{`{"tasks": ["recipe-trailing-dot"], "advantage": "grpo-batch"}`, "grpo-batch normalises over every group"},
		{`{"tasks": ["recipe-trailing-dot"], "limits": {"wall_time": "10"}}`, `limits.wall_time: expected a duration`},
		{`{"tasks": ["recipe-trailing-dot"], "name": "a b"}`, `name: "a b"`},
		{`{"tasks": ["recipe-trailing-dot"], "arm": {"approver": "command:rm"}}`, "arm.approver"},
		{`{"tasks": ["recipe-trailing-dot"], "temperature": 1}`, `unknown field "temperature"`},
		{`{"tasks": ["recipe-trailing-dot"]} {}`, "more than one JSON object"},
		{`{"tasks": ["recipe-trailing-dot"], "options": {"seed": 3}}`, `options.seed: give the request's "seed"`},
		{`{"tasks": 3}`, "field tasks: expected []string, got number"},
		{`{"tasks": ["recipe-trailing-dot"], "arm": {"servers": ["name = \"x\", command = 3"]}}`, "arm.servers[0]:"},
		{`{"tasks": ["recipe-trailing-dot"], "arm": {"servers": [{"name": "x"}]}}`, "field arm.servers"},
	} {
		req, err := decodeRequest(strings.NewReader(tt.body))
		if err == nil {
			_, err = s.plan(req)
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want an error saying %q", tt.body, err, tt.want)
		}
	}
	req, err := decodeRequest(strings.NewReader(`{"tasks": ["recipe-trailing-dot"], "attempts": 3, "options": {"num_predict": 64, "temperature": 0.5}, "model_digest": "d1",
		"arm": {"name": "mcp", "tools": ["read_file"], "servers": ["name = \"issues\", command = \"bench\", args = [\"mcp\", \"serve\", \"issues\"], default_class = \"read\""]}}`))
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.plan(req)
	if err != nil {
		t.Fatal(err)
	}
	if p.Attempts != 3 || !p.Tokens || p.ModelDigest != "d1" || p.Options["num_predict"] != int64(64) || p.Options["temperature"] != 0.5 || p.Model != "qwen" || p.Arms[0].Name != "mcp" ||
		len(p.Arms[0].Servers) != 1 || p.Arms[0].Servers[0].Name != "issues" || p.Arms[0].Servers[0].DefaultClass != "read" {
		t.Errorf("plan %+v", p)
	}
}

// TestGroupEvent: a group's advantages are over its finished attempts;
// an infrastructure failure has none, and no token data.
func TestGroupEvent(t *testing.T) {
	s := newService(t)
	req, _ := decodeRequest(strings.NewReader(`{"tasks": ["recipe-trailing-dot"], "attempts": 3, "advantage": "drgrpo"}`))
	p, err := s.plan(req)
	if err != nil {
		t.Fatal(err)
	}
	gs := newGroups("r1", p)
	one, zero := 1, 0
	tok := func() *agent.Trajectory {
		return &agent.Trajectory{Stop: agent.StopAnswered, Turns: []agent.Turn{{Tokens: &agent.TurnTokens{Exact: true, PromptIDs: []int32{1, 2}, CompletionIDs: []int32{3}, Logprobs: []float32{-1}}}}}
	}
	attempts := []*results.Attempt{
		{Key: results.AttemptKey{Task: "recipe-trailing-dot", Index: 0}, Status: results.StatusFinished, Reward: &one, Trajectory: tok()},
		{Key: results.AttemptKey{Task: "recipe-trailing-dot", Index: 2}, Status: results.StatusInfraError, Error: "model server down", Trajectory: tok()},
		{Key: results.AttemptKey{Task: "recipe-trailing-dot", Index: 1}, Status: results.StatusFinished, Reward: &zero, Trajectory: tok()},
	}
	var got *pending
	for i, a := range attempts {
		if g := gs.add(a); g != nil {
			if i != 2 {
				t.Fatalf("group sent after %d attempts of 3", i+1)
			}
			got = g
		}
	}
	if got == nil {
		t.Fatal("no group after 3 attempts")
	}
	ev := got.event(true)
	if ev.AdvantageMethod != "drgrpo" || len(ev.Attempts) != 3 || ev.GroupID != "r1/default/recipe-trailing-dot" {
		t.Fatalf("event %+v", ev)
	}
	a0, a2, a1 := ev.Attempts[0], ev.Attempts[1], ev.Attempts[2]
	if *a0.Advantage != 0.5 || *a1.Advantage != -0.5 || a2.Advantage != nil || a2.Reward != nil {
		t.Errorf("advantages %v %v %v: want 0.5, -0.5 over the finished two, none for the infrastructure failure", a0.Advantage, a1.Advantage, a2.Advantage)
	}
	if a0.Rollout == nil || a2.Rollout != nil || a2.TokensMissing != "not scored: infra_error" || a2.Error != "model server down" {
		t.Errorf("token data: %+v / %+v", a0, a2)
	}
	if gs.unfinished() != nil {
		t.Error("a group sent is sent again at the end")
	}
}

// TestRequestEndpoints: a request's endpoints are the service's, named
// by name or URL; its attempts then acquire from a view of the service's
// pool over those only. Anything else is refused, naming the field and
// listing the service's endpoints.
func TestRequestEndpoints(t *testing.T) {
	newEP := func(api endpoint.API, url string) *endpoint.Endpoint {
		e, err := endpoint.New(api, endpoint.Spec{URL: url, Slots: 1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	gpu1 := newEP(endpoint.Ollama, "http://gpu1:11434")
	gpu2 := newEP(endpoint.Ollama, "gpu2") // named http://gpu2:11434
	vllm := newEP(endpoint.OpenAI, "http://gpu3:8000/v1")
	pool, err := endpoint.NewPool(gpu1, gpu2, vllm)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	suite, err := tasks.LoadSuite("../tasks/suites/examples")
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Suite: suite, Model: "qwen", Pool: pool, Runner: func() *runner.Runner { return &runner.Runner{} }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	all := "its endpoints: http://gpu1:11434, http://gpu2:11434, http://gpu3:8000)"
	for _, tt := range []struct {
		endpoints string // the field's JSON; "" leaves it out
		want      []string
		wantErr   string
	}{
		{"", []string{"http://gpu1:11434", "http://gpu2:11434", "http://gpu3:8000"}, ""},
		{`["http://gpu1:11434"]`, []string{"http://gpu1:11434"}, ""},
		{`["gpu2:11434"]`, []string{"http://gpu2:11434"}, ""},
		{`["http://gpu2:11434/"]`, []string{"http://gpu2:11434"}, ""},
		{`["http://gpu3:8000/v1", "gpu1"]`, []string{"http://gpu3:8000", "http://gpu1:11434"}, ""},
		{`["http://gpu3:8000/"]`, []string{"http://gpu3:8000"}, ""},
		{`["http://evil:11434"]`, nil, `endpoints[0]: "http://evil:11434" is not an endpoint of this service (` + all},
		{`["gpu1", "http://gpu3:8001"]`, nil, `endpoints[1]: "http://gpu3:8001" is not an endpoint`},
		{`["http://gpu3:11434"]`, nil, "is not an endpoint"}, // the host, not the address
		{`[""]`, nil, `endpoints[0]: "" is not an endpoint`},
		{`[]`, nil, "endpoints: empty (leave it out to run on every endpoint of the service: http://gpu1:11434,"},
		{`["gpu1:11434", "http://gpu1:11434"]`, nil, `endpoints[1]: "http://gpu1:11434" is the endpoint http://gpu1:11434, given already as "gpu1:11434"`},
		{`"gpu1"`, nil, "field endpoints: expected []string"},
	} {
		body := `{"tasks": ["recipe-trailing-dot"]`
		if tt.endpoints != "" {
			body += `, "endpoints": ` + tt.endpoints
		}
		body += "}"
		req, err := decodeRequest(strings.NewReader(body))
		var p *endpoint.Pool
		if err == nil {
			p, err = s.pool(req)
		}
		if tt.wantErr != "" {
			var bad *BadRequestError
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.As(err, &bad) {
				t.Errorf("%s: %v, want a bad request saying %q", tt.endpoints, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.endpoints, err)
			continue
		}
		var got []string
		for _, e := range p.Endpoints() {
			got = append(got, e.Name)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: endpoints %v, want %v", tt.endpoints, got, tt.want)
		}
		if tt.endpoints == "" && p != pool {
			t.Errorf("a request naming no endpoint runs on another pool than the service's")
		}
	}
}
