package image

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/klauspost/compress/zstd"
)

// EscapeError is a layer entry refused because it would reach out of the
// root file system.
type EscapeError struct {
	Layer int    // the layer's index, from 0 (the base)
	Name  string // the entry's name in the layer
	Msg   string // what it does
}

func (e *EscapeError) Error() string {
	return fmt.Sprintf("layer %d: entry %q: %s: refused", e.Layer, e.Name, e.Msg)
}

// Stats are what an unpack did.
type Stats struct {
	Layers int
	Files  int   // regular files, links and folders written
	Bytes  int64 // bytes of regular files written
	// Skipped counts device nodes, which bench does not make (the
	// sandbox gives its own /dev).
	Skipped int
}

// whiteout prefixes of the OCI layer format.
const (
	whPrefix = ".wh."
	whOpaque = ".wh..wh..opq"
)

// Unpack writes the layers of img, verified, into the folder root, which
// must exist and be empty. Every layer's compressed digest is checked
// against the manifest's and its uncompressed digest against the config's
// diff_ids, and the config against the manifest's config digest: any
// mismatch is an error wrapping ErrDigest, and what root then holds must
// be thrown away. When bench runs as root, files get the owners the
// layers give; otherwise bench's own user owns them.
func Unpack(ctx context.Context, img v1.Image, root string) (Stats, error) {
	var st Stats
	m, err := img.Manifest()
	if err != nil {
		return st, fmt.Errorf("read the manifest: %w", err)
	}
	raw, err := img.RawConfigFile()
	if err != nil {
		return st, fmt.Errorf("read the config: %w", err)
	}
	if got := sha256.Sum256(raw); m.Config.Digest.Algorithm == "sha256" && hex.EncodeToString(got[:]) != m.Config.Digest.Hex {
		return st, fmt.Errorf("config: manifest says %s, content is sha256:%x: %w", m.Config.Digest, got, ErrDigest)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return st, fmt.Errorf("read the config: %w", err)
	}
	layers, err := img.Layers()
	if err != nil {
		return st, fmt.Errorf("list the layers: %w", err)
	}
	if len(layers) != len(cfg.RootFS.DiffIDs) || len(layers) != len(m.Layers) {
		return st, fmt.Errorf("the image has %d layers, its config lists %d diff_ids and its manifest %d", len(layers), len(cfg.RootFS.DiffIDs), len(m.Layers))
	}
	u := &unpacker{root: root, chown: os.Geteuid() == 0, dirs: map[string]dirMeta{}}
	for i, l := range layers {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		if err := u.layer(i, l, m.Layers[i].Digest, cfg.RootFS.DiffIDs[i]); err != nil {
			return u.st, err
		}
	}
	u.st.Layers = len(layers)
	return u.st, u.finish()
}

type dirMeta struct {
	mode  fs.FileMode
	mtime time.Time
}

type unpacker struct {
	root  string
	chown bool
	st    Stats
	// dirs are the folders' final modes and times, set once every layer
	// is in (a read-only folder would refuse later entries).
	dirs map[string]dirMeta
	// made are the names this layer wrote: an opaque whiteout removes
	// only what lower layers left.
	made map[string]bool
}

// layer unpacks one layer, checking its digests.
func (u *unpacker) layer(i int, l v1.Layer, digest, diffID v1.Hash) error {
	rc, err := l.Compressed()
	if err != nil {
		return fmt.Errorf("layer %d (%s): %w", i, digest, err)
	}
	defer rc.Close()
	ch, err := newHash(digest)
	if err != nil {
		return fmt.Errorf("layer %d: %w", i, err)
	}
	uh, err := newHash(diffID)
	if err != nil {
		return fmt.Errorf("layer %d: %w", i, err)
	}
	br := bufio.NewReader(io.TeeReader(rc, ch))
	var plain io.Reader
	magic, _ := br.Peek(4)
	switch {
	case bytes.HasPrefix(magic, []byte{0x1f, 0x8b}):
		z, err := gzip.NewReader(br)
		if err != nil {
			return fmt.Errorf("layer %d (%s): %w", i, digest, err)
		}
		defer z.Close()
		plain = z
	case bytes.Equal(magic, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		z, err := zstd.NewReader(br)
		if err != nil {
			return fmt.Errorf("layer %d (%s): %w", i, digest, err)
		}
		defer z.Close()
		plain = z
	default:
		plain = br
	}
	tr := tar.NewReader(io.TeeReader(plain, uh))
	u.made = map[string]bool{}
	// checkDigest drains the compressed stream and compares its digest:
	// a layer that is not what its digest says is reported as that, not
	// as whatever its damage made extraction fail on.
	checkDigest := func() error {
		io.Copy(io.Discard, br) //nolint:errcheck // the digest decides
		if got := hex.EncodeToString(ch.Sum(nil)); got != digest.Hex {
			return fmt.Errorf("layer %d: manifest says %s, content is %s:%s: %w", i, digest, digest.Algorithm, got, ErrDigest)
		}
		return nil
	}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err == nil {
			err = u.entry(i, h, tr)
		} else {
			err = fmt.Errorf("layer %d (%s): read: %w", i, digest, err)
		}
		if err != nil {
			if derr := checkDigest(); derr != nil {
				return derr
			}
			return err
		}
	}
	// The rest of both streams counts toward their digests (tar padding,
	// the compressor's trailer).
	if _, err := io.Copy(io.Discard, plain); err != nil {
		if derr := checkDigest(); derr != nil {
			return derr
		}
		return fmt.Errorf("layer %d (%s): read: %w", i, digest, err)
	}
	if err := checkDigest(); err != nil {
		return err
	}
	if got := hex.EncodeToString(uh.Sum(nil)); got != diffID.Hex {
		return fmt.Errorf("layer %d: config says diff_id %s, content is %s:%s: %w", i, diffID, diffID.Algorithm, got, ErrDigest)
	}
	return nil
}

