package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/benchhq/bench/environment"
	"github.com/benchhq/bench/harbor"
	"github.com/benchhq/bench/image"
	"github.com/benchhq/bench/results"
	"github.com/benchhq/bench/runner"
	"github.com/benchhq/bench/sandbox"
	"github.com/benchhq/bench/tasks"
)

// The task formats a suite may be written in (--format).
const (
	formatAuto   = "auto"
	formatBench  = "bench"
	formatHarbor = "harbor"
)

// harborFlags are the flags of Harbor task folders: their format and
// where their images come from.
type harborFlags struct {
	format   *string
	mirror   *string
	layout   *string
	archive  *string
	insecure *bool
}

func addHarborFlags(fs *flag.FlagSet) *harborFlags {
	return &harborFlags{
		format:   fs.String("format", formatAuto, "the suite's task `format`: auto (detected by its files), bench, or harbor, for Harbor and Terminal-Bench folders of task.toml, instruction.md and tests/test.sh"),
		mirror:   fs.String("image-mirror", "", "a registry (`host[:port]`) to pull every Harbor task's image from instead of its own"),
		layout:   fs.String("image-layout", "", "an OCI image layout `folder` to take Harbor tasks' images from instead of a registry"),
		archive:  fs.String("image-archive", "", "a `docker save` tarball to take Harbor tasks' images from instead of a registry"),
		insecure: fs.Bool("insecure-registry", false, "allow plain HTTP to the image registry (a local mirror)"),
	}
}

// isHarbor says whether the suite in dir is to be read as Harbor's.
func (h *harborFlags) isHarbor(dir string) (bool, error) {
	switch *h.format {
	case formatHarbor:
		return true, nil
	case formatBench:
		return false, nil
	case formatAuto:
		return harbor.DetectSuite(dir), nil
	}
	return false, usagef("--format: expected auto, bench or harbor, got %q", *h.format)
}

// runtime makes the runtime of Harbor tasks: unpacked images and
// prepared Harbor environments kept beside bench's own environments (in
// the folder above them: bench cache clear removes what it does not know
// in its own).
func (h *harborFlags) runtime(sb *sandbox.Sandbox, envDir string) *harbor.Runtime {
	if envDir == "" {
		envDir = environment.DefaultDir()
	}
	base := filepath.Dir(filepath.Clean(envDir))
	src := image.Source{Mirror: *h.mirror, Layout: *h.layout, Archive: *h.archive, Insecure: *h.insecure}
	return &harbor.Runtime{
		Sandbox:   sb,
		Images:    &image.Store{Dir: filepath.Join(base, "images"), Source: src},
		Dir:       filepath.Join(base, "harbor-envs"),
		Provision: true,
	}
}

// printNotes reports, per task, what bench cannot honour of it.
func printNotes(w io.Writer, s *harbor.Suite) {
	for _, t := range s.Tasks {
		for _, n := range t.Notes {
			fmt.Fprintf(w, "task %s: %s\n", t.Task.ID, n)
		}
	}
}

