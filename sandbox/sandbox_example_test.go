package sandbox_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/sandbox"
)

// Setting up an attempt's command tool under the sandbox: one user for the
// whole attempt, ended before it is scored. (Not run: it needs bubblewrap.)
func ExampleNew() {
	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Required)
	if err != nil {
		log.Fatal(err) // says how to install bubblewrap, or to pass --sandbox off
	}
	attempt, _ := os.MkdirTemp("", "bench-attempt-")
	wsDir, home := filepath.Join(attempt, "workspace"), filepath.Join(attempt, "home")
	os.Mkdir(wsDir, 0o700)
	os.Mkdir(home, 0o700)
	ws, err := agent.NewWorkspace(wsDir)
	if err != nil {
		log.Fatal(err)
	}
	prof := agent.BuiltinProfiles()[agent.ProfileStandard]
	spec := sandbox.Config{Procs: 128}.Spec(prof.Network())
	spec.Home, spec.Hide, spec.User = home, []string{"/srv/suites/mine"}, sb.NewUser()
	launch := func(ctx context.Context, dir string, argv, env []string) (*exec.Cmd, error) {
		s := spec
		s.Dir = dir
		return sb.Command(ctx, s, argv, env)
	}
	tools := agent.Builtins(ws, agent.BuiltinOptions{Launch: launch})
	_ = tools // ... the agent loop runs ...
	// Before scoring: nothing the agent started may still run.
	if err := sb.KillAll(ctx, spec.User); err != nil {
		log.Fatal(err)
	}
	fmt.Println(sb.Isolation())
}