func newHash(h v1.Hash) (hash.Hash, error) {
	if h.Algorithm != "sha256" {
		return nil, fmt.Errorf("digest %s: bench checks sha256 digests only", h)
	}
	return sha256.New(), nil
}

// cleanName is a layer entry's name relative to the root, or ok false
// when it climbs out of it.
func cleanName(n string) (string, bool) {
	c := path.Clean(strings.TrimLeft(n, "/"))
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", false
	}
	if c == "." {
		c = ""
	}
	return c, true
}

// entry writes one entry of layer i.
func (u *unpacker) entry(i int, h *tar.Header, r io.Reader) error {
	name, ok := cleanName(h.Name)
	if !ok {
		return &EscapeError{Layer: i, Name: h.Name, Msg: "its name climbs out of the root"}
	}
	if name == "" {
		if h.Typeflag == tar.TypeDir {
			u.dirs[""] = dirMeta{mode: dirMode(h.Mode), mtime: h.ModTime}
		}
		return nil
	}
	dir, base := path.Split(name)
	parent, err := u.resolve(strings.TrimSuffix(dir, "/"))
	if err != nil {
		return &EscapeError{Layer: i, Name: h.Name, Msg: err.Error()}
	}
	// Folders on the way that no entry made (layers may omit them).
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("layer %d: entry %q: %w", i, h.Name, err)
	}
	if base == whOpaque {
		return u.opaque(i, h.Name, parent, strings.TrimSuffix(dir, "/"))
	}
	if strings.HasPrefix(base, whPrefix) {
		gone := filepath.Join(parent, base[len(whPrefix):])
		if err := os.RemoveAll(gone); err != nil {
			return fmt.Errorf("layer %d: whiteout %q: %w", i, h.Name, err)
		}
		return nil
	}
	target := filepath.Join(parent, base)
	u.made[name] = true
	if h.Typeflag != tar.TypeDir {
		if err := removeExisting(target); err != nil {
			return fmt.Errorf("layer %d: entry %q: %w", i, h.Name, err)
		}
	}
	switch h.Typeflag {
	case tar.TypeDir:
		if fi, err := os.Lstat(target); err == nil && !fi.IsDir() {
			if err := os.Remove(target); err != nil {
				return fmt.Errorf("layer %d: entry %q: %w", i, h.Name, err)
			}
		}
		if err := os.Mkdir(target, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("layer %d: entry %q: %w", i, h.Name, err)
		}
		u.dirs[name] = dirMeta{mode: dirMode(h.Mode), mtime: h.ModTime}
	case tar.TypeReg, tar.TypeRegA: //nolint:staticcheck // old archives
		f, err := os.OpenFile(target, os.O_CREATE|os.O_EXCL|os.O_WRONLY|syscall.O_NOFOLLOW, 0o600)
		if err != nil {
			return fmt.Errorf("layer %d: entry %q: %w", i, h.Name, err)
		}
		n, err := io.Copy(f, io.LimitReader(r, h.Size))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil && n != h.Size {
			err = io.ErrUnexpectedEOF
		}
		if err != nil {
			return fmt.Errorf("layer %d: entry %q: %w", i, h.Name, err)
		}
		u.st.Bytes += n
		// Readable by bench's user, so that views can copy it; never
		// set-user-ID or set-group-ID (see the package doc).
		if err := os.Chmod(target, fs.FileMode(h.Mode).Perm()|0o400); err != nil {
			return fmt.Errorf("layer %d: entry %q: %w", i, h.Name, err)
		}
		_ = os.Chtimes(target, h.ModTime, h.ModTime)
	case tar.TypeSymlink:
		if !strings.HasPrefix(h.Linkname, "/") {
			if c := path.Clean(path.Join(dir, h.Linkname)); c == ".." || strings.HasPrefix(c, "../") {
				return &EscapeError{Layer: i, Name: h.Name, Msg: fmt.Sprintf("its link target %q climbs out of the root", h.Linkname)}
			}
		}
		// An absolute target resolves inside the root wherever bench
		// follows it (resolve) and in the sandbox, whose / is the root.
		if err := os.Symlink(h.Linkname, target); err != nil {
			return fmt.Errorf("layer %d: entry %q: %w", i, h.Name, err)
		}
	case tar.TypeLink:
		ln, ok := cleanName(h.Linkname)
		if !ok || ln == "" {
			return &EscapeError{Layer: i, Name: h.Name, Msg: fmt.Sprintf("its hard-link target %q climbs out of the root", h.Linkname)}
		}
		ldir, lbase := path.Split(ln)
		lparent, err := u.resolve(strings.TrimSuffix(ldir, "/"))
		if err != nil {
			return &EscapeError{Layer: i, Name: h.Name, Msg: err.Error()}
		}
		src := filepath.Join(lparent, lbase)
		fi, err := os.Lstat(src)
		if err != nil {
			return &EscapeError{Layer: i, Name: h.Name, Msg: fmt.Sprintf("its hard-link target %q is not in the image", h.Linkname)}
		}
		if fi.IsDir() {
			return &EscapeError{Layer: i, Name: h.Name, Msg: fmt.Sprintf("its hard-link target %q is a folder", h.Linkname)}
		}
		if err := os.Link(src, target); err != nil {
			return fmt.Errorf("layer %d: entry %q: %w", i, h.Name, err)
		}
	case tar.TypeFifo:
		if err := syscall.Mkfifo(target, uint32(fs.FileMode(h.Mode).Perm())); err != nil {
			return fmt.Errorf("layer %d: entry %q: %w", i, h.Name, err)
		}
	case tar.TypeChar, tar.TypeBlock:
		u.st.Skipped++
		delete(u.made, name)
		return nil
	default:
		return fmt.Errorf("layer %d: entry %q: type %q: not a file, folder, link or fifo", i, h.Name, h.Typeflag)
	}
	u.st.Files++
	if u.chown {
		if err := os.Lchown(target, h.Uid, h.Gid); err != nil {
			return fmt.Errorf("layer %d: entry %q: owner: %w", i, h.Name, err)
		}
	}
	return nil
}

