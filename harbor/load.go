package harbor

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/benchhq/bench/tasks"
)

// The files of a Harbor task folder.
const (
	ConfigFile      = "task.toml"
	InstructionFile = "instruction.md"
	DockerfilePath  = "environment/Dockerfile"
	TestScript      = "tests/test.sh"
	SolveScript     = "solution/solve.sh"
)

// TestCommand is how the verifier runs, as Harbor runs it.
const TestCommand = "bash " + TestsPath + "/test.sh"

// Task is a Harbor task folder, loaded: the bench task it converts to and
// what only a Harbor task has.
type Task struct {
	// Task is the bench task: instruction, limits (the agent's timeout as
	// wall time), the verifier as its hidden tests (TestCommand, with the
	// verifier's timeout and environment), the build timeout, metadata as
	// tags.
	Task *tasks.Task
	// Image is [environment] docker_image: a prebuilt image to pull; ""
	// when the Dockerfile is replayed.
	Image string
	// Dockerfile is environment/Dockerfile, parsed for replay; nil when
	// Image is set (the file, if any, then only documents the image).
	Dockerfile *Dockerfile
	// Workdir is the agent's working folder inside the environment:
	// [environment] workdir, else the Dockerfile's last WORKDIR; "" for
	// the image's own.
	Workdir string
	// AllowInternet is [environment] allow_internet as written (nil: unset).
	AllowInternet *bool
	// SolutionEnv is [solution] env: the reference solution's environment.
	SolutionEnv map[string]string
	// Metadata is the free [metadata] table.
	Metadata map[string]any
	// Notes are what bench cannot honour of the task, each naming the
	// field: reported when the task loads.
	Notes []Note
}

// Note is one thing of a task bench cannot honour as written.
type Note struct {
	// Field is the dotted field of task.toml ("environment.gpus"), or the
	// file it is about.
	Field string
	// Msg says what bench does instead.
	Msg string
}

func (n Note) String() string { return n.Field + ": " + n.Msg }

// Options are what a load checks a task against.
type Options struct {
	// Network says the run's permission profile lets attempts reach the
	// network; a task that asks for internet access is noted otherwise.
	Network bool
}

// Detect reports whether dir is a Harbor task folder: a task.toml beside
// an instruction.md and a tests/test.sh, whose task.toml does not declare
// bench's own format (format = N, the instruction in it).
func Detect(dir string) bool {
	for _, f := range []string{ConfigFile, InstructionFile, TestScript} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || !fi.Mode().IsRegular() {
			return false
		}
	}
	var top map[string]any
	if _, err := toml.DecodeFile(filepath.Join(dir, ConfigFile), &top); err == nil {
		if _, bench := top["format"]; bench {
			return false
		}
	}
	return true
}

// DetectSuite reports whether dir is a Harbor task folder or a folder
// whose first task folder (by name) is one.
func DetectSuite(dir string) bool {
	if Detect(dir) {
		return true
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		sub := filepath.Join(dir, e.Name())
		if _, err := os.Stat(filepath.Join(sub, ConfigFile)); err == nil {
			return Detect(sub)
		}
	}
	return false
}

