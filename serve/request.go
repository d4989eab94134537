package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/benchhq/bench/evaluator"
	"github.com/benchhq/bench/runner"
	"github.com/benchhq/bench/tasks"
)

// Request is what a training loop asks for: G attempts of each of some
// tasks under one arm, with the model and sampling of its current
// policy. docs/serve.md describes every field.
type Request struct {
	// Tasks are task ids of the service's suite (at least one).
	Tasks []string `json:"tasks"`
	// Attempts is G, the attempts per task: each task's group.
	Attempts int `json:"attempts"`
	// Arm is the setup of the attempts.
	Arm RequestArm `json:"arm"`
	// Model is the model name the endpoints serve (the service's by
	// default).
	Model string `json:"model"`
	// Options are the sampling settings (temperature, top_p, seed,
	// num_predict, ...) on top of the service's.
	Options map[string]any `json:"options"`
	// Seed is the request's seed; every attempt's derives from it (1 by
	// default).
	Seed int64 `json:"seed"`
	// Endpoints, when set, restrict the request's attempts to these of
	// the service's endpoints, each named by its name or URL (all of them
	// by default). They share their slots with every other request.
	Endpoints []string `json:"endpoints"`
	// ModelDigest, when set, is the identity of the weights every attempt
	// must be served by; an attempt served by others is an
	// infrastructure failure, never scored.
	ModelDigest string `json:"model_digest"`
	// Tokens asks for each turn's token ids and logprobs (true by
	// default).
	Tokens *bool `json:"tokens"`
	// Advantage is the advantage method of each group (grpo by default;
	// grpo-batch, which needs every group, is refused).
	Advantage string `json:"advantage"`
	// Name is the run's id in the store (a fresh one by default); a name
	// the store holds already continues that run.
	Name string `json:"name"`
	// Limits override the tasks' own (max_turns, max_tokens, wall_time).
	Limits *RequestLimits `json:"limits"`
}

// RequestArm is the setup of a request's attempts.
type RequestArm struct {
	// Name names the arm in the store ("default" by default).
	Name string `json:"name"`
	// Tools are the built-in tools offered (all by default).
	Tools []string `json:"tools"`
	// Servers are MCP servers attached to every attempt, each the body
	// of a TOML inline table as bench run --server takes it:
	// `name = "issues", command = "...", default_class = "read"`.
	Servers []string `json:"servers"`
	// Profile is the permission profile (standard by default).
	Profile string `json:"profile"`
	// Approver answers the calls the profile asks about: "deny" (the
	// default) or "allow": nobody is at a terminal.
	Approver string `json:"approver"`
}

// RequestLimits are limits of a request's attempts.
type RequestLimits struct {
	MaxTurns  int    `json:"max_turns"`
	MaxTokens int    `json:"max_tokens"`
	WallTime  string `json:"wall_time"`
}

// BadRequestError is a request the service refuses before running
// anything: HTTP 400 with its message.
type BadRequestError struct{ Msg string }

func (e *BadRequestError) Error() string { return e.Msg }

func badf(format string, args ...any) error {
	return &BadRequestError{Msg: fmt.Sprintf(format, args...)}
}

// decodeRequest reads a request body, refusing unknown fields by name.
func decodeRequest(r io.Reader) (*Request, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var req Request
	if err := dec.Decode(&req); err != nil {
		var syn *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.Is(err, io.EOF):
			return nil, badf("request body: empty (expected a JSON object such as {\"tasks\": [\"recipe-trailing-dot\"], \"attempts\": 4})")
		case errors.As(err, &syn):
			return nil, badf("request body: not JSON at byte %d: %v", syn.Offset, err)
		case errors.As(err, &typ):
			return nil, badf("request body: field %s: expected %s, got %s", typ.Field, typ.Type, typ.Value)
		case strings.HasPrefix(err.Error(), "json: unknown field"):
			return nil, badf("request body: %s (fields: tasks, attempts, arm, model, endpoints, options, seed, model_digest, tokens, advantage, name, limits)", strings.TrimPrefix(err.Error(), "json: "))
		}
		return nil, badf("request body: %v", err)
	}
	if dec.More() {
		return nil, badf("request body: more than one JSON object")
	}
	return &req, nil
}

