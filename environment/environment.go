// Package environment prepares each task's environment once, in the
// sandbox, and shows it to every attempt and every scoring run through a
// private view, so that a test does not pay for a cold tool cache (a Go
// test rebuilding the standard library) and a cold cache never turns into
// a reward of 0.
//
// An environment is a HOME folder: the tool caches the task's tests need
// (Go's build and module caches, whatever the task's [environment] setup
// step leaves there). It has two layers, each a folder kept in the cache:
//
//	home/     after the set-up step and a build of the untouched
//	          workspace's own tests: what every attempt sees
//	scoring/  home/ plus what the hidden tests add when they run on the
//	          reference solution: what scoring runs see, never an attempt
//
// Neither holds the hidden tests' or the solution's files; scoring/ holds
// what building them left in the caches, which only scoring runs (after
// the agent has stopped) can see. Environments are kept between runs,
// keyed by the task's hash, the set-up step and the toolchain.
//
// A view is a folder of hard links to the layer's files (when bench runs
// as root: the files belong to root and are read-only, so the sandbox user
// of a view can add and remove files in it but never change the master's)
// or, otherwise, a copy. What one attempt writes never reaches another
// attempt, a scoring run or the master.
package environment

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/benchhq/bench/evaluator"
	"github.com/benchhq/bench/internal/tree"
	"github.com/benchhq/bench/sandbox"
	"github.com/benchhq/bench/tasks"
)

// Format is the version of the environments' layout; part of every key.
const Format = 1

// The layers of an environment, and its description.
const (
	HomeLayer    = "home"
	ScoringLayer = "scoring"
	metaFile     = "env.json"
)

// Meta describes a prepared environment (env.json in its folder).
type Meta struct {
	Key       string `json:"key"`
	Task      string `json:"task"`
	TaskDir   string `json:"task_dir"`
	TaskHash  string `json:"task_hash"`
	Toolchain string `json:"toolchain"`
	Setup     string `json:"setup,omitempty"`
	// Steps are the warming steps run, with their outcome.
	Steps      []Step    `json:"steps"`
	PreparedAt time.Time `json:"prepared_at"`
	// Took is how long preparing took.
	Took time.Duration `json:"took_ns"`
	// RefTest is how long the hidden tests took on the reference solution
	// in the prepared environment (0 when the task has no solve.sh);
	// RefPassed whether they passed there.
	RefTest   time.Duration `json:"ref_test_ns"`
	RefPassed bool          `json:"ref_passed"`
	// Bytes and Files are the size of both layers on disk (a file linked
	// in both counted once).
	Bytes int64 `json:"bytes"`
	Files int   `json:"files"`
}

// Step is one command run while preparing.
type Step struct {
	Name     string        `json:"name"`
	Command  string        `json:"command"`
	ExitCode int           `json:"exit_code"`
	Took     time.Duration `json:"took_ns"`
	// Output is the end of what it printed, when it failed.
	Output string `json:"output,omitempty"`
}

// Env is a prepared environment.
type Env struct {
	Meta Meta
	// Dir holds its layers.
	Dir string
	// Fresh is true when this Cache prepared it (false: read from the cache).
	Fresh bool
	// views is where its views are made ("": beside it, in .views).
	views string
}

// Cache prepares environments and keeps them in a folder. It is safe for
// concurrent use, and several bench processes may share one folder.
type Cache struct {
	// Dir is the cache folder (DefaultDir when empty).
	Dir string
	// Sandbox runs the set-up and warming steps.
	Sandbox *sandbox.Sandbox
	// Spec gives the limits, read-only and hidden paths of those steps.
	Spec sandbox.Spec
	// TempDir is where scratch folders are made ("" for the system's).
	TempDir string
	// ViewsDir is where views are made ("": the cache folder's .views, on
	// its file system, so that views can be hard links). Without
	// isolation, views must be reachable on the host by the sandbox user:
	// a folder of the run's, rather than a way opened through the folders
	// above the cache (the operator's home).
	ViewsDir string

	mu        sync.Mutex
	ready     map[string]*Env        // by task folder
	preparing map[string]*sync.Mutex // by key: one preparation at a time
	held      map[string]*os.File    // shared locks, by key: in use
	toolchain string
}

// Close lets go of the environments Prepare returned: until then they
// are in use, and Clear (bench cache clear, in any process) leaves them
// alone.
func (c *Cache) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, f := range c.held {
		if f != nil {
			f.Close() // closing releases the lock
		}
		delete(c.held, k)
	}
	c.ready = nil
}

// DefaultDir is where environments are kept: $BENCH_CACHE, or bench/envs
// in the user's cache folder (~/.cache/bench/envs).
func DefaultDir() string {
	if d := os.Getenv("BENCH_CACHE"); d != "" {
		return filepath.Join(d, "envs")
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "bench", "envs")
	}
	return filepath.Join(os.TempDir(), "bench-envs")
}

func (c *Cache) dir() string {
	if c.Dir == "" {
		return DefaultDir()
	}
	return c.Dir
}