// Load reads and checks the Harbor task folder dir. A field or file bench
// cannot use at all is an error naming it; one it cannot honour as
// written is a Note.
func Load(dir string, opts Options) (*Task, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("load task %s: %w", dir, err)
	}
	path := filepath.Join(abs, ConfigFile)
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &tasks.FieldError{File: path, Msg: "no task.toml: a Harbor task folder needs one"}
		}
		return nil, fmt.Errorf("load task %s: %w", dir, err)
	}
	var c config
	md, err := toml.Decode(string(data), &c)
	if err != nil {
		return nil, tasks.TOMLError(path, err)
	}
	h := &Task{Metadata: c.Metadata, SolutionEnv: c.Solution.Env, AllowInternet: c.Environment.AllowInternet}
	for _, k := range md.Undecoded() {
		if len(k) > 0 && k[0] == "metadata" {
			continue // free-form
		}
		h.note(k.String(), "not a field bench knows: ignored")
	}
	if v := c.Version + c.SchemaVersion; v != "" {
		if major, _, _ := strings.Cut(v, "."); major != "1" && major != "2" {
			h.note("version", fmt.Sprintf("%q: bench reads Harbor task files of versions 1.x and 2.x; read as such", v))
		}
	}

	instr, err := os.ReadFile(filepath.Join(abs, InstructionFile))
	if err != nil {
		return nil, &tasks.FieldError{File: filepath.Join(abs, InstructionFile), Msg: fmt.Sprintf("cannot read the instruction: %v", unwrapPath(err))}
	}
	if strings.TrimSpace(string(instr)) == "" {
		return nil, &tasks.FieldError{File: filepath.Join(abs, InstructionFile), Msg: "empty: expected the text the agent is asked"}
	}
	if fi, err := os.Stat(filepath.Join(abs, TestScript)); err != nil || !fi.Mode().IsRegular() {
		return nil, &tasks.FieldError{File: filepath.Join(abs, TestScript), Msg: "missing: the verifier script that writes " + LogsPath + "/" + RewardText + " or " + RewardJSON}
	}

	wall, err := seconds("agent.timeout_sec", c.Agent.TimeoutSec)
	if err != nil {
		return nil, &tasks.FieldError{File: path, Msg: err.Error()}
	}
	testTimeout, err := seconds("verifier.timeout_sec", c.Verifier.TimeoutSec)
	if err != nil {
		return nil, &tasks.FieldError{File: path, Msg: err.Error()}
	}
	build, err := seconds("environment.build_timeout_sec", c.Environment.BuildTimeoutSec)
	if err != nil {
		return nil, &tasks.FieldError{File: path, Msg: err.Error()}
	}

	if err := h.environment(abs, path, c.Environment); err != nil {
		return nil, err
	}
	h.resources(c, opts)

	t, err := tasks.NewForeign(abs, tasks.Task{
		Format:      tasks.FormatVersion,
		Instruction: string(instr),
		Tags:        tags(c.Metadata),
		Limits:      tasks.Limits{WallTime: tasks.Duration{Duration: wall}},
		Tests: tasks.Tests{
			Command: TestCommand,
			Timeout: tasks.Duration{Duration: testTimeout},
			Canary:  new(bool), // the verifier, not bench, runs the tests
			Env:     c.Verifier.Env,
		},
		Environment: tasks.Environment{
			// The network is on for preparation only: pulling the
			// image, replaying the Dockerfile, provisioning the verifier's tools.
			Network: true,
			Timeout: tasks.Duration{Duration: build},
		},
	})
	if err != nil {
		return nil, err
	}
	h.Task = t
	return h, nil
}

// environment reads [environment]'s image, or the Dockerfile to replay.
func (h *Task) environment(dir, path string, e envConfig) error {
	for _, f := range []string{"docker-compose.yaml", "docker-compose.yml", "compose.yaml"} {
		if _, err := os.Stat(filepath.Join(dir, "environment", f)); err == nil {
			h.note("environment/"+f, "bench does not read it: no other service is started, none of its settings applied; the task runs in its one image")
		}
	}
	h.Image = strings.TrimSpace(e.DockerImage)
	h.Workdir = e.Workdir
	if h.Workdir != "" && !strings.HasPrefix(h.Workdir, "/") {
		return &tasks.FieldError{File: path, Field: "environment.workdir", Msg: fmt.Sprintf("expected an absolute path, got %q", h.Workdir)}
	}
	if h.Image != "" {
		return nil
	}
	df := filepath.Join(dir, DockerfilePath)
	b, err := os.ReadFile(df)
	if err != nil {
		return &tasks.FieldError{File: path, Field: "environment.docker_image", Msg: fmt.Sprintf("missing, and %s cannot be read (%v): expected an image to pull or a Dockerfile to replay", DockerfilePath, unwrapPath(err))}
	}
	d, err := ParseDockerfile(df, b)
	if err != nil {
		return err
	}
	h.Dockerfile = d
	for _, ig := range d.Ignored {
		h.note(DockerfilePath, ig+": changes no file; not replayed")
	}
	if h.Workdir == "" {
		for _, s := range d.Steps {
			if s.Op == "WORKDIR" {
				h.Workdir = s.Dir // expanded at replay
			}
		}
	}
	return nil
}