// removeExisting removes what a lower layer left at p, never following a
// link.
func removeExisting(p string) error {
	fi, err := os.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case fi.IsDir():
		return os.RemoveAll(p)
	}
	return os.Remove(p)
}

// opaque empties the folder dir (host path parent) of what lower layers
// left in it.
func (u *unpacker) opaque(i int, entry, parent, dir string) error {
	ents, err := os.ReadDir(parent)
	if err != nil {
		return fmt.Errorf("layer %d: whiteout %q: %w", i, entry, err)
	}
	for _, e := range ents {
		if u.made[path.Join(dir, e.Name())] {
			continue
		}
		if err := os.RemoveAll(filepath.Join(parent, e.Name())); err != nil {
			return fmt.Errorf("layer %d: whiteout %q: %w", i, entry, err)
		}
	}
	return nil
}

// maxLinks bounds the symbolic links followed to resolve one name.
const maxLinks = 40

// resolve returns the host path of the folder rel (slash-separated,
// relative to the root), every symbolic link on the way followed as the
// sandbox would, with the root as "/": an absolute target starts again
// at the root and ".." stops at it. So the result is always inside the
// root.
func (u *unpacker) resolve(rel string) (string, error) {
	parts := strings.Split(rel, "/")
	var cur []string
	links := 0
	for len(parts) > 0 {
		p := parts[0]
		parts = parts[1:]
		switch p {
		case "", ".":
			continue
		case "..":
			if len(cur) > 0 {
				cur = cur[:len(cur)-1]
			}
			continue
		}
		next := filepath.Join(u.root, filepath.Join(append(slices.Clone(cur), p)...))
		fi, err := os.Lstat(next)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			cur = append(cur, p) // a folder, or missing (made on the way)
			continue
		}
		if links++; links > maxLinks {
			return "", fmt.Errorf("more than %d symbolic links on its path", maxLinks)
		}
		t, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if strings.HasPrefix(t, "/") {
			cur = cur[:0]
		}
		parts = append(strings.Split(t, "/"), parts...)
	}
	return filepath.Join(u.root, filepath.Join(cur...)), nil
}

// dirMode is a folder's mode from its tar header: bench's user may always
// enter, list and write it (to copy and remove it); the sticky bit is kept
// (/tmp), set-group-ID dropped.
func dirMode(m int64) fs.FileMode {
	mode := fs.FileMode(m).Perm() | 0o700
	if m&0o1000 != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}

// finish gives folders their modes and times, deepest first.
func (u *unpacker) finish() error {
	names := make([]string, 0, len(u.dirs))
	for n := range u.dirs {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int { return strings.Count(b, "/") - strings.Count(a, "/") })
	for _, n := range names {
		m := u.dirs[n]
		p := filepath.Join(u.root, filepath.FromSlash(n))
		fi, err := os.Lstat(p)
		if err != nil || !fi.IsDir() {
			continue // removed by a later layer
		}
		if err := os.Chmod(p, m.mode); err != nil {
			return fmt.Errorf("folder %s: %w", n, err)
		}
		_ = os.Chtimes(p, m.mtime, m.mtime)
	}
	return nil
}