// plan turns a request into the plan of its run, on the service's
// defaults, checking it as bench run checks its flags.
func (s *Service) plan(req *Request) (*runner.Plan, error) {
	if len(req.Tasks) == 0 {
		return nil, badf("tasks: missing (expected task ids of the suite %s: %s)", s.cfg.Suite.Name, s.taskIDs())
	}
	suite := &tasks.Suite{Name: s.cfg.Suite.Name, Dir: s.cfg.Suite.Dir}
	for _, id := range req.Tasks {
		t, ok := s.cfg.Suite.Task(id)
		if !ok {
			return nil, badf("tasks: %q is not a task of the suite %s (tasks: %s)", id, s.cfg.Suite.Name, s.taskIDs())
		}
		if slices.Contains(suite.Tasks, t) {
			return nil, badf("tasks: %q is given twice", id)
		}
		suite.Tasks = append(suite.Tasks, t)
	}
	if req.Attempts < 0 {
		return nil, badf("attempts: expected 1 or more, got %d", req.Attempts)
	}
	arm := runner.Arm{Name: req.Arm.Name, Tools: req.Arm.Tools, Profile: req.Arm.Profile, Approver: req.Arm.Approver}
	if arm.Name == "" {
		arm.Name = "default"
	}
	for i, v := range req.Arm.Servers {
		srv, err := tasks.ParseServer(v)
		if err != nil {
			return nil, badf("arm.servers[%d]: %v", i, err)
		}
		arm.Servers = append(arm.Servers, srv)
	}
	switch arm.Approver {
	case "", "deny", "allow":
	default:
		return nil, badf("arm.approver: %q: bench serve takes deny or allow (nobody answers at a terminal, and commands are the operator's to set in a run file)", arm.Approver)
	}
	opts := maps.Clone(s.cfg.Options)
	if opts == nil {
		opts = map[string]any{}
	}
	if _, ok := req.Options["seed"]; ok {
		return nil, badf(`options.seed: give the request's "seed" instead: each attempt's seed derives from it`)
	}
	for k, v := range req.Options {
		if n, ok := v.(float64); ok && n == float64(int64(n)) && (k == "seed" || k == "num_ctx" || k == "num_predict" || k == "top_k") {
			v = int64(n) // JSON numbers that are integers, as flags give them
		}
		opts[k] = v
	}
	method := evaluator.Method(req.Advantage)
	if method == "" {
		method = evaluator.GRPO
	}
	if _, err := evaluator.ParseMethod(string(method)); err != nil {
		return nil, badf("advantage: %v", err)
	}
	if method == evaluator.GRPOBatch {
		return nil, badf("advantage: grpo-batch normalises over every group of a batch, and bench serve returns each group as it finishes: ask for grpo, drgrpo or rloo")
	}
	model := req.Model
	if model == "" {
		model = s.cfg.Model
	}
	if model == "" {
		return nil, badf("model: missing (the service has no default: start it with --model, or name the model in the request)")
	}
	tokens := req.Tokens == nil || *req.Tokens
	p := &runner.Plan{
		Name: req.Name, Model: model, Options: opts, Seed: req.Seed, Attempts: req.Attempts,
		Suite: suite, Arms: []runner.Arm{arm}, Concurrency: s.cfg.Concurrency, API: s.cfg.API,
		Advantage: method, Tokens: tokens, ModelDigest: req.ModelDigest,
		RequestTimeout: s.cfg.RequestTimeout, MaxTries: s.cfg.MaxTries,
		Sandbox: s.cfg.Sandbox, Profiles: s.cfg.Profiles, ProfilesRaw: s.cfg.ProfilesRaw, BaseDir: s.cfg.BaseDir,
	}
	if p.Seed == 0 {
		p.Seed = 1
	}
	if l := req.Limits; l != nil {
		p.Limits.MaxTurns, p.Limits.MaxTokens = l.MaxTurns, l.MaxTokens
		if l.WallTime != "" {
			d, err := tasks.ParseDuration(l.WallTime)
			if err != nil {
				return nil, badf("limits.wall_time: %v", err)
			}
			p.Limits.WallTime = tasks.Duration{Duration: d}
		}
	}
	if req.Name != "" && !runner.ValidName(req.Name) {
		return nil, badf("name: %q: expected letters, digits, '.', '-' and '_'", req.Name)
	}
	if err := p.Normalize(); err != nil {
		return nil, badf("%s", strings.TrimPrefix(err.Error(), "plan: "))
	}
	return p, nil
}

func (s *Service) taskIDs() string {
	var b bytes.Buffer
	for i, t := range s.cfg.Suite.Tasks {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(t.ID)
	}
	return b.String()
}
