package evaluator

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/benchhq/bench/tasks"
)

// Change is what an attempt changed in its workspace, as scoring sees it:
// the files carried into the scoring folder (the agent's result), and
// those left behind with the reason.
type Change struct {
	// Carried are the files added, modified or removed that count as the
	// agent's result, sorted by path: all of them, as scoring applies
	// them; the store keeps MaxStoredCarried, and counts the rest in
	// CarriedMore (set only on a Change read back from the store).
	Carried     []FileChange `json:"carried"`
	CarriedMore int          `json:"carried_more,omitempty"`
	// LeftOut are the other changed paths, with why they do not count,
	// sorted by path; at most MaxLeftOut of them, LeftOutMore counts the
	// rest.
	LeftOut     []LeftOut `json:"left_out"`
	LeftOutMore int       `json:"left_out_more,omitempty"`
	// Diff is a unified diff of the carried files (text files; binary or
	// large ones are named), at most MaxDiff bytes: DiffCut counts the
	// bytes dropped beyond.
	Diff    string `json:"-"`
	DiffCut int    `json:"-"`

	src string // the attempt's workspace
}

// FileChange is one carried file.
type FileChange struct {
	Path string `json:"path"`
	// Kind is "added", "modified" or "removed".
	Kind string `json:"kind"`
	// Size is the file's size in the attempt's workspace (0 if removed).
	Size int64 `json:"size"`
}

// LeftOut is one changed path not carried into scoring.
type LeftOut struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Bounds of a Change.
const (
	// MaxLeftOut bounds the left-out paths listed.
	MaxLeftOut = 200
	// MaxStoredCarried bounds the carried files the store lists.
	MaxStoredCarried = 1000
	// MaxDiff bounds the stored diff.
	MaxDiff = 256 << 10
	// maxDiffFile is the largest file diffed line by line.
	maxDiffFile = 128 << 10
	// maxShownPath bounds an unreadable path as it is listed.
	maxShownPath = 512
)

// CollectChange compares an attempt's workspace with the task's original
// one and sorts every difference into what counts as the agent's result
// (by the task's [tests] rule, tasks.Tests.Counts) and what is left out.
// Links and special files never count; a folder left out as a whole (a
// dot-folder, a cache) is listed once. It reads the workspace without
// following links; nothing of the attempt may run while it does.
func CollectChange(t *tasks.Task, workspace string) (*Change, error) {
	// The original, as the attempt got it (and as its scoring folder is
	// built): the task's snapshot, not its folder as it is now.
	orig, err := t.WorkspaceFS()
	if err != nil {
		return nil, fmt.Errorf("collect the change of the attempt: %w", err)
	}
	c := &Change{src: workspace}
	var shadow tasks.Shadowing
	if len(t.Tests.Result) == 0 {
		if shadow, err = t.Shadowing(); err != nil {
			return nil, err
		}
	}
	var diff bytes.Buffer
	leave := func(rel, reason string) {
		if len(c.LeftOut) < MaxLeftOut {
			c.LeftOut = append(c.LeftOut, LeftOut{Path: rel, Reason: reason})
		} else {
			c.LeftOutMore++
		}
	}
	unreadable := func(rel string, d fs.DirEntry, err error) error {
		if len(rel) > maxShownPath {
			rel = cutUTF8(rel, maxShownPath) + "..."
		}
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		leave(rel, tasks.LeftOutUnreadable+" ("+err.Error()+")")
		if d != nil && d.IsDir() {
			return filepath.SkipDir
		}
		return nil
	}
	err = filepath.WalkDir(workspace, func(p string, d fs.DirEntry, err error) error {
		if p == workspace || err != nil && errors.Is(err, fs.ErrNotExist) {
			return err
		}
		rel := filepath.ToSlash(mustRel(workspace, p))
		if err != nil {
			return unreadable(rel, d, err)
		}
		if d.IsDir() {
			// Under the default rule a dot-folder or a cache is left out as
			// a whole, and named once (unless the task shipped it as is).
			if len(t.Tests.Result) == 0 && (strings.HasPrefix(d.Name(), ".") || d.Name() == "__pycache__") {
				if !sameTree(orig, rel, p) {
					_, why := t.Tests.Counts(rel + "/x")
					leave(rel+"/", why)
				}
				return filepath.SkipDir
			}
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return unreadable(rel, d, err)
		}
		was, werr := fs.Lstat(orig, rel)
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			if werr == nil && was.Mode()&fs.ModeSymlink != 0 && sameLink(orig, rel, p) {
				return nil
			}
			leave(rel, tasks.LeftOutLink)
			return nil
		case !info.Mode().IsRegular():
			leave(rel, tasks.LeftOutSpecial)
			return nil
		}
		kind := "added"
		var cur []byte // the attempt's file, read at most once
		if werr == nil && was.Mode().IsRegular() {
			if sameShape(was, info) {
				if cur, err = readNoFollow(p); err != nil {
					return unreadable(rel, d, err)
				}
				same, err := sameContent(orig, rel, cur)
				if err != nil {
					return unreadable(rel, d, err)
				}
				if same {
					return nil
				}
			}
			kind = "modified"
		}
		if ok, why := t.Tests.Counts(rel); !ok {
			leave(rel, why)
			return nil
		}
		if kind == "added" && shadow.Shadows(rel) {
			leave(rel, tasks.LeftOutShadow)
			return nil
		}
		if cur == nil && info.Size() <= maxDiffFile {
			if cur, err = readNoFollow(p); err != nil {
				return unreadable(rel, d, err)
			}
		} else if cur == nil {
			if err := readable(p); err != nil {
				return unreadable(rel, d, err)
			}
		}
		c.Carried = append(c.Carried, FileChange{Path: rel, Kind: kind, Size: info.Size()})
		return writeDiff(&diff, rel, orig, cur, kind, was, info)
	})
	if err != nil {
		return nil, fmt.Errorf("collect the change of the attempt: %w", err)
	}
	// Files of the original workspace the agent removed.
	err = fs.WalkDir(orig, ".", func(rel string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !d.Type().IsRegular() {
			return err
		}
		if _, err := os.Lstat(filepath.Join(workspace, filepath.FromSlash(rel))); !errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if ok, why := t.Tests.Counts(rel); !ok {
			leave(rel, "removed, but "+why)
			return nil
		}
		c.Carried = append(c.Carried, FileChange{Path: rel, Kind: "removed"})
		fi, err := d.Info()
		if err != nil {
			return err
		}
		return writeDiff(&diff, rel, orig, nil, "removed", fi, nil)
	})
	if err != nil {
		return nil, fmt.Errorf("collect the change of the attempt: %w", err)
	}
	slices.SortFunc(c.Carried, func(a, b FileChange) int { return strings.Compare(a.Path, b.Path) })
	slices.SortFunc(c.LeftOut, func(a, b LeftOut) int { return strings.Compare(a.Path, b.Path) })
	c.Diff = diff.String()
	if len(c.Diff) > MaxDiff {
		c.DiffCut = len(c.Diff) - MaxDiff
		c.Diff = cutUTF8(c.Diff, MaxDiff) + fmt.Sprintf("\n[bench: diff cut at %d KiB, %d more bytes]\n", MaxDiff>>10, c.DiffCut)
	}
	return c, nil
}

