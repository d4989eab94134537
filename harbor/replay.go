package harbor

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/benchhq/bench/sandbox"
)

// replay replays a Dockerfile's steps on a root file system.
type replay struct {
	r       *Runtime
	t       *Task
	root    string
	env     *envList
	workdir string
	user    sandbox.User
}

func (rp *replay) run(ctx context.Context) ([]StepLog, error) {
	timeout := rp.t.Task.Environment.TimeoutOr()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var logs []StepLog
	for _, s := range rp.t.Dockerfile.Steps {
		fail := func(err error) error {
			return fmt.Errorf("task %s: %s line %d: %s: %w", rp.t.Task.ID, DockerfilePath, s.Line, s.Op, err)
		}
		switch s.Op {
		case "ENV":
			// Every value of one ENV sees the environment before it.
			vals := make([][2]string, len(s.Env))
			for i, kv := range s.Env {
				vals[i] = [2]string{kv[0], Expand(kv[1], rp.env.vals)}
			}
			for _, kv := range vals {
				rp.env.set(kv[0], kv[1])
			}
		case "WORKDIR":
			d := Expand(s.Dir, rp.env.vals)
			if !path.IsAbs(d) {
				d = path.Join(rp.workdir, d)
			}
			rp.workdir = path.Clean(d)
			if err := mkdirIn(rp.root, rp.workdir); err != nil {
				return logs, fail(err)
			}
		case "COPY":
			if err := rp.copy(s); err != nil {
				return logs, fail(err)
			}
		case "RUN":
			log, err := rp.runStep(ctx, s)
			logs = append(logs, log)
			if err != nil {
				if ctx.Err() != nil {
					return logs, fail(fmt.Errorf("the build ran past its timeout (%s; [environment] build_timeout_sec)", timeout))
				}
				return logs, fail(err)
			}
		}
	}
	return logs, nil
}

// runStep runs a RUN in the sandbox, as root of its own user namespace,
// with the network: the only time a Harbor task's processes get it from
// bench (preparation).
func (rp *replay) runStep(ctx context.Context, s Step) (StepLog, error) {
	start := time.Now()
	argv := s.Exec
	if argv == nil {
		argv = []string{"/bin/sh", "-c", s.Shell}
	}
	if err := mkdirIn(rp.root, rp.workdir); err != nil {
		return StepLog{Line: s.Line, Op: s.Op, Exit: -1}, err
	}
	spec := sandbox.Spec{Root: rp.root, Dir: rp.workdir, Home: filepath.Join(rp.root, homeInRoot), AsRoot: true, Network: true, Limits: rp.r.Limits, User: rp.user}
	if err := os.MkdirAll(spec.Home, 0o700); err != nil {
		return StepLog{Line: s.Line, Op: s.Op, Exit: -1}, err
	}
	exit, out, err := rp.r.run(ctx, spec, argv, rp.env.list(nil))
	log := StepLog{Line: s.Line, Op: s.Op, Exit: exit, Took: time.Since(start), Output: out}
	if err != nil {
		return log, &InfraError{Err: err}
	}
	if exit != 0 {
		return log, fmt.Errorf("exited %d: %s", exit, lastLines(out, 20))
	}
	return log, nil
}

// copy replays a COPY: sources from the build context (environment/), never
// out of it; written into the root without following a link out of it.
func (rp *replay) copy(s Step) error {
	ctxDir := filepath.Join(rp.t.Task.Dir, "environment")
	dest := Expand(s.Dest, rp.env.vals)
	if !path.IsAbs(dest) {
		dest = path.Join(rp.workdir, dest) + map[bool]string{true: "/", false: ""}[strings.HasSuffix(s.Dest, "/")]
	}
	var mode fs.FileMode
	if s.Chmod != "" {
		m, err := strconv.ParseUint(s.Chmod, 8, 32)
		if err != nil || m > 0o7777 {
			return fmt.Errorf("--chmod=%s: expected an octal mode", s.Chmod)
		}
		mode = fs.FileMode(m).Perm()
	}
	var srcs []string
	for _, src := range s.Sources {
		src = Expand(src, rp.env.vals)
		matches, err := filepath.Glob(filepath.Join(ctxDir, filepath.FromSlash(src)))
		if err != nil || len(matches) == 0 {
			return fmt.Errorf("source %q: not in the build context %s", src, ctxDir)
		}
		for _, m := range matches {
			if rel, err := filepath.Rel(ctxDir, m); err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
				return fmt.Errorf("source %q: outside the build context", src)
			}
			srcs = append(srcs, m)
		}
	}
	root, err := os.OpenRoot(rp.root)
	if err != nil {
		return err
	}
	defer root.Close()
	rel := func(p string) string { return strings.TrimPrefix(path.Clean(p), "/") }
	intoDir := strings.HasSuffix(dest, "/") || len(srcs) > 1
	for _, src := range srcs {
		fi, err := os.Stat(src)
		if err != nil {
			return err
		}
		if fi.IsDir() {
			// A folder's contents, as Docker copies them.
			if err := copyDirInto(root, src, rel(dest), mode); err != nil {
				return err
			}
			continue
		}
		d := rel(dest)
		if intoDir {
			d = path.Join(d, filepath.Base(src))
		}
		if err := root.MkdirAll(path.Dir(d), 0o755); err != nil && path.Dir(d) != "." {
			return err
		}
		if err := copyFileInto(root, src, d, fi.Mode(), mode); err != nil {
			return err
		}
	}
	return nil
}

// copyDirInto copies the contents of the host folder src to the folder
// dst of root.
func copyDirInto(root *os.Root, src, dst string, mode fs.FileMode) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		r, _ := filepath.Rel(src, p)
		target := path.Join(dst, filepath.ToSlash(r))
		if target == "" {
			target = "."
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			if target == "." {
				return nil
			}
			return root.MkdirAll(target, fi.Mode().Perm()|0o700)
		case fi.Mode()&fs.ModeSymlink != 0:
			l, err := os.Readlink(p)
			if err != nil {
				return err
			}
			_ = root.RemoveAll(target)
			return root.Symlink(l, target)
		case fi.Mode().IsRegular():
			return copyFileInto(root, p, target, fi.Mode(), mode)
		}
		return nil
	})
}

// copyFileInto copies the host file src to dst in root (replacing it).
func copyFileInto(root *os.Root, src, dst string, srcMode, mode fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if fi, err := root.Lstat(dst); err == nil && !fi.Mode().IsRegular() {
		if err := root.RemoveAll(dst); err != nil {
			return err
		}
	}
	if mode == 0 {
		mode = srcMode.Perm()
	}
	out, err := root.OpenFile(dst, os.O_CREATE|os.O_TRUNC|os.O_WRONLY|syscall.O_NOFOLLOW, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return root.Chmod(dst, mode)
}

// mkdirIn makes the folder dir (absolute, as the sandbox sees it) in
// root, following no link out of it.
func mkdirIn(root, dir string) error {
	r, err := os.OpenRoot(root)
	if err != nil {
		return err
	}
	defer r.Close()
	d := strings.TrimPrefix(path.Clean(dir), "/")
	if d == "" {
		return nil
	}
	return r.MkdirAll(d, 0o755)
}
