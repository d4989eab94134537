// Package harbor reads task folders in the Harbor format (Terminal-Bench
// 2.x, TermiGen and Harbor's adapters of other suites) and turns them into
// bench tasks:
//
//	task.toml              [metadata], [verifier], [agent], [environment], [solution]
//	instruction.md         what the agent is asked
//	environment/Dockerfile the environment (or [environment] docker_image)
//	tests/test.sh          the verifier: copied to /tests after the agent stops;
//	                       writes /logs/verifier/reward.txt or reward.json
//	solution/solve.sh      the reference solution
//
// Whatever of a task.toml bench cannot honour (a field it does not know, a
// GPU, internet access under a profile without network, a CPU count) is
// reported per task as a Note when the task loads, never dropped silently.
// The format is documented in docs/harbor.md.
package harbor

import (
	"fmt"
	"math"
	"time"
)

// config is the on-disk shape of a Harbor task.toml: the fields Harbor's
// TaskConfig documents. Keys outside it are reported as notes.
type config struct {
	Version       string         `toml:"version"`
	SchemaVersion string         `toml:"schema_version"`
	Source        string         `toml:"source"`
	Metadata      map[string]any `toml:"metadata"`
	Verifier      verifierConfig `toml:"verifier"`
	Agent         agentConfig    `toml:"agent"`
	Environment   envConfig      `toml:"environment"`
	Solution      solutionConfig `toml:"solution"`
}

type verifierConfig struct {
	TimeoutSec *float64          `toml:"timeout_sec"`
	Env        map[string]string `toml:"env"`
	User       string            `toml:"user"`
}

type agentConfig struct {
	TimeoutSec *float64 `toml:"timeout_sec"`
	User       string   `toml:"user"`
}

type envConfig struct {
	BuildTimeoutSec *float64 `toml:"build_timeout_sec"`
	DockerImage     string   `toml:"docker_image"`
	CPUs            *float64 `toml:"cpus"`
	// Memory and Storage are the older spellings ("2G"); MemoryMB and
	// StorageMB the current ones.
	Memory        string   `toml:"memory"`
	MemoryMB      *int64   `toml:"memory_mb"`
	Storage       string   `toml:"storage"`
	StorageMB     *int64   `toml:"storage_mb"`
	GPUs          *int64   `toml:"gpus"`
	GPUTypes      []string `toml:"gpu_types"`
	AllowInternet *bool    `toml:"allow_internet"`
	Workdir       string   `toml:"workdir"`
	// MCPServers are MCP servers the task offers its agent.
	MCPServers []map[string]any `toml:"mcp_servers"`
}

type solutionConfig struct {
	Env map[string]string `toml:"env"`
}

// seconds turns a *_sec field into a duration: nil is 0 (bench's
// default); a negative, infinite or NaN value is refused.
func seconds(field string, v *float64) (time.Duration, error) {
	if v == nil {
		return 0, nil
	}
	s := *v
	if math.IsNaN(s) || math.IsInf(s, 0) || s < 0 {
		return 0, fmt.Errorf("field %s: expected a number of seconds, 0 or more, got %v", field, s)
	}
	if s > float64(math.MaxInt64/int64(time.Second)) {
		return 0, fmt.Errorf("field %s: %v seconds is too long", field, s)
	}
	return time.Duration(s * float64(time.Second)), nil
}
