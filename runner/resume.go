package runner

import (
	"encoding/json"
	"fmt"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/evaluator"
	"github.com/benchhq/bench/results"
	"github.com/benchhq/bench/sandbox"
	"github.com/benchhq/bench/tasks"
)

// storedPlan is the plan as stored with its run (results.Run.Config), the
// one shape it is written and read in.
type storedPlan struct {
	Name           string           `json:"name"`
	Model          string           `json:"model"`
	Options        map[string]any   `json:"options"`
	Seed           int64            `json:"seed"`
	Attempts       int              `json:"attempts"`
	Suite          string           `json:"suite"`
	Arms           []Arm            `json:"arms"`
	Concurrency    int              `json:"concurrency"`
	Limits         tasks.Limits     `json:"limits"`
	System         string           `json:"system"`
	MaxTries       int              `json:"max_tries"`
	Advantage      evaluator.Method `json:"advantage"`
	RequestTimeout tasks.Duration   `json:"request_timeout"`
	Profiles       map[string]any   `json:"profiles"`
	Sandbox        sandbox.Config   `json:"sandbox"`
	BaseDir        string           `json:"base_dir"`
	API            string           `json:"api,omitempty"`
}

// storedPlanOf is the stored form of a normalized plan.
func storedPlanOf(p *Plan) storedPlan {
	return storedPlan{
		Name:           p.Name,
		Model:          p.Model,
		Options:        p.Options,
		Seed:           p.Seed,
		Attempts:       p.Attempts,
		Suite:          p.Suite.Dir,
		Arms:           p.Arms,
		Concurrency:    p.Concurrency,
		Limits:         p.Limits,
		System:         p.System,
		MaxTries:       p.MaxTries,
		Advantage:      p.Advantage,
		RequestTimeout: tasks.Duration{Duration: p.RequestTimeout},
		Profiles:       p.ProfilesRaw,
		Sandbox:        p.Sandbox,
		BaseDir:        p.BaseDir,
		API:            p.API,
	}
}

// PlanFromRun rebuilds the plan of a stored run, so that it can be resumed
// with the same model, options, seeds, arms and tasks. The tasks are loaded
// again from the folders the run used.
func PlanFromRun(run *results.Run) (*Plan, error) { return PlanFromRunLoading(run, tasks.Load) }

// PlanFromRunLoading is PlanFromRun with each task loaded again by load
// (from its folder): for suites in another format (a Rooted's).
func PlanFromRunLoading(run *results.Run, load func(dir string) (*tasks.Task, error)) (*Plan, error) {
	var sp storedPlan
	if err := json.Unmarshal([]byte(run.Config), &sp); err != nil {
		return nil, fmt.Errorf("stored plan of run %s: %w", run.ID, err)
	}
	suite := &tasks.Suite{Name: run.Suite, Dir: run.SuiteDir}
	for _, ti := range run.Tasks {
		t, err := load(ti.Dir)
		if err != nil {
			return nil, fmt.Errorf("reload task %s of run %s: %w", ti.ID, run.ID, err)
		}
		suite.Tasks = append(suite.Tasks, t)
	}
	profiles, err := agent.ParseProfiles("stored plan of run "+run.ID, sp.Profiles)
	if err != nil {
		return nil, err
	}
	var shard Shard
	if run.Shard != "" {
		if shard, err = ParseShard(run.Shard); err != nil {
			return nil, fmt.Errorf("run %s: shard: %w", run.ID, err)
		}
	}
	return &Plan{
		Name:           sp.Name,
		Model:          sp.Model,
		Options:        sp.Options,
		Seed:           sp.Seed,
		Attempts:       sp.Attempts,
		Suite:          suite,
		Arms:           sp.Arms,
		Concurrency:    sp.Concurrency,
		Limits:         sp.Limits,
		System:         sp.System,
		MaxTries:       sp.MaxTries,
		Advantage:      sp.Advantage,
		RequestTimeout: sp.RequestTimeout.Duration,
		Profiles:       profiles,
		ProfilesRaw:    sp.Profiles,
		Sandbox:        sp.Sandbox,
		BaseDir:        sp.BaseDir,
		API:            sp.API,
		Shard:          shard,
	}, nil
}

// CheckResume says whether a stored run can be continued with this plan
// (normalized), before anything is run: nil, or what differs.
func CheckResume(run *results.Run, p *Plan) error { return compatible(run, p) }

// compatible checks that a stored run can be continued with this plan:
// everything that shapes an attempt is the same (model and options, seed,
// G, arms with their tools, servers, profiles and approvers, limits, system
// prompt, sandbox limits, advantage method), and so are the tasks, file for
// file. What only paces the run (concurrency, tries, request timeout,
// keeping workspaces, the sandbox's mode) may change.
func compatible(run *results.Run, p *Plan) error {
	var was storedPlan
	if err := json.Unmarshal([]byte(run.Config), &was); err != nil {
		return fmt.Errorf("stored plan: %w", err)
	}
	if run.Shard != p.Shard.String() {
		return fmt.Errorf("the run is %s, not %s: each shard keeps its own slice (and its own file)", shardName(run.Shard), shardName(p.Shard.String()))
	}
	if err := samePlan(was, storedPlanOf(p)); err != nil {
		return err
	}
	return sameTasks(run.Tasks, p.Suite.Tasks)
}

func shardName(s string) string {
	if s == "" {
		return "the whole plan"
	}
	return "shard " + s
}

// samePlan checks that two stored plans shape attempts the same way:
// model and options, API, seed, G, arms, limits, system prompt, advantage
// method, profiles, sandbox limits. What only paces a run may differ.
func samePlan(was, now storedPlan) error {
	differs := func(field string, a, b any) error {
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if string(ja) == string(jb) {
			return nil
		}
		return fmt.Errorf("the run's %s was %s, not %s: start a new run (another --name) to change it", field, ja, jb)
	}
	was.Sandbox.Mode, now.Sandbox.Mode = "", ""
	for _, c := range []struct {
		field string
		a, b  any
	}{
		{"model", was.Model, now.Model},
		{"options", was.Options, now.Options},
		{"seed", was.Seed, now.Seed},
		{"attempts per task", was.Attempts, now.Attempts},
		{"arms", was.Arms, now.Arms},
		{"limits", was.Limits, now.Limits},
		{"system prompt", was.System, now.System},
		{"advantage method", was.Advantage, now.Advantage},
		{"profiles", was.Profiles, now.Profiles},
		{"sandbox limits", was.Sandbox, now.Sandbox},
		{"API", was.API, now.API},
	} {
		if err := differs(c.field, c.a, c.b); err != nil {
			return err
		}
	}
	return nil
}

// sameTasks checks that a plan's tasks are a stored run's, file for file.
func sameTasks(stored []results.TaskInfo, ts []*tasks.Task) error {
	hashes := map[string]string{}
	for _, t := range stored {
		hashes[t.ID] = t.Hash
	}
	if len(ts) != len(stored) {
		return fmt.Errorf("the run has %d tasks, this plan %d: start a new run (another --name) to change them", len(stored), len(ts))
	}
	for _, t := range ts {
		h, ok := hashes[t.ID]
		if !ok {
			return fmt.Errorf("the run has no task %q", t.ID)
		}
		if h != t.Hash {
			return fmt.Errorf("task %s changed since the run started (its files differ): start a new run", t.ID)
		}
	}
	return nil
}
