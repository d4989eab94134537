package runner

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/endpoint"
	"github.com/benchhq/bench/evaluator"
	"github.com/benchhq/bench/sandbox"
	"github.com/benchhq/bench/tasks"
)

// RunFile is the TOML file that describes a run too long for flags. Every
// field has a flag of the same meaning; a flag given on the command line
// wins over the file.
type RunFile struct {
	// Path is where the file was read from; relative paths inside it are
	// relative to its folder.
	Path string `toml:"-"`

	Name           string           `toml:"name"`
	Model          string           `toml:"model"`
	Suite          string           `toml:"suite"`
	Tasks          []string         `toml:"tasks"`
	Attempts       int              `toml:"attempts"`
	Concurrency    int              `toml:"concurrency"`
	Seed           *int64           `toml:"seed"`
	DB             string           `toml:"db"`
	System         string           `toml:"system"`
	KeepWorkspaces bool             `toml:"keep_workspaces"`
	MaxTries       int              `toml:"max_tries"`
	Advantage      evaluator.Method `toml:"advantage"`
	RequestTimeout tasks.Duration   `toml:"request_timeout"`
	Options        map[string]any   `toml:"options"`
	Limits         tasks.Limits     `toml:"limits"`
	Servers        []tasks.Server   `toml:"servers"`
	Arms           []Arm            `toml:"arms"`
	// Profiles are permission profiles arms may name (see docs/permissions.md).
	Profiles map[string]any `toml:"profiles"`
	// ParsedProfiles is Profiles as LoadRunFile parsed them
	// (agent.ParseProfiles), the built-in profiles included.
	ParsedProfiles agent.Profiles `toml:"-"`
	// Sandbox configures the isolation of commands.
	Sandbox sandbox.Config `toml:"sandbox"`
	// API is the protocol of the model servers: "ollama" (default) or
	// "openai"; Endpoints are the servers, each with its slots; with
	// AllowMixedModels a run starts even when they serve different
	// weights under the model's name (docs/scale.md).
	API              string          `toml:"api"`
	Endpoints        []endpoint.Spec `toml:"endpoints"`
	AllowMixedModels bool            `toml:"allow_mixed_models"`
}

// LoadRunFile reads and checks a run file. Errors name the file and field.
func LoadRunFile(path string) (*RunFile, error) {
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, &tasks.FieldError{File: path, Msg: "no such run file"}
	case err != nil && isDir(path):
		return nil, &tasks.FieldError{File: path, Msg: "a folder, expected a run file (TOML)"}
	case err != nil:
		return nil, fmt.Errorf("read run file: %w", err)
	}
	var rf RunFile
	md, err := toml.Decode(string(data), &rf)
	if err != nil {
		return nil, tasks.DecodeError(path, string(data), err)
	}
	// options is a free map passed to Ollama (checked by agent.CheckOptions),
	// and profiles is checked by agent.ParseProfiles: UnknownField lets
	// anything under a free map pass.
	for _, key := range md.Undecoded() {
		if err := tasks.UnknownField(path, string(data), &rf, key); err != nil {
			return nil, err
		}
	}
	if err := tasks.MapFieldError(path, string(data), &rf); err != nil {
		return nil, err
	}
	rf.Path = path
	if err := tasks.ValidateServers(path, "servers", rf.Servers); err != nil {
		return nil, err
	}
	for i, a := range rf.Arms {
		if a.Name == "" {
			return nil, &tasks.FieldError{File: path, Field: fmt.Sprintf("arms[%d].name", i), Msg: "missing: every arm needs a name"}
		}
		if err := tasks.ValidateServers(path, fmt.Sprintf("arms[%d].servers", i), a.Servers); err != nil {
			return nil, err
		}
	}
	if rf.ParsedProfiles, err = agent.ParseProfiles(path, rf.Profiles); err != nil {
		return nil, err
	}
	if err := rf.Check(func(field string) bool { return md.IsDefined(strings.Split(field, ".")...) }); err != nil {
		return nil, err
	}
	if _, err := endpoint.ParseAPI(rf.API); err != nil {
		return nil, &tasks.FieldError{File: path, Field: "api", Msg: "expected \"ollama\" or \"openai\""}
	}
	for i, e := range rf.Endpoints {
		if e.URL == "" {
			return nil, &tasks.FieldError{File: path, Field: fmt.Sprintf("endpoints[%d].url", i), Msg: "missing: every endpoint needs its URL"}
		}
		if e.Slots < 0 {
			return nil, &tasks.FieldError{File: path, Field: fmt.Sprintf("endpoints[%d].slots", i), Msg: fmt.Sprintf("expected 0 (no bound) or more, got %d", e.Slots)}
		}
	}
	return &rf, nil
}

// Resolve returns a path of the file relative to the file's folder.
func (rf *RunFile) Resolve(p string) string {
	if p == "" || filepath.IsAbs(p) || rf.Path == "" {
		return p
	}
	return filepath.Join(filepath.Dir(rf.Path), p)
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}
