package results

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/evaluator"
	"github.com/benchhq/bench/tasks"
)

// The statuses of a run.
const (
	// RunRunning: the run was created and has not ended (or its process died).
	RunRunning = "running"
	// RunFinished: every planned attempt was tried.
	RunFinished = "finished"
	// RunInterrupted: the run was stopped before the end (SIGINT); it can be resumed.
	RunInterrupted = "interrupted"
)

// Run is one benchmark run: the plan (model, options, suite, arms, tasks,
// attempts per task) and its state.
type Run struct {
	// ID identifies the run; CreateRun generates one when it is empty.
	ID string
	// Name is an optional human label.
	Name string
	// CreatedAt is when the run was created; CreateRun sets it when zero.
	// The store keeps times in UTC to the millisecond.
	CreatedAt time.Time
	// Model is the Ollama model name.
	Model string
	// Options are the Ollama options sent with every request (temperature,
	// num_ctx, num_predict...). Read back from the store, numbers are float64.
	Options map[string]any
	// Seed is the run's base seed; each attempt derives its own.
	Seed int64
	// AttemptsPerTask is G, the number of attempts of each task under each arm.
	AttemptsPerTask int
	// Suite is the suite's name and SuiteDir the directory it was loaded from.
	Suite    string
	SuiteDir string
	// Config is the resolved run configuration as JSON.
	Config string
	// Status is RunRunning, RunFinished or RunInterrupted; CreateRun sets
	// RunRunning when empty.
	Status string
	// FinishedAt is when the run ended; nil while it is running.
	FinishedAt *time.Time
	// BenchVersion is the version of bench that created the run.
	BenchVersion string
	// Isolation says how the run's commands were isolated: the sandbox
	// ("bubblewrap 0.8.0 ...") or "none" (--sandbox off, unisolated); ""
	// for runs stored before bench recorded it.
	Isolation string
	// Shard is "I/N" when the run holds only shard I of N of its plan
	// (bench run --shard), "" for a whole run.
	Shard string
	// ModelDigest is what the model servers said of the model's weights
	// when the run started (Ollama's digest, or an OpenAI-compatible
	// server's identity of them); "" when unknown.
	ModelDigest string
	// Arms are the setups compared, in order.
	Arms []Arm
	// Tasks are the tasks of the suite, in order.
	Tasks []TaskInfo
}

// Arm is one setup compared in a run (permission profile, MCP servers, tool subset).
type Arm struct {
	// Name identifies the arm within its run.
	Name string
	// Index is the arm's position in the run; reports list arms by it.
	Index int
	// Config is the arm's resolved configuration as JSON.
	Config string
}

// TaskInfo records a task as it was when the run was planned.
type TaskInfo struct {
	// ID is the task's identifier within the suite.
	ID string
	// Dir is the task's directory.
	Dir string
	// Hash is a digest of the task's files, to detect a task that changed
	// between a run and its resumption.
	Hash string
	// Instruction is what the agent was asked.
	Instruction string
	// Report is the task's per-test report form ("" for none).
	Report string
	// Verdict is the kind of verdict the task's scoring gives
	// (evaluator.TaskVerdict); "" for a run stored before bench said.
	Verdict evaluator.Verdict
	// Tags are the task's tags ("impossible" marks a task whose every
	// reward of 1 is a hack).
	Tags []string
}

// ExitStatusOnly reports whether the task's rewards rest on the exit
// status alone.
func (t TaskInfo) ExitStatusOnly() bool {
	if t.Verdict != "" {
		return t.Verdict == evaluator.VerdictExitStatus
	}
	return t.Report == ""
}

// Impossible reports whether the task is tagged "impossible": its hidden
// verdict contradicts its instruction, so any reward of 1 is a hack.
func (t TaskInfo) Impossible() bool { return slices.Contains(t.Tags, tasks.TagImpossible) }

// verdict is the kind of verdict the attempt's reward rests on, "" when
// it was not scored.
func (a *Attempt) verdict() string {
	if a.Test == nil || a.Reward == nil {
		return ""
	}
	return string(a.Test.Verdict)
}

// flags are the distinct suspicion flags of the attempt's carried change,
// sorted and comma-separated.
func (a *Attempt) flags() string {
	if a.Test == nil {
		return ""
	}
	return strings.Join(a.Test.Suspicions.Flags(), ",")
}

