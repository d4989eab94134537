package harbor

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/benchhq/bench/image"
	"github.com/benchhq/bench/internal/flock"
	"github.com/benchhq/bench/internal/procio"
	"github.com/benchhq/bench/internal/tree"
	"github.com/benchhq/bench/sandbox"
)

// prepFormat is the version of the prepared environments' layout; part
// of every key.
const prepFormat = 1

// Runtime prepares Harbor tasks' environments and runs their attempts,
// verifiers and reference solutions, all under bubblewrap, with no
// Docker: an environment is the task's image unpacked (or its Dockerfile
// replayed on its base image), prepared once per task content and kept;
// each attempt gets a private copy of it.
type Runtime struct {
	// Sandbox runs every process.
	Sandbox *sandbox.Sandbox
	// Images pulls and unpacks images.
	Images *image.Store
	// Dir keeps prepared environments: DIR/<key>/{root/, env.json}.
	Dir string
	// Limits bound every process (the sandbox's defaults when zero).
	Limits sandbox.Limits
	// Provision, when set, runs the verifier once at preparation, with
	// the network on, in the untouched environment, so that what it
	// fetches (curl, uv, pytest) is there when it grades offline.
	Provision bool
}

// InfraError is a failure of bench's own (an image it cannot pull, a
// sandbox that cannot start): retried, never scored.
type InfraError struct{ Err error }

func (e *InfraError) Error() string { return e.Err.Error() }
func (e *InfraError) Unwrap() error { return e.Err }

// Prepared is a task's environment, prepared.
type Prepared struct {
	// Task is the task.
	Task *Task
	// Root is the master root file system: attempts run in copies.
	Root string
	// Meta describes it.
	Meta Meta
	// hold keeps it in the cache (Release).
	hold *os.File
	// ImageStale, when set, says why the image's reference could not be
	// resolved now: the environment is of the image it named when it was
	// last pulled (image.Image.Stale).
	ImageStale string
}

// Meta describes a prepared environment (env.json).
type Meta struct {
	Key     string `json:"key"`
	Task    string `json:"task"`
	TaskDir string `json:"task_dir"`
	// Image is the reference pulled, ImageID its config digest.
	Image   string `json:"image"`
	ImageID string `json:"image_id"`
	// Workdir is the agent's working folder, and Env the environment
	// (the image's, then the Dockerfile's ENV), as replayed.
	Workdir string   `json:"workdir"`
	Env     []string `json:"env"`
	// Steps are the Dockerfile's replayed steps.
	Steps []StepLog `json:"steps,omitempty"`
	// Provision is the verifier's run at preparation (nil when not run).
	Provision *StepLog `json:"provision,omitempty"`
	// Untouched is what that run scored on the untouched environment.
	Untouched *Verdict `json:"untouched,omitempty"`
	// ImageTook is how long pulling and unpacking the image took (0 when
	// the image store had it); Took how long the whole preparation took.
	ImageTook  time.Duration `json:"image_took_ns"`
	Took       time.Duration `json:"took_ns"`
	PreparedAt time.Time     `json:"prepared_at"`
}

// StepLog is one step run at preparation.
type StepLog struct {
	Line   int           `json:"line,omitempty"`
	Op     string        `json:"op"`
	Exit   int           `json:"exit"`
	Took   time.Duration `json:"took_ns"`
	Output string        `json:"output,omitempty"`
}

const (
	preparedRoot = "root"
	preparedMeta = "env.json"
	// homeInRoot is the folder of the root shown as HOME: Harbor's
	// agents and verifiers run as root, whose HOME is /root.
	homeInRoot = "root"
	// maxStepOutput bounds what is kept of a step's output.
	maxStepOutput = 8 << 10
)