// Toolchain describes the tools whose caches an environment holds (go,
// python3), as they answer on the system PATH of the sandbox: part of
// every key, so that a new toolchain gets new environments.
func (c *Cache) Toolchain(ctx context.Context) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.toolchain != "" {
		return c.toolchain
	}
	path := evaluator.SystemPath(c.Spec)
	var parts []string
	for _, probe := range [][]string{{"go", "env", "GOVERSION", "GOOS", "GOARCH"}, {"python3", "--version"}} {
		exe := lookIn(path, probe[0])
		if exe == "" {
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		out, err := exec.CommandContext(cctx, exe, probe[1:]...).Output()
		cancel()
		if err == nil {
			parts = append(parts, probe[0]+"="+strings.Join(strings.Fields(string(out)), "/"))
		}
	}
	if len(parts) == 0 {
		parts = []string{"none"}
	}
	c.toolchain = strings.Join(parts, " ")
	return c.toolchain
}

// lookIn finds an executable in a PATH list.
func lookIn(path, name string) string {
	for _, d := range filepath.SplitList(path) {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// Key is the name of a task's environment in the cache: one per task
// contents, set-up, toolchain, whether bench runs as root and whether its
// sandbox isolates (what an unisolated preparation left is never used by
// an isolated run).
func (c *Cache) Key(ctx context.Context, t *tasks.Task) string {
	h := sha256.New()
	isolated := c.Sandbox != nil && c.Sandbox.Isolated()
	fmt.Fprintf(h, "format %d\x00task %s\x00setup %s\x00network %v\x00toolchain %s\x00root %v\x00isolated %v",
		Format, t.Hash, t.Environment.Setup, t.Environment.Network, c.Toolchain(ctx), os.Geteuid() == 0, isolated)
	return t.ID + "-" + hex.EncodeToString(h.Sum(nil))[:16]
}

// Prepare returns the task's environment, preparing it when the cache does
// not hold it yet. Concurrent calls for one task prepare it once; another
// bench process preparing it at the same time is waited for.
func (c *Cache) Prepare(ctx context.Context, t *tasks.Task) (*Env, error) {
	c.mu.Lock()
	if c.ready == nil {
		c.ready = map[string]*Env{}
	}
	if e := c.ready[t.Dir]; e != nil {
		c.mu.Unlock()
		return e, nil
	}
	c.mu.Unlock()
	e, err := c.obtain(ctx, c.Key(ctx, t), func(tmp string) (*Meta, error) { return c.build(ctx, t, tmp) })
	if err != nil {
		return nil, fmt.Errorf("prepare the environment of task %s: %w", t.ID, err)
	}
	c.mu.Lock()
	c.ready[t.Dir] = e
	c.mu.Unlock()
	return e, nil
}

// obtain returns the environment of key, held (see hold), built with build
// when the cache folder lacks it: once in this process, and once among
// bench processes (locked).
func (c *Cache) obtain(ctx context.Context, key string, build func(tmp string) (*Meta, error)) (*Env, error) {
	c.mu.Lock()
	if c.preparing == nil {
		c.preparing = map[string]*sync.Mutex{}
	}
	m := c.preparing[key]
	if m == nil {
		m = new(sync.Mutex)
		c.preparing[key] = m
	}
	c.mu.Unlock()
	m.Lock()
	defer m.Unlock()
	if e, err := c.hold(ctx, key); err == nil {
		return e, nil
	}
	if _, err := c.locked(ctx, key, build); err != nil {
		return nil, err
	}
	e, err := c.hold(ctx, key)
	if err != nil {
		return nil, err
	}
	e.Fresh = true
	return e, nil
}

// hold takes a shared lock on key's lock file, which a preparation or a
// Clear holds exclusively, and reads the environment of key; the lock is
// kept until Close, so that no Clear removes the environment meanwhile.
func (c *Cache) hold(ctx context.Context, key string) (*Env, error) {
	c.mu.Lock()
	f, held := c.held[key]
	c.mu.Unlock()
	if !held {
		if err := os.MkdirAll(c.dir(), 0o755); err != nil {
			return nil, err
		}
		var err error
		if f, err = lockWait(ctx, filepath.Join(c.dir(), key+".lock"), syscall.LOCK_SH); err != nil {
			return nil, err
		}
	}
	e, err := c.load(key)
	if err != nil {
		if !held && f != nil {
			f.Close()
		}
		return nil, err
	}
	e.views = c.ViewsDir
	if !held && e.views == "" {
		// Two views an attempt are made and removed in .views: spread
		// over the disk (see tree.Scratch), also when an older bench
		// made the folder.
		views := filepath.Join(c.dir(), viewsDir)
		if err := os.MkdirAll(views, 0o711); err == nil {
			tree.Spread(views)
		}
	}
	c.mu.Lock()
	if c.held == nil {
		c.held = map[string]*os.File{}
	}
	c.held[key] = f
	c.mu.Unlock()
	return e, nil
}

// load reads a prepared environment from the cache.
func (c *Cache) load(key string) (*Env, error) {
	dir := filepath.Join(c.dir(), key)
	b, err := os.ReadFile(filepath.Join(dir, metaFile))
	if err != nil {
		return nil, err
	}
	var m Meta
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("environment %s: %s: %w", key, metaFile, err)
	}
	return &Env{Meta: m, Dir: dir}, nil
}

// locked makes the environment of key with build, in a scratch folder of
// the cache renamed into place once complete, holding the cache folder's
// lock for key so that another bench process making it waits and then
// reads it.
func (c *Cache) locked(ctx context.Context, key string, build func(tmp string) (*Meta, error)) (*Env, error) {
	if err := os.MkdirAll(c.dir(), 0o755); err != nil {
		return nil, err
	}
	unlock, err := lockFile(ctx, filepath.Join(c.dir(), key+".lock"))
	if err != nil {
		return nil, err
	}
	defer unlock()
	if e, err := c.load(key); err == nil {
		return e, nil // another process prepared it meanwhile
	}
	// Made in the cache folder, beside where it goes; without isolation
	// in ViewsDir, as its steps' user must reach it on the host.
	scratch := c.dir()
	if c.ViewsDir != "" {
		scratch = c.ViewsDir
	}
	tmp, err := os.MkdirTemp(scratch, key+".tmp-")
	if err != nil {
		return nil, err
	}
	defer tree.Remove(tmp)
	start := time.Now()
	meta, err := build(tmp)
	if err != nil {
		return nil, err
	}
	meta.Key, meta.Took, meta.PreparedAt = key, time.Since(start), time.Now().UTC()
	if err := freezeLayers(tmp); err != nil {
		return nil, err
	}
	meta.Bytes, meta.Files = size(tmp)
	b, _ := json.MarshalIndent(meta, "", "  ")
	if err := os.WriteFile(filepath.Join(tmp, metaFile), append(b, '\n'), 0o644); err != nil {
		return nil, err
	}
	final := filepath.Join(c.dir(), key)
	if err := os.Rename(tmp, final); errors.Is(err, syscall.EXDEV) {
		// Another file system: copied in under a scratch name, then
		// renamed, so that a reader never sees half of it.
		in, err := os.MkdirTemp(c.dir(), key+".tmp-")
		if err != nil {
			return nil, err
		}
		defer tree.Remove(in)
		if err := os.Remove(in); err != nil {
			return nil, err
		}
		if err := copyTree(tmp, in); err != nil {
			return nil, err
		}
		// The copy is writable and owned by bench: frozen again.
		if err := freezeLayers(in); err != nil {
			return nil, err
		}
		if err := os.Rename(in, final); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, err
	}
	return &Env{Meta: *meta, Dir: final, Fresh: true}, nil
}

// freezeLayers freezes the layers of the environment folder dir.
func freezeLayers(dir string) error {
	for _, layer := range []string{HomeLayer, ScoringLayer} {
		if _, err := os.Stat(filepath.Join(dir, layer)); err != nil {
			continue
		}
		if err := freeze(filepath.Join(dir, layer)); err != nil {
			return fmt.Errorf("freeze %s: %w", layer, err)
		}
	}
	return nil
}

// lockFile takes an exclusive lock on path, waiting for ctx.
func lockFile(ctx context.Context, path string) (func(), error) {
	f, err := lockWait(ctx, path, syscall.LOCK_EX)
	if err != nil {
		return nil, err
	}
	return func() { unlock(f); f.Close() }, nil
}

// lockWait opens path and takes a lock of kind how (LOCK_EX, LOCK_SH) on
// it, waiting for ctx; closing the file releases it. In a cache folder
// bench may read but not write (one shared read-only), the lock file is
// opened for reading, and a shared lock on one that is not there is no
// lock (nil): no process can prepare or clear what it cannot write.
func lockWait(ctx context.Context, path string, how int) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) {
		f, err = os.Open(path)
		if errors.Is(err, fs.ErrNotExist) && how == syscall.LOCK_SH {
			return nil, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("open the lock file: %w", err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// lockNow takes an exclusive lock on f, or fails at once.
func lockNow(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) }

// unlock releases the lock of lockNow (closing f does too).
func unlock(f *os.File) { syscall.Flock(int(f.Fd()), syscall.LOCK_UN) } //nolint:errcheck // closing unlocks too

// freeze makes a layer the read-only master of its views: when bench is
// root, its files become root's, and no file can be written by anyone.
func freeze(dir string) error {
	root := os.Geteuid() == 0
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if root {
			if err := os.Lchown(p, 0, 0); err != nil {
				return err
			}
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		mode := fi.Mode().Perm()
		if d.IsDir() {
			return os.Chmod(p, (mode|0o755)&^0o022)
		}
		return os.Chmod(p, (mode|0o444)&^0o222)
	})
}

// size counts the bytes and files under dir, each inode once.
func size(dir string) (int64, int) {
	seen := map[uint64]bool{}
	var bytes int64
	files := 0
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error { //nolint:errcheck // a best-effort count
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			if seen[st.Ino] {
				return nil
			}
			seen[st.Ino] = true
		}
		bytes += fi.Size()
		files++
		return nil
	})
	return bytes, files
}

// copyFile copies a regular file with its mode.
func copyFile(src, dst string, mode fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode.Perm()|0o200)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