// Apply writes the carried files into dst (a fresh copy of the original
// workspace): copies of the added and modified ones, never links, and the
// removals.
func (c *Change) Apply(dst string) error {
	for _, f := range c.Carried {
		target := filepath.Join(dst, filepath.FromSlash(f.Path))
		if f.Kind == "removed" {
			if err := os.Remove(target); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("carry the change into scoring: %w", err)
			}
			continue
		}
		if err := makeParents(dst, filepath.Dir(f.Path)); err != nil {
			return fmt.Errorf("carry %s into scoring: %w", f.Path, err)
		}
		if err := copyRegular(filepath.Join(c.src, filepath.FromSlash(f.Path)), target); err != nil {
			return fmt.Errorf("carry %s into scoring: %w", f.Path, err)
		}
	}
	return nil
}

// copyRegular copies a regular file (never through a link at either end),
// keeping its executable bits.
func copyRegular(src, dst string) error {
	in, err := os.OpenFile(src, os.O_RDONLY|syscallNoFollow, 0)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is no longer a regular file", src)
	}
	// Whatever the original has there (a file, or a folder the agent
	// turned into a file) goes.
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644|(fi.Mode().Perm()&0o111))
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// makeParents makes the folders of rel (slash-separated) under root,
// removing a file of the original workspace that stands where the agent
// made a folder.
func makeParents(root, rel string) error {
	p := root
	for _, seg := range strings.Split(filepath.ToSlash(rel), "/") {
		if seg == "." || seg == "" {
			continue
		}
		p = filepath.Join(p, seg)
		fi, err := os.Lstat(p)
		if err == nil && fi.IsDir() {
			continue
		}
		if err == nil {
			if err := os.Remove(p); err != nil {
				return err
			}
		}
		if err := os.Mkdir(p, 0o755); err != nil {
			return err
		}
	}
	return nil
}

func mustRel(base, p string) string {
	rel, err := filepath.Rel(base, p)
	if err != nil {
		return p
	}
	return rel
}

// sameShape reports whether two regular files may be the same: the same
// size and executable bits.
func sameShape(ai, bi fs.FileInfo) bool {
	return ai.Size() == bi.Size() && ai.Mode().Perm()&0o111 == bi.Mode().Perm()&0o111
}