// Prepare returns the task's prepared environment, preparing it when the
// cache has none for the task's content and image. The environment is
// held (Clear leaves it alone) until Release.
func (r *Runtime) Prepare(ctx context.Context, t *Task) (*Prepared, error) {
	for range 3 {
		p, err := r.prepareOnce(ctx, t)
		if err != nil {
			return nil, err
		}
		hold, err := flock.Lock(ctx, filepath.Join(r.Dir, p.Meta.Key+".lock"), flock.Shared)
		if err != nil {
			return nil, &InfraError{Err: fmt.Errorf("task %s: %w", t.Task.ID, err)}
		}
		if _, err := r.load(t, p.Meta.Key); err == nil {
			p.hold = hold
			return p, nil
		}
		hold.Close() // cleared between its preparation and now: again
	}
	return nil, &InfraError{Err: fmt.Errorf("task %s: its environment was removed from %s as fast as it was prepared (bench cache clear running meanwhile?)", t.Task.ID, r.Dir)}
}

// Release lets Clear remove the environment again.
func (p *Prepared) Release() {
	if p.hold != nil {
		p.hold.Close()
		p.hold = nil
	}
}

// prepareOnce is Prepare without the hold.
func (r *Runtime) prepareOnce(ctx context.Context, t *Task) (*Prepared, error) {
	start := time.Now()
	ref := t.Image
	if ref == "" {
		ref = t.Dockerfile.From
	}
	im, err := r.Images.Get(ctx, ref)
	if err != nil {
		return nil, &InfraError{Err: fmt.Errorf("task %s: %w", t.Task.ID, err)}
	}
	h := sha256.New()
	fmt.Fprintf(h, "%d\x00%s\x00%s\x00%v", prepFormat, im.ID, t.Task.Hash, r.Provision)
	key := t.Task.ID + "-" + hex.EncodeToString(h.Sum(nil))[:16]
	if err := os.MkdirAll(r.Dir, 0o700); err != nil {
		return nil, &InfraError{Err: fmt.Errorf("task %s: environments %s: %w", t.Task.ID, r.Dir, err)}
	}
	if p, err := r.load(t, key); err == nil {
		p.ImageStale = im.Stale
		return p, nil
	}
	lk, err := flock.Lock(ctx, filepath.Join(r.Dir, key+".lock"), flock.Exclusive)
	if err != nil {
		return nil, &InfraError{Err: fmt.Errorf("task %s: %w", t.Task.ID, err)}
	}
	defer lk.Close()
	if p, err := r.load(t, key); err == nil {
		return p, nil
	}
	tmp, err := os.MkdirTemp(r.Dir, ".tmp-"+key+"-")
	if err != nil {
		return nil, &InfraError{Err: fmt.Errorf("task %s: %w", t.Task.ID, err)}
	}
	defer os.RemoveAll(tmp) //nolint:errcheck // gone once renamed
	root := filepath.Join(tmp, preparedRoot)
	release, err := r.Images.Hold(ctx, im)
	if err != nil {
		return nil, &InfraError{Err: fmt.Errorf("task %s: %w", t.Task.ID, err)}
	}
	err = image.Copy(im.Root, root)
	release()
	if err != nil {
		return nil, &InfraError{Err: fmt.Errorf("task %s: %w", t.Task.ID, err)}
	}
	meta := Meta{Key: key, Task: t.Task.ID, TaskDir: t.Task.Dir, Image: ref, ImageID: im.ID}
	if time.Since(im.UnpackedAt) < time.Since(start) {
		meta.ImageTook = im.Took
	}
	env := newEnv(im.Env)
	workdir := im.WorkingDir
	if workdir == "" {
		workdir = "/"
	}
	if t.Dockerfile != nil && t.Image == "" {
		rp := &replay{r: r, t: t, root: root, env: env, workdir: workdir, user: r.Sandbox.NewUser()}
		steps, err := rp.run(ctx)
		meta.Steps = steps
		if err != nil {
			return nil, err
		}
		workdir = rp.workdir
	}
	if t.Workdir != "" {
		workdir = path.Clean(Expand(t.Workdir, env.vals))
	}
	if err := mkdirIn(root, workdir); err != nil {
		return nil, fmt.Errorf("task %s: working folder %s: %w", t.Task.ID, workdir, err)
	}
	if err := os.MkdirAll(filepath.Join(root, homeInRoot), 0o700); err != nil {
		return nil, fmt.Errorf("task %s: HOME: %w", t.Task.ID, err)
	}
	meta.Workdir, meta.Env = workdir, env.list(nil)
	p := &Prepared{Task: t, Root: root, Meta: meta}
	if r.Provision {
		log, v, err := r.verify(ctx, p, root, true)
		if err != nil {
			return nil, err
		}
		p.Meta.Provision, p.Meta.Untouched = &log, &v
	}
	p.Meta.Took = time.Since(start)
	p.Meta.PreparedAt = time.Now().UTC()
	b, err := json.MarshalIndent(p.Meta, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(tmp, preparedMeta), b, 0o644); err != nil {
		return nil, &InfraError{Err: fmt.Errorf("task %s: %w", t.Task.ID, err)}
	}
	final := filepath.Join(r.Dir, key)
	if err := os.RemoveAll(final); err != nil {
		return nil, &InfraError{Err: fmt.Errorf("task %s: %w", t.Task.ID, err)}
	}
	if err := os.Rename(tmp, final); err != nil {
		return nil, &InfraError{Err: fmt.Errorf("task %s: %w", t.Task.ID, err)}
	}
	p.Root = filepath.Join(final, preparedRoot)
	return p, nil
}