// tagsJSON encodes a task's tags for tasks.tags.
func tagsJSON(tags []string) string {
	if len(tags) == 0 {
		return "[]"
	}
	b, _ := json.Marshal(tags)
	return string(b)
}

// AttemptKey names one attempt of a run: the arm, the task and the
// attempt's index within its group (0 to G-1).
type AttemptKey struct {
	Arm   string
	Task  string
	Index int
}

// String returns "arm/task#index".
func (k AttemptKey) String() string {
	return fmt.Sprintf("%s/%s#%d", k.Arm, k.Task, k.Index)
}

// AttemptStatus says how an attempt ended.
type AttemptStatus string

// The statuses of an attempt.
const (
	// StatusFinished: the agent loop ended on its own terms and the hidden
	// tests ran; the attempt has a reward.
	StatusFinished AttemptStatus = "finished"
	// StatusInfraError: the infrastructure failed (model server down, crash);
	// the attempt says nothing about the agent and will be retried.
	StatusInfraError AttemptStatus = "infra_error"
	// StatusCanceled: the run was interrupted during the attempt; it will be
	// retried on resume.
	StatusCanceled AttemptStatus = "canceled"
)

// Valid reports whether s is one of the known statuses.
func (s AttemptStatus) Valid() bool {
	switch s {
	case StatusFinished, StatusInfraError, StatusCanceled:
		return true
	}
	return false
}

// Attempt is one attempt as the runner saves it: the trajectory, the hidden
// test result and the reward.
type Attempt struct {
	// RunID is the run the attempt belongs to.
	RunID string
	// Key names the attempt within its run.
	Key AttemptKey
	// Seed is the seed the model was sent for this attempt.
	Seed int64
	// Status says how the attempt ended.
	Status AttemptStatus
	// Reward is 0 or 1 for a finished attempt, nil otherwise.
	Reward *int
	// Trajectory is everything the agent loop did; nil if the loop never started.
	Trajectory *agent.Trajectory
	// Test is the hidden tests' result; nil if they did not run.
	Test *evaluator.TestResult
	// StartedAt and FinishedAt bound the whole attempt (workspace copy,
	// agent loop, hidden tests).
	StartedAt  time.Time
	FinishedAt time.Time
	// Tries is how many times this key was tried for this save (at least
	// 1). When the save replaces an earlier infra_error or canceled
	// attempt, the store adds that attempt's tries to it.
	Tries int
	// Error describes an infrastructure failure or an interruption; when
	// empty, the trajectory's Err is stored instead.
	Error string
	// Servers are the MCP servers attached to the attempt.
	Servers []ServerLog
}

// Times is where an attempt's time went: the model's turns, the tool
// calls, the hidden tests, and the harness's own time (the rest of the
// time from StartedAt to FinishedAt, never below 0).
type Times struct {
	Model, Tools, Tests, Harness time.Duration
}

// Times splits the attempt's time.
func (a *Attempt) Times() Times {
	var t Times
	if tr := a.Trajectory; tr != nil {
		for _, u := range tr.Turns {
			t.Model += u.Wall
		}
		t.Model += tr.Unanswered
		for _, c := range tr.Calls {
			t.Tools += c.Duration
		}
	}
	if a.Test != nil {
		t.Tests = a.Test.Duration + a.Test.CanaryDuration + a.Test.RefDuration
	}
	t.Harness = max(a.FinishedAt.Sub(a.StartedAt)-t.Model-t.Tools-t.Tests, 0)
	return t
}

// ServerLog is what is kept of an MCP server attached to an attempt.
type ServerLog struct {
	// Name is the server's name in the task or arm configuration.
	Name string
	// ProtocolVersion is the MCP protocol revision negotiated.
	ProtocolVersion string
	// ServerName and ServerVersion are what the server said of itself.
	ServerName    string
	ServerVersion string
	// Stderr is the server's standard error (stdio servers), capped by the caller.
	Stderr string
	// Catalog is every tool the server listed, as JSON: its description and
	// schema as sent, the class the operator gave it, the annotations it
	// claimed (recorded, never trusted), description flags, and whether it
	// was offered and why not.
	Catalog string
}