// resources notes what of the resources and users bench does not honour.
func (h *Task) resources(c config, opts Options) {
	e := c.Environment
	if e.GPUs != nil && *e.GPUs > 0 {
		h.note("environment.gpus", fmt.Sprintf("%d GPU(s) asked: bench's sandbox gives no GPU; the task runs without one", *e.GPUs))
	}
	if len(e.GPUTypes) > 0 {
		h.note("environment.gpu_types", "bench's sandbox gives no GPU: ignored")
	}
	if e.AllowInternet != nil && *e.AllowInternet && !opts.Network {
		h.note("environment.allow_internet", "the task asks for internet access, but the run's permission profile gives attempts no network: attempts run offline")
	}
	if len(e.MCPServers) > 0 {
		h.note("environment.mcp_servers", fmt.Sprintf("%d MCP server(s): bench attaches the servers a run's arms declare, not a Harbor task's", len(e.MCPServers)))
	}
	if e.CPUs != nil {
		h.note("environment.cpus", fmt.Sprintf("%v asked: bench does not pin CPUs; attempts share the machine's", *e.CPUs))
	}
	if e.MemoryMB != nil || e.Memory != "" {
		h.note("environment.memory", "bench applies its sandbox's memory limit (the run's), not the task's")
	}
	if e.StorageMB != nil || e.Storage != "" {
		h.note("environment.storage", "not enforced: bench bounds file size and /tmp, not the environment's disk")
	}
	for field, u := range map[string]string{"agent.user": c.Agent.User, "verifier.user": c.Verifier.User} {
		if u != "" {
			h.note(field, fmt.Sprintf("%q: bench runs the agent's commands and the verifier as an unprivileged user of its own", u))
		}
	}
	sort.SliceStable(h.Notes, func(i, j int) bool { return h.Notes[i].Field < h.Notes[j].Field })
}

func (h *Task) note(field, msg string) { h.Notes = append(h.Notes, Note{Field: field, Msg: msg}) }

// tags makes a task's tags of its metadata: metadata.tags as they are,
// then "difficulty:X" and "category:X".
func tags(m map[string]any) []string {
	var out []string
	if l, ok := m["tags"].([]any); ok {
		for _, v := range l {
			if s, ok := v.(string); ok && s != "" {
				out = append(out, s)
			}
		}
	}
	for _, k := range []string{"difficulty", "category"} {
		if s, ok := m[k].(string); ok && s != "" {
			out = append(out, k+":"+s)
		}
	}
	return out
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Suite is a folder of Harbor tasks, loaded.
type Suite struct {
	// Suite is the bench suite of the converted tasks.
	Suite *tasks.Suite
	// Tasks are the Harbor tasks, in the suite's order.
	Tasks []*Task
}

// LoadSuite loads dir as a Harbor task folder, or as a folder of them
// (each subfolder with a task.toml). The first bad task is the error.
func LoadSuite(dir string, opts Options) (*Suite, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("load suite %s: %w", dir, err)
	}
	if _, err := os.Stat(filepath.Join(abs, ConfigFile)); err == nil {
		t, err := Load(abs, opts)
		if err != nil {
			return nil, err
		}
		return &Suite{Suite: &tasks.Suite{Name: t.Task.ID, Dir: filepath.Dir(abs), Tasks: []*tasks.Task{t.Task}}, Tasks: []*Task{t}}, nil
	}
	entries, err := os.ReadDir(abs)
	if err != nil {
		return nil, fmt.Errorf("load suite %s: %w", dir, err)
	}
	s := &Suite{Suite: &tasks.Suite{Name: filepath.Base(abs), Dir: abs}}
	for _, e := range entries { // sorted by name
		sub := filepath.Join(abs, e.Name())
		if !e.IsDir() {
			continue
		}
		if _, err := os.Stat(filepath.Join(sub, ConfigFile)); err != nil {
			continue
		}
		t, err := Load(sub, opts)
		if err != nil {
			return nil, err
		}
		s.Tasks = append(s.Tasks, t)
		s.Suite.Tasks = append(s.Suite.Tasks, t.Task)
	}
	if len(s.Tasks) == 0 {
		return nil, &tasks.FieldError{File: dir, Msg: "no Harbor task folders in it (subfolders with a task.toml, instruction.md and tests/test.sh)"}
	}
	return s, nil
}