// load reads a prepared environment of the cache.
func (r *Runtime) load(t *Task, key string) (*Prepared, error) {
	dir := filepath.Join(r.Dir, key)
	b, err := os.ReadFile(filepath.Join(dir, preparedMeta))
	if err != nil {
		return nil, err
	}
	var m Meta
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	root := filepath.Join(dir, preparedRoot)
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return nil, fs.ErrNotExist
	}
	return &Prepared{Task: t, Root: root, Meta: m}, nil
}

// run runs argv under spec and returns its exit status (-1 when killed)
// and the end of its output; an error only when it could not start.
func (r *Runtime) run(ctx context.Context, spec sandbox.Spec, argv, env []string) (int, string, error) {
	cmd, err := r.Sandbox.Command(ctx, spec, argv, env)
	if err != nil {
		return -1, "", err
	}
	out := procio.New(maxStepOutput, maxStepOutput/4)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return -1, "", fmt.Errorf("start %s in the sandbox: %w", argv[0], err)
	}
	err = cmd.Wait()
	code := cmd.ProcessState.ExitCode()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) && code == 0 {
		code = -1
	}
	return code, out.String(), nil
}

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// List returns the prepared environments kept in dir (a Runtime's Dir),
// by task then age; none when there is no such folder.
func List(dir string) ([]Meta, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list Harbor environments in %s: %w", dir, err)
	}
	var out []Meta
	for _, e := range ents {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".tmp-") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name(), preparedMeta))
		if err != nil {
			continue
		}
		var m Meta
		if json.Unmarshal(b, &m) == nil {
			out = append(out, m)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Task != out[j].Task {
			return out[i].Task < out[j].Task
		}
		return out[i].PreparedAt.Before(out[j].PreparedAt)
	})
	return out, nil
}

// Cleared is what Clear did.
type Cleared struct {
	// Removed counts the environments removed.
	Removed int
	// InUse are those left alone: a bench process holds or prepares them.
	InUse []Meta
}

// Clear removes the prepared environments kept in dir that remove says to
// (nil: all), but those a bench process holds or prepares.
func Clear(dir string, remove func(Meta) bool) (Cleared, error) {
	var out Cleared
	list, err := List(dir)
	if err != nil {
		return out, err
	}
	for _, m := range list {
		if remove != nil && !remove(m) {
			continue
		}
		f, err := flock.TryLock(filepath.Join(dir, m.Key+".lock"))
		if err != nil {
			return out, fmt.Errorf("remove %s: %w", filepath.Join(dir, m.Key), err)
		}
		if f == nil {
			out.InUse = append(out.InUse, m)
			continue
		}
		err = tree.Remove(filepath.Join(dir, m.Key))
		f.Close()
		if err != nil {
			return out, fmt.Errorf("remove %s: %w", filepath.Join(dir, m.Key), err)
		}
		out.Removed++
	}
	return out, nil
}
