package runner

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/evaluator"
	"github.com/benchhq/bench/results"
	"github.com/benchhq/bench/tasks"
)

// storedPlan is the JSON shape of a plan stored with its run.
type storedPlan struct {
	Name        string         `json:"name"`
	Model       string         `json:"model"`
	Options     map[string]any `json:"options"`
	Seed        int64          `json:"seed"`
	Attempts    int            `json:"attempts"`
	Arms        []Arm          `json:"arms"`
	Concurrency int            `json:"concurrency"`
	Limits      struct {
		MaxTurns  int            `json:"MaxTurns"`
		MaxTokens int            `json:"MaxTokens"`
		WallTime  tasks.Duration `json:"WallTime"`
	} `json:"limits"`
	System         string              `json:"system"`
	MaxTries       int                 `json:"max_tries"`
	Advantage      evaluator.Method    `json:"advantage"`
	RequestTimeout string              `json:"request_timeout"`
	Profiles       map[string]any      `json:"profiles"`
	Sandbox        agent.SandboxConfig `json:"sandbox"`
	BaseDir        string              `json:"base_dir"`
}

// PlanFromRun rebuilds the plan of a stored run, so that it can be resumed
// with the same model, options, seeds, arms and tasks. The tasks are loaded
// again from the suite folder the run used.
func PlanFromRun(run *results.Run) (*Plan, error) {
	var sp storedPlan
	if err := json.Unmarshal([]byte(run.Config), &sp); err != nil {
		return nil, fmt.Errorf("stored plan of run %s: %w", run.ID, err)
	}
	suite := &tasks.Suite{Name: run.Suite, Dir: run.SuiteDir}
	for _, ti := range run.Tasks {
		t, err := tasks.Load(ti.Dir)
		if err != nil {
			return nil, fmt.Errorf("reload task %s of run %s: %w", ti.ID, run.ID, err)
		}
		suite.Tasks = append(suite.Tasks, t)
	}
	var reqTimeout time.Duration
	if sp.RequestTimeout != "" {
		var err error
		if reqTimeout, err = time.ParseDuration(sp.RequestTimeout); err != nil {
			return nil, fmt.Errorf("stored plan of run %s: request_timeout: %w", run.ID, err)
		}
	}
	profiles, err := agent.ParseProfiles("stored plan of run "+run.ID, sp.Profiles)
	if err != nil {
		return nil, err
	}
	opts := sp.Options
	delete(opts, "seed")
	return &Plan{
		Name:        sp.Name,
		Model:       sp.Model,
		Options:     opts,
		Seed:        sp.Seed,
		Attempts:    sp.Attempts,
		Suite:       suite,
		Arms:        sp.Arms,
		Concurrency: sp.Concurrency,
		Limits:      tasks.Limits{MaxTurns: sp.Limits.MaxTurns, MaxTokens: sp.Limits.MaxTokens, WallTime: sp.Limits.WallTime},
		System:      sp.System,
		MaxTries:    sp.MaxTries,
		Advantage:   sp.Advantage,

		RequestTimeout: reqTimeout,
		Profiles:       profiles,
		ProfilesRaw:    sp.Profiles,
		Sandbox:        sp.Sandbox,
		BaseDir:        sp.BaseDir,
	}, nil
}
