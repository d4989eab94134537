package environment

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/benchhq/bench/evaluator"
	"github.com/benchhq/bench/tasks"
)

// goBasePackages are the standard-library packages a Go task's tests
// commonly import: the Go base environment builds them, the testing
// package with them, once per toolchain, and every Go task's environment
// starts from it, so that a suite's Go tasks do not each build them again.
var goBasePackages = []string{
	"bufio", "bytes", "cmp", "context", "encoding/json", "errors", "fmt", "io", "io/fs", "maps", "math",
	"os", "path/filepath", "reflect", "regexp", "slices", "sort", "strconv", "strings", "sync", "testing",
	"time", "unicode", "unicode/utf8",
}

// goBase returns the home layer of the Go base environment, preparing it
// when the cache lacks it: nothing of any task is in it.
func (c *Cache) goBase(ctx context.Context) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "go-base %d\x00toolchain %s\x00root %v\x00isolated %v\x00%s", Format, c.Toolchain(ctx), os.Geteuid() == 0,
		c.Sandbox != nil && c.Sandbox.Isolated(), strings.Join(goBasePackages, " "))
	key := "go-base-" + hex.EncodeToString(h.Sum(nil))[:16]
	e, err := c.obtain(ctx, key, func(tmp string) (*Meta, error) { return c.buildGoBase(ctx, tmp) })
	if err != nil {
		return "", fmt.Errorf("prepare the Go base environment: %w", err)
	}
	return filepath.Join(e.Dir, HomeLayer), nil
}

// buildGoBase builds goBasePackages for a test, in the sandbox, into an
// empty HOME: the home layer of the base.
func (c *Cache) buildGoBase(ctx context.Context, tmp string) (*Meta, error) {
	meta := &Meta{Task: "(Go standard library)", Toolchain: c.Toolchain(ctx)}
	work, home := filepath.Join(tmp, "work"), filepath.Join(tmp, HomeLayer)
	for _, d := range []string{work, home} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return nil, err
		}
	}
	var src strings.Builder
	src.WriteString("package base\n\nimport (\n")
	for _, p := range goBasePackages {
		fmt.Fprintf(&src, "\t_ %q\n", p)
	}
	src.WriteString(")\n")
	for name, body := range map[string]string{"go.mod": "module benchbase\n\ngo 1.21\n", "base_test.go": src.String()} {
		if err := os.WriteFile(filepath.Join(work, name), []byte(body), 0o644); err != nil {
			return nil, err
		}
	}
	user := c.Sandbox.NewUser()
	defer c.Sandbox.KillAll(context.WithoutCancel(ctx), user) //nolint:errcheck // the step waited for its processes
	spec := c.Spec
	spec.Dir, spec.Home, spec.User, spec.Network = work, home, user, false
	env := evaluator.TestEnv(&tasks.Task{}, spec, work)
	st, err := c.step(ctx, "build the standard library for tests", "go test -count=1 ./...", spec, env, tasks.DefaultSetupTimeout)
	if err != nil {
		return nil, err
	}
	meta.Steps = append(meta.Steps, st)
	if st.ExitCode != 0 {
		return nil, fmt.Errorf("go test of the standard-library base failed (exit %d):\n%s", st.ExitCode, st.Output)
	}
	return meta, os.RemoveAll(work)
}
