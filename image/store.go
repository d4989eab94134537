package image

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/benchhq/bench/internal/flock"
	"github.com/benchhq/bench/internal/tree"
)

// Store keeps unpacked images, one folder per image content (its config
// digest, which names its layers' content): an image pulled under two
// tags or from two registries is unpacked once.
//
//	DIR/<config digest hex>/rootfs/     the root file system (a master: never run in)
//	DIR/<config digest hex>/image.json  Image
//
// It is safe for concurrent use by several bench processes: an image is
// unpacked under a lock, into a temporary folder renamed into place once
// whole, so a half-unpacked image is never seen.
type Store struct {
	// Dir is the store's folder, made (0700) when needed.
	Dir string
	// Source says where images come from.
	Source Source
}

// Image is an image unpacked in a Store.
type Image struct {
	// Ref is the reference it was first pulled by.
	Ref string `json:"ref"`
	// Digest is its manifest's digest.
	Digest string `json:"digest"`
	// ID is its config's digest: what the store keys it by.
	ID string `json:"id"`
	// Root is the host path of its root file system.
	Root string `json:"-"`
	// Env, WorkingDir and User are its config's.
	Env        []string `json:"env,omitempty"`
	WorkingDir string   `json:"working_dir,omitempty"`
	User       string   `json:"user,omitempty"`
	// Stats are what unpacking did.
	Stats Stats `json:"stats"`
	// Source is where it came from (Source.String).
	Source string `json:"source"`
	// UnpackedAt is when it was unpacked; Took how long pulling and
	// unpacking took.
	UnpackedAt time.Time     `json:"unpacked_at"`
	Took       time.Duration `json:"took_ns"`
	// Stale, when set, says why the reference could not be resolved now
	// (the registry's error): the image is the one it named when it was
	// last pulled into the store.
	Stale string `json:"-"`
}

const (
	rootDir   = "rootfs"
	imageFile = "image.json"
)

// Get returns the image ref names, unpacked: from the store when its
// content is there already, else pulled from the Source and unpacked.
// Reading a tag asks its registry what the tag names now (a manifest
// request, no layers); a reference by digest that is in the store needs no
// registry, but its manifest is still read to learn its config digest
// unless the store has seen that digest before.
func (s *Store) Get(ctx context.Context, ref string) (*Image, error) {
	start := time.Now()
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("image store %s: %w", s.Dir, err)
	}
	img, err := s.Source.Resolve(ctx, ref)
	if err != nil {
		// Offline, or the registry is down: the image this reference
		// named when it was last pulled, if the store has it (as Docker
		// runs a local image).
		if im, lerr := s.lookup(ref); lerr == nil {
			im.Stale = err.Error()
			return im, nil
		}
		return nil, err
	}
	id, err := img.ConfigName()
	if err != nil {
		return nil, fmt.Errorf("image %s: config digest: %w", ref, err)
	}
	defer s.remember(ref, id.Hex)
	digest, err := img.Digest()
	if err != nil {
		return nil, fmt.Errorf("image %s: digest: %w", ref, err)
	}
	key := id.Hex
	if len(key) < 12 || filepath.Base(key) != key {
		return nil, fmt.Errorf("image %s: config digest %s: not a digest bench can key by", ref, id)
	}
	if im, err := s.load(key); err == nil {
		return im, nil
	}
	lk, err := flock.Lock(ctx, filepath.Join(s.Dir, key+".lock"), flock.Exclusive)
	if err != nil {
		return nil, fmt.Errorf("image store %s: %w", s.Dir, err)
	}
	defer lk.Close()
	if im, err := s.load(key); err == nil {
		return im, nil // another process unpacked it meanwhile
	}
	tmp, err := os.MkdirTemp(s.Dir, ".tmp-"+key[:12]+"-")
	if err != nil {
		return nil, fmt.Errorf("image store %s: %w", s.Dir, err)
	}
	defer os.RemoveAll(tmp) //nolint:errcheck // gone once renamed
	root := filepath.Join(tmp, rootDir)
	if err := os.Mkdir(root, 0o755); err != nil {
		return nil, fmt.Errorf("image store %s: %w", s.Dir, err)
	}
	st, err := Unpack(ctx, img, root)
	if err != nil {
		return nil, fmt.Errorf("image %s (%s): %w", ref, s.Source, err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("image %s: config: %w", ref, err)
	}
	im := &Image{
		Ref: ref, Digest: digest.String(), ID: id.String(),
		Env: cfg.Config.Env, WorkingDir: cfg.Config.WorkingDir, User: cfg.Config.User,
		Stats: st, Source: s.Source.String(), UnpackedAt: time.Now().UTC(), Took: time.Since(start),
	}
	b, err := json.MarshalIndent(im, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(tmp, imageFile), b, 0o644); err != nil {
		return nil, fmt.Errorf("image store %s: %w", s.Dir, err)
	}
	final := filepath.Join(s.Dir, key)
	if err := os.RemoveAll(final); err != nil { // a leftover without image.json
		return nil, fmt.Errorf("image store %s: %w", s.Dir, err)
	}
	if err := os.Rename(tmp, final); err != nil {
		return nil, fmt.Errorf("image store %s: %w", s.Dir, err)
	}
	im.Root = filepath.Join(final, rootDir)
	return im, nil
}

// refsDir keeps, for each reference pulled, the key of the image it named.
const refsDir = "refs"