// validateHarbor is bench validate for a suite of Harbor tasks: each
// environment prepared, the verifier run on the untouched environment
// (it must fail) and after solution/solve.sh (it must pass).
func validateHarbor(ctx context.Context, dir string, h *harborFlags, mode, envDir string, jobs int, verbose bool, stdout, stderr io.Writer) error {
	sb, err := sandboxFor(ctx, mode)
	if err != nil {
		return err
	}
	if !sb.Isolated() {
		return usagef("validate: Harbor tasks run in their image's root file system, which needs bubblewrap: --sandbox off cannot run them")
	}
	suite, err := harbor.LoadSuite(dir, harbor.Options{})
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "sandbox: %s\n", sb)
	printNotes(stderr, suite)
	rt := h.runtime(sb, envDir)
	vals := make([]*harbor.Validation, len(suite.Tasks))
	took := make([]time.Duration, len(suite.Tasks))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(jobs)
	start := time.Now()
	for i, t := range suite.Tasks {
		g.Go(func() error {
			t0 := time.Now()
			v, err := rt.Validate(gctx, t, "")
			if err != nil {
				return err
			}
			vals[i], took[i] = v, time.Since(t0)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TASK\tUNTOUCHED\tSOLUTION\tTESTS\tVERDICT")
	bad := 0
	for i, v := range vals {
		verdict := "ok"
		if !v.OK() {
			bad++
			verdict = "INVALID: " + strings.Join(v.Problems, "; ")
		}
		tests := "reward file only"
		if n := len(v.Solved.Cases); n > 0 {
			tests = fmt.Sprintf("%d in ctrf.json", n)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s (%s)\n", v.Task, rewardText(v.Untouched), rewardText(v.Solved), tests, verdict, took[i].Round(100*time.Millisecond))
	}
	tw.Flush()
	fmt.Fprintf(stdout, "%s, %d valid, %d invalid (%s)\n", count(len(vals), "task"), len(vals)-bad, bad, time.Since(start).Round(time.Millisecond))
	if verbose {
		for _, v := range vals {
			if v.OK() {
				continue
			}
			fmt.Fprintf(stdout, "\n== %s ==\n-- solve.sh --\n%s\n-- verifier after solve.sh --\n%s\n", v.Task, v.Solve.Output, v.Verifier.Output)
		}
	}
	if bad > 0 {
		return errSilent
	}
	return nil
}

// rewardText shows a Harbor verdict: the reward as written, pass or fail
// at bench's threshold, or why there is none.
func rewardText(v harbor.Verdict) string {
	if v.Reason != "" {
		return "0 (" + v.Reason + ")"
	}
	return fmt.Sprintf("%s %v", passFail(v.Passed), v.Value)
}

// loadSuite loads the suite of bench run: bench's own format, or
// Harbor's (f.harborSuite is then set).
func (f *runFlags) loadSuite(dir string) (*tasks.Suite, error) {
	if f.harbor == nil {
		return tasks.LoadSuite(dir)
	}
	isHarbor, err := f.harbor.isHarbor(dir)
	if err != nil {
		return nil, err
	}
	if !isHarbor {
		return tasks.LoadSuite(dir)
	}
	hs, err := harbor.LoadSuite(dir, harbor.Options{})
	if err != nil {
		return nil, err
	}
	f.harborSuite = hs
	return hs.Suite, nil
}

// rooted is the runner's Rooted of a Harbor suite (nil for bench's own),
// its notes printed.
func (f *runFlags) rooted(sb *sandbox.Sandbox, plan *runner.Plan, stderr io.Writer) (runner.Rooted, error) {
	if f.harborSuite == nil {
		return nil, nil
	}
	if !sb.Isolated() {
		return nil, usagef("run: Harbor tasks run in their image's root file system, which needs bubblewrap: --sandbox off cannot run them")
	}
	// Internet access asked for is noted only when an arm's profile
	// gives attempts no network.
	offline := false
	for _, arm := range plan.Arms {
		if prof, err := plan.Profiles.Lookup(arm.Profile); err == nil && !prof.Network() {
			offline = true
		}
	}
	for _, t := range f.harborSuite.Tasks {
		for _, n := range t.Notes {
			if n.Field != "environment.allow_internet" || offline {
				fmt.Fprintf(stderr, "task %s: %s\n", t.Task.ID, n)
			}
		}
	}
	return harborRooted{harbor.NewTasks(f.harbor.runtime(sb, f.envDir), f.harborSuite)}, nil
}

// harborRooted adapts harbor.Tasks to runner.Rooted.
type harborRooted struct{ *harbor.Tasks }

func (h harborRooted) Attempt(ctx context.Context, t *tasks.Task, tmpDir string) (runner.RootedAttempt, error) {
	a, err := h.Tasks.Attempt(ctx, t, tmpDir)
	if err != nil {
		return nil, err
	}
	return a, nil
}

// planFromRun is runner.PlanFromRun for bench run --resume: a task folder
// in Harbor's format is loaded as such (f.harborSuite is then set).
func (f *runFlags) planFromRun(stored *results.Run) (*runner.Plan, error) {
	hs := &harbor.Suite{Suite: &tasks.Suite{Name: stored.Suite, Dir: stored.SuiteDir}}
	load := func(dir string) (*tasks.Task, error) {
		if f.harbor == nil || *f.harbor.format == formatBench || (*f.harbor.format == formatAuto && !harbor.Detect(dir)) {
			return tasks.Load(dir)
		}
		t, err := harbor.Load(dir, harbor.Options{})
		if err != nil {
			return nil, err
		}
		hs.Tasks = append(hs.Tasks, t)
		hs.Suite.Tasks = append(hs.Suite.Tasks, t.Task)
		return t.Task, nil
	}
	plan, err := runner.PlanFromRunLoading(stored, load)
	if err != nil {
		return nil, err
	}
	if len(hs.Tasks) > 0 {
		f.harborSuite = hs
	}
	return plan, nil
}

// listHarborCache prints the unpacked images and prepared Harbor
// environments kept beside the environments' folder dir, when there are.
func listHarborCache(w io.Writer, dir string) error {
	base := filepath.Dir(filepath.Clean(dir))
	imgDir, envDir := filepath.Join(base, "images"), filepath.Join(base, "harbor-envs")
	images, err := image.List(imgDir)
	if err != nil {
		return err
	}
	envs, err := harbor.List(envDir)
	if err != nil {
		return err
	}
	if len(images) > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "\nIMAGE\tID\tSIZE\tFILES\tUNPACKED\tTOOK")
		var total int64
		for _, im := range images {
			total += im.Stats.Bytes
			fmt.Fprintf(tw, "%s\t%.19s\t%s\t%d\t%s\t%s\n", im.Ref, im.ID, environment.SizeText(im.Stats.Bytes), im.Stats.Files,
				im.UnpackedAt.Local().Format("2006-01-02 15:04"), im.Took.Round(100*time.Millisecond))
		}
		tw.Flush()
		fmt.Fprintf(w, "%s, %s of files in %s\n", count(len(images), "image"), environment.SizeText(total), imgDir)
	}
	if len(envs) > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "\nHARBOR TASK\tIMAGE\tSTEPS\tPREPARED\tTOOK\tUNTOUCHED")
		for _, m := range envs {
			unt := "-"
			if m.Untouched != nil {
				unt = rewardText(*m.Untouched)
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", m.Task, m.Image, len(m.Steps), m.PreparedAt.Local().Format("2006-01-02 15:04"),
				m.Took.Round(100*time.Millisecond), unt)
		}
		tw.Flush()
		fmt.Fprintf(w, "%s in %s\n", count(len(envs), "Harbor environment"), envDir)
	}
	return nil
}