// sameContent reports whether the original's file at rel holds exactly b,
// read a piece at a time (fs.ReadFile would copy it whole out of the
// snapshot, for every unchanged file of every attempt).
func sameContent(orig fs.FS, rel string, b []byte) (bool, error) {
	f, err := orig.Open(rel)
	if err != nil {
		return false, err
	}
	defer f.Close()
	buf := make([]byte, min(len(b)+1, 32<<10)) // one more: a longer original shows at once
	for {
		n, err := f.Read(buf)
		if n > len(b) || !bytes.Equal(buf[:n], b[:n]) {
			return false, nil
		}
		b = b[n:]
		switch {
		case err == io.EOF:
			return len(b) == 0, nil
		case err != nil:
			return false, err
		}
	}
}

// sameFile reports whether a regular file of the original (rel in orig) and
// one of the attempt's (path b) have the same content and executable bits.
func sameFile(orig fs.FS, rel, b string, ai, bi fs.FileInfo) (bool, error) {
	if !sameShape(ai, bi) {
		return false, nil
	}
	y, err := readNoFollow(b)
	if err != nil {
		return false, err
	}
	return sameContent(orig, rel, y)
}

func sameLink(orig fs.FS, rel, b string) bool {
	x, err1 := fs.ReadLink(orig, rel)
	y, err2 := os.Readlink(b)
	return err1 == nil && err2 == nil && x == y
}

// sameTree reports whether a left-out folder (p, at rel) was there, the
// same, in the original workspace (a .git folder the task ships, say).
func sameTree(orig fs.FS, rel, p string) bool {
	fi, err := fs.Lstat(orig, rel)
	if err != nil || !fi.IsDir() {
		return false
	}
	same := true
	filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error { //nolint:errcheck // a failure counts as a difference
		if err != nil {
			same = false
			return filepath.SkipAll
		}
		if d.IsDir() {
			return nil
		}
		o := path.Join(rel, filepath.ToSlash(mustRel(p, q)))
		oi, err1 := fs.Lstat(orig, o)
		qi, err2 := d.Info()
		if err1 != nil || err2 != nil || !oi.Mode().IsRegular() || !qi.Mode().IsRegular() {
			same = false
			return filepath.SkipAll
		}
		if ok, err := sameFile(orig, o, q, oi, qi); err != nil || !ok {
			same = false
			return filepath.SkipAll
		}
		return nil
	})
	return same
}

// readable checks that a file can be opened for reading, never through a
// link.
func readable(p string) error {
	f, err := os.OpenFile(p, os.O_RDONLY|syscallNoFollow, 0)
	if err != nil {
		return err
	}
	return f.Close()
}

func readNoFollow(p string) ([]byte, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscallNoFollow, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// writeDiff appends the unified diff of one carried file at rel: orig holds
// the original, cur is the attempt's content (read by the caller; nil when
// removed, or too large to show); oi and ci their infos (oi unused when
// added).
func writeDiff(w *bytes.Buffer, rel string, orig fs.FS, cur []byte, kind string, oi, ci fs.FileInfo) error {
	if w.Len() > MaxDiff {
		return nil // the diff is cut anyway
	}
	from, to := "a/"+rel, "b/"+rel
	var a, b []byte
	var err error
	switch kind {
	case "added":
		from = "/dev/null"
	case "removed":
		to = "/dev/null"
	}
	big := false
	if kind != "added" {
		big = oi.Size() > maxDiffFile
		if !big {
			if a, err = fs.ReadFile(orig, rel); err != nil {
				return err
			}
		}
	}
	if kind != "removed" {
		big = big || ci.Size() > maxDiffFile
		b = cur
	}
	fmt.Fprintf(w, "diff --bench %s %s\n", "a/"+rel, "b/"+rel)
	switch kind {
	case "added":
		fmt.Fprintf(w, "new file mode %o\n", 0o100000|(0o644|ci.Mode().Perm()&0o111))
	case "removed":
		fmt.Fprintf(w, "deleted file mode %o\n", 0o100000|oi.Mode().Perm())
	default:
		if om, cm := oi.Mode().Perm()&0o111, ci.Mode().Perm()&0o111; om != cm {
			fmt.Fprintf(w, "old mode %o\nnew mode %o\n", 0o100000|oi.Mode().Perm(), 0o100000|(0o644|cm))
		}
	}
	if big || bytes.IndexByte(a, 0) >= 0 || bytes.IndexByte(b, 0) >= 0 {
		fmt.Fprintf(w, "Binary or large files %s and %s differ\n", from, to)
		return nil
	}
	if bytes.Equal(a, b) {
		return nil // a mode change only
	}
	text, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: splitLines(a), B: splitLines(b), FromFile: from, ToFile: to, Context: 3,
	})
	if err != nil {
		return fmt.Errorf("diff %s: %w", rel, err)
	}
	w.WriteString(text)
	return nil
}

// splitLines splits text into lines that keep their newline; a last line
// without one gets git's marker.
func splitLines(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	lines := strings.SplitAfter(string(b), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if n := len(lines); !strings.HasSuffix(lines[n-1], "\n") {
		lines[n-1] += "\n\\ No newline at end of file\n"
	}
	return lines
}

// cutUTF8 cuts s to at most n bytes, never inside a UTF-8 character.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