// refFile is the file of a reference in refsDir.
func (s *Store) refFile(ref string) string {
	h := sha256.Sum256([]byte(ref))
	return filepath.Join(s.Dir, refsDir, hex.EncodeToString(h[:]))
}

// remember records that ref named the image of key (best effort: it only
// serves when the registry cannot be reached).
func (s *Store) remember(ref, key string) {
	if _, err := os.Stat(filepath.Join(s.Dir, key, imageFile)); err != nil {
		return
	}
	if err := os.MkdirAll(filepath.Join(s.Dir, refsDir), 0o700); err != nil {
		return
	}
	tmp := s.refFile(ref) + ".tmp"
	if os.WriteFile(tmp, []byte(key), 0o600) == nil {
		_ = os.Rename(tmp, s.refFile(ref))
	}
}

// lookup is the image ref named when it was last pulled into the store.
func (s *Store) lookup(ref string) (*Image, error) {
	b, err := os.ReadFile(s.refFile(ref))
	if err != nil {
		return nil, err
	}
	key := string(b)
	if filepath.Base(key) != key || key == "" {
		return nil, fs.ErrNotExist
	}
	return s.load(key)
}

// load reads the image of key from the store.
func (s *Store) load(key string) (*Image, error) {
	dir := filepath.Join(s.Dir, key)
	b, err := os.ReadFile(filepath.Join(dir, imageFile))
	if err != nil {
		return nil, err
	}
	var im Image
	if err := json.Unmarshal(b, &im); err != nil {
		return nil, fmt.Errorf("image store: %s: %w", filepath.Join(dir, imageFile), err)
	}
	im.Root = filepath.Join(dir, rootDir)
	if fi, err := os.Stat(im.Root); err != nil || !fi.IsDir() {
		return nil, fs.ErrNotExist
	}
	return &im, nil
}

// Hold keeps im in the store until release is called: Clear leaves an
// image alone while a bench process holds it (copying it into an
// environment). It fails when im is no longer there.
func (s *Store) Hold(ctx context.Context, im *Image) (release func(), err error) {
	key := filepath.Base(filepath.Dir(im.Root))
	f, err := flock.Lock(ctx, filepath.Join(s.Dir, key+".lock"), flock.Shared)
	if err != nil {
		return nil, fmt.Errorf("image store %s: %w", s.Dir, err)
	}
	if _, err := s.load(key); err != nil {
		f.Close()
		return nil, fmt.Errorf("image %s: removed from the store %s meanwhile", im.Ref, s.Dir)
	}
	return func() { f.Close() }, nil
}

// Cleared is what Clear did.
type Cleared struct {
	// Removed counts the images removed, Freed their files' bytes.
	Removed int
	Freed   int64
	// InUse are those left alone: a bench process holds them.
	InUse []*Image
}

// Clear removes the images of the store in dir, but those a bench
// process holds or unpacks, and what cut unpacks left.
func Clear(dir string) (Cleared, error) {
	var out Cleared
	list, err := List(dir)
	if err != nil {
		return out, err
	}
	for _, im := range list {
		key := filepath.Base(filepath.Dir(im.Root))
		done, err := removeLocked(dir, key, filepath.Dir(im.Root))
		if err != nil {
			return out, err
		}
		if !done {
			out.InUse = append(out.InUse, im)
			continue
		}
		out.Removed++
		out.Freed += im.Stats.Bytes
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		// A cut unpack's folder (.tmp-KEY12-random) is old; a live
		// one is fresh.
		if strings.HasPrefix(e.Name(), ".tmp-") {
			if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > staleTmp {
				_ = tree.Remove(filepath.Join(dir, e.Name()))
			}
		}
	}
	if refs, err := os.ReadDir(filepath.Join(dir, refsDir)); err == nil {
		for _, r := range refs {
			b, err := os.ReadFile(filepath.Join(dir, refsDir, r.Name()))
			if err != nil {
				continue
			}
			if _, err := os.Stat(filepath.Join(dir, string(b), imageFile)); err != nil {
				os.Remove(filepath.Join(dir, refsDir, r.Name())) //nolint:errcheck // a stale pointer
			}
		}
	}
	return out, nil
}

// staleTmp is the age past which a temporary folder is taken for a cut
// unpack's: no unpack lasts that long.
const staleTmp = 6 * time.Hour

// removeLocked removes p, the folder of key, unless a bench process holds
// key's lock; it says whether it did.
func removeLocked(dir, key, p string) (bool, error) {
	f, err := flock.TryLock(filepath.Join(dir, key+".lock"))
	if err != nil {
		return false, fmt.Errorf("remove %s: %w", p, err)
	}
	if f == nil {
		return false, nil
	}
	defer f.Close()
	if err := tree.Remove(p); err != nil {
		return false, fmt.Errorf("remove %s: %w", p, err)
	}
	return true, nil
}

// List returns the images of the store in dir, oldest first; none when
// there is no such folder.
func List(dir string) ([]*Image, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list images in %s: %w", dir, err)
	}
	s := &Store{Dir: dir}
	var out []*Image
	for _, e := range ents {
		if !e.IsDir() || e.Name() == refsDir || strings.HasPrefix(e.Name(), ".tmp-") {
			continue
		}
		if im, err := s.load(e.Name()); err == nil {
			out = append(out, im)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].UnpackedAt.Before(out[j].UnpackedAt) })
	return out, nil
}
