package evaluator_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/benchhq/bench/environment"
	"github.com/benchhq/bench/evaluator"
	"github.com/benchhq/bench/internal/cputime"
	"github.com/benchhq/bench/internal/sandboxtest"
	"github.com/benchhq/bench/tasks"
)

// BenchmarkScoringByVerdict: what scoring one passing attempt costs under
// each kind of verdict, for the same task, solution and prepared
// environment. "golden" is the example task judged by its golden cases:
// one sandboxed run of the observation command, compared in bench's
// process, and no canary run. "canary" is the same task as it was judged
// before (tasks/testdata/in-process): the hidden tests in process, then, since
// they pass, the canary run. Reported per scored attempt: runs (sandboxed
// runs), cpu-ms (CPU time of the sandboxed processes: what scoring costs,
// meaningful on a loaded machine) and wall-ms (meaningful only on an idle
// one). The environments are prepared once, in the default cache
// ($BENCH_CACHE/envs or ~/.cache/bench/envs), as bench validate prepares
// them, and reused. Each attempt's solution gets a comment of its own, as
// an agent's solution differs from the reference the environment was
// warmed with: nothing of the scoring is served from Go's caches.
//
//	go test -run '^$' -bench ScoringByVerdict -benchtime 5x ./evaluator/
func BenchmarkScoringByVerdict(b *testing.B) {
	for _, tc := range []struct {
		name, dir string
		goTask    bool
	}{
		{"recipe/golden", "../tasks/suites/examples/recipe-trailing-dot", false},
		{"recipe/canary", "../tasks/testdata/in-process/recipe-trailing-dot", false},
		{"semver/golden", "../tasks/suites/examples/semver-compare", true},
		{"semver/canary", "../tasks/testdata/in-process/semver-compare", true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			if _, err := exec.LookPath("go"); tc.goTask && err != nil {
				b.Skip("no go command")
			}
			ctx := context.Background()
			task, err := tasks.Load(filepath.FromSlash(tc.dir))
			if err != nil {
				b.Fatal(err)
			}
			sb := sandboxtest.New(b)
			cache := &environment.Cache{Sandbox: sb, TempDir: b.TempDir()}
			env, err := cache.Prepare(ctx, task)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { cache.Close() })
			ref, ok, err := environment.Solution(ctx, task, b.TempDir())
			if err != nil || !ok {
				b.Fatalf("solution: %v (ok %v)", err, ok)
			}
			solved := filepath.Join(b.TempDir(), "solved")
			if err := os.Mkdir(solved, 0o755); err != nil {
				b.Fatal(err)
			}
			if err := task.CopyWorkspace(solved); err != nil {
				b.Fatal(err)
			}
			if err := ref.Apply(solved); err != nil {
				b.Fatal(err)
			}
			scorer := &evaluator.Scorer{Sandbox: sb, TempDir: b.TempDir(),
				Home: func(context.Context, *tasks.Task) (string, func(), error) { return env.ScoringView() }}
			runs := 0
			var wall time.Duration
			b.ResetTimer()
			children := cputime.Children()
			for i := range b.N {
				b.StopTimer()
				c0 := cputime.Children()
				change := distinct(b, task, solved, ref, i)
				children += cputime.Children() - c0
				b.StartTimer()
				t0 := time.Now()
				res, err := scorer.RunScored(ctx, task, change)
				if err != nil || !res.Passed {
					b.Fatalf("scoring the reference solution: %v, %+v", err, res)
				}
				wall += time.Since(t0)
				runs++
				if res.CanaryDuration > 0 {
					runs++
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(runs)/float64(b.N), "runs")
			b.ReportMetric((cputime.Children()-children).Seconds()*1000/float64(b.N), "cpu-ms")
			b.ReportMetric(float64(wall.Milliseconds())/float64(b.N), "wall-ms")
		})
	}
}

// distinct gives the reference solution's change (ref, applied in solved)
// a comment of attempt i's in every carried source file, and collects it.
func distinct(b *testing.B, task *tasks.Task, solved string, ref *evaluator.Change, i int) *evaluator.Change {
	b.Helper()
	for _, f := range ref.Carried {
		mark := map[string]string{".go": "//", ".py": "#"}[filepath.Ext(f.Path)]
		if mark == "" || f.Kind == "removed" {
			continue
		}
		p := filepath.Join(solved, filepath.FromSlash(f.Path))
		fh, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			b.Fatal(err)
		}
		_, err = fmt.Fprintf(fh, "\n%s attempt %d\n", mark, i)
		if cerr := fh.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	change, err := evaluator.CollectChange(task, solved)
	if err != nil {
		b.Fatal(err)
	}
	return change
}