// clearHarborCache removes the Harbor environments kept beside the
// environments' folder dir (task's only, when task is set) and, for a
// whole clear, the unpacked images; those a running bench holds stay.
func clearHarborCache(w io.Writer, dir, task string) error {
	base := filepath.Dir(filepath.Clean(dir))
	imgDir, envDir := filepath.Join(base, "images"), filepath.Join(base, "harbor-envs")
	var keep func(harbor.Meta) bool
	if task != "" {
		keep = func(m harbor.Meta) bool { return m.Task == task }
	}
	c, err := harbor.Clear(envDir, keep)
	if err != nil {
		return err
	}
	if c.Removed > 0 || len(c.InUse) > 0 {
		fmt.Fprintf(w, "removed %s from %s\n", count(c.Removed, "Harbor environment"), envDir)
	}
	if len(c.InUse) > 0 {
		var ids []string
		for _, m := range c.InUse {
			ids = append(ids, m.Task)
		}
		fmt.Fprintf(w, "left %s in use by a running bench: %s\n", count(len(c.InUse), "Harbor environment"), strings.Join(ids, ", "))
	}
	if task != "" {
		return nil
	}
	ic, err := image.Clear(imgDir)
	if err != nil {
		return err
	}
	if ic.Removed > 0 || len(ic.InUse) > 0 {
		fmt.Fprintf(w, "removed %s (%s) from %s\n", count(ic.Removed, "image"), environment.SizeText(ic.Freed), imgDir)
	}
	if len(ic.InUse) > 0 {
		fmt.Fprintf(w, "left %s in use by a running bench\n", count(len(ic.InUse), "image"))
	}
	return nil
}
