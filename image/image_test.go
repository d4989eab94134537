package image

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/compression"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// ent is one entry of a test layer.
type ent struct {
	name string
	typ  byte // tar.TypeReg when 0
	body string
	link string
	mode int64
}

// testLayer makes a gzip-compressed layer of entries.
func testLayer(t *testing.T, ents ...ent) v1.Layer {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range ents {
		h := &tar.Header{Name: e.name, Typeflag: e.typ, Linkname: e.link, Mode: e.mode, ModTime: time.Unix(1700000000, 0)}
		if h.Typeflag == 0 {
			h.Typeflag = tar.TypeReg
		}
		if h.Mode == 0 {
			h.Mode = 0o644
			if h.Typeflag == tar.TypeDir {
				h.Mode = 0o755
			}
		}
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(e.body))
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(e.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil })
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func testImage(t *testing.T, layers ...v1.Layer) v1.Image {
	t.Helper()
	img, err := mutate.AppendLayers(empty.Image, layers...)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", "amd64"
	cf.Config.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8"}
	cf.Config.WorkingDir = "/app"
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// baseImage has what a real image has: folders, files, links of every
// kind, a fifo, a read-only folder, then a second layer with whiteouts.
func baseImage(t *testing.T) v1.Image {
	return testImage(t,
		testLayer(t,
			ent{name: "usr/", typ: tar.TypeDir},
			ent{name: "usr/bin/", typ: tar.TypeDir},
			ent{name: "usr/bin/tool", body: "#!/bin/sh\necho tool\n", mode: 0o4755},
			ent{name: "bin", typ: tar.TypeSymlink, link: "usr/bin"},
			ent{name: "etc/", typ: tar.TypeDir},
			ent{name: "etc/mtab", typ: tar.TypeSymlink, link: "/proc/self/mounts"},
			ent{name: "etc/os-release", body: "ID=bench\n"},
			ent{name: "etc/hard", typ: tar.TypeLink, link: "etc/os-release"},
			ent{name: "etc/gone", body: "lower"},
			ent{name: "etc/ro/", typ: tar.TypeDir, mode: 0o555},
			ent{name: "etc/ro/f", body: "in a read-only folder"},
			ent{name: "opt/cache/", typ: tar.TypeDir},
			ent{name: "opt/cache/old", body: "old"},
			ent{name: "run/fifo", typ: tar.TypeFifo, mode: 0o600},
			ent{name: "dev/null", typ: tar.TypeChar},
			ent{name: "tmp/", typ: tar.TypeDir, mode: 0o1777},
		),
		testLayer(t,
			ent{name: "etc/.wh.gone"},
			ent{name: "opt/cache/new", body: "new"},
			ent{name: "opt/cache/.wh..wh..opq"},
			ent{name: "bin/added", body: "through the bin link"},
			ent{name: "etc/os-release", body: "ID=bench2\n"},
			ent{name: "app/", typ: tar.TypeDir},
		),
	)
}

// serve runs an in-process registry behind wrap (nil: none) and pushes
// img to it as repo:tag; it returns the registry's host and the reference.
func serve(t *testing.T, img v1.Image, wrap func(http.Handler) http.Handler) (host, ref string) {
	t.Helper()
	var h http.Handler = registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	if wrap != nil {
		h = wrap(h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	host = strings.TrimPrefix(srv.URL, "http://")
	ref = host + "/bench/mini:1"
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(r, img, remote.WithAuth(basicAuth{})); err != nil {
		t.Fatal(err)
	}
	return host, ref
}

type basicAuth struct{}

type authConfig = authn.AuthConfig

func (basicAuth) Authorization() (*authConfig, error) {
	return &authConfig{Username: "bench", Password: "secret"}, nil
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestStoreGetFromRegistry(t *testing.T) {
	img := baseImage(t)
	_, ref := serve(t, img, nil)
	s := &Store{Dir: t.TempDir()}
	im, err := s.Get(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	root := im.Root
	checks := map[string]string{
		"etc/os-release": "ID=bench2\n",
		"etc/hard":       "ID=bench\n", // a hard link to the lower layer's file, which the upper replaced
		"usr/bin/added":  "through the bin link",
		"opt/cache/new":  "new",
		"etc/ro/f":       "in a read-only folder",
		"usr/bin/tool":   "#!/bin/sh\necho tool\n",
	}
	for p, want := range checks {
		if got := read(t, filepath.Join(root, p)); got != want {
			t.Errorf("%s: got %q, want %q", p, got, want)
		}
	}
	for _, p := range []string{"etc/gone", "opt/cache/old", "dev/null"} {
		if _, err := os.Lstat(filepath.Join(root, p)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: still there (%v)", p, err)
		}
	}
	if l, _ := os.Readlink(filepath.Join(root, "etc/mtab")); l != "/proc/self/mounts" {
		t.Errorf("etc/mtab links to %q", l)
	}
	if fi, err := os.Lstat(filepath.Join(root, "bin")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("bin is no longer a link: %v", err)
	}
	if fi, err := os.Lstat(filepath.Join(root, "run/fifo")); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("run/fifo: %v", err)
	}
	if fi, _ := os.Stat(filepath.Join(root, "usr/bin/tool")); fi.Mode()&os.ModeSetuid != 0 || fi.Mode().Perm() != 0o755 {
		t.Errorf("usr/bin/tool mode %s: want 0755 without set-user-ID", fi.Mode())
	}
	if fi, _ := os.Stat(filepath.Join(root, "tmp")); fi.Mode()&os.ModeSticky == 0 {
		t.Errorf("tmp lost its sticky bit: %s", fi.Mode())
	}
	if fi, _ := os.Stat(filepath.Join(root, "etc/ro")); fi.Mode().Perm() != 0o755 {
		t.Errorf("etc/ro mode %s: want 0755 (0555 and bench's user may write)", fi.Mode())
	}
	if im.WorkingDir != "/app" || len(im.Env) != 2 || im.Stats.Layers != 2 || im.Stats.Skipped != 1 {
		t.Errorf("image: %+v", im)
	}
	wantID, _ := img.ConfigName()
	if im.ID != wantID.String() {
		t.Errorf("id %s, want %s", im.ID, wantID)
	}

	// Cached by content: the same image by digest is not unpacked again.
	byDigest := strings.TrimSuffix(ref, ":1") + "@" + im.Digest
	again, err := s.Get(context.Background(), byDigest)
	if err != nil {
		t.Fatal(err)
	}
	if again.Root != im.Root || !again.UnpackedAt.Equal(im.UnpackedAt) {
		t.Errorf("unpacked again: %+v", again)
	}
}

func TestSources(t *testing.T) {
	img := baseImage(t)
	ctx := context.Background()

	t.Run("mirror", func(t *testing.T) {
		host, _ := serve(t, img, nil)
		s := &Store{Dir: t.TempDir(), Source: Source{Mirror: host}}
		if _, err := s.Get(ctx, "registry.invalid/bench/mini:1"); err != nil {
			t.Fatal(err)
		}
		if _, err := (&Store{Dir: t.TempDir()}).Get(ctx, "registry.invalid/bench/mini:1"); err == nil {
			t.Fatal("pulled from a registry that does not exist")
		}
	})

	t.Run("oci layout", func(t *testing.T) {
		dir := t.TempDir()
		p, err := layout.Write(dir, empty.Index)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": "1"})); err != nil {
			t.Fatal(err)
		}
		s := &Store{Dir: t.TempDir(), Source: Source{Layout: dir}}
		im, err := s.Get(ctx, "example.org/bench/mini:1")
		if err != nil {
			t.Fatal(err)
		}
		if read(t, filepath.Join(im.Root, "etc/os-release")) != "ID=bench2\n" {
			t.Error("wrong content")
		}
		if _, err := s.Get(ctx, "example.org/bench/mini:2"); err == nil || !strings.Contains(err.Error(), "not in the OCI layout") {
			t.Errorf("a missing tag: %v", err)
		}
	})

	t.Run("docker save", func(t *testing.T) {
		f := filepath.Join(t.TempDir(), "mini.tar")
		tag, _ := name.NewTag("example.org/bench/mini:1")
		if err := tarball.WriteToFile(f, tag, img); err != nil {
			t.Fatal(err)
		}
		s := &Store{Dir: t.TempDir(), Source: Source{Archive: f}}
		im, err := s.Get(ctx, "example.org/bench/mini:1")
		if err != nil {
			t.Fatal(err)
		}
		if read(t, filepath.Join(im.Root, "usr/bin/added")) != "through the bin link" {
			t.Error("wrong content")
		}
	})
}

func TestAuth(t *testing.T) {
	img := baseImage(t)
	needAuth := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if u, p, ok := r.BasicAuth(); !ok || u != "bench" || p != "secret" {
				w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			h.ServeHTTP(w, r)
		})
	}
	host, ref := serve(t, img, needAuth)
	ctx := context.Background()

	t.Setenv("DOCKER_CONFIG", t.TempDir())
	s := &Store{Dir: t.TempDir()}
	_, err := s.Get(ctx, ref)
	if err == nil || !strings.Contains(err.Error(), "401") && !strings.Contains(strings.ToLower(err.Error()), "unauthorized") {
		t.Fatalf("no credentials: got %v, want an authorization error", err)
	}
	if !strings.Contains(err.Error(), "bench/mini:1") {
		t.Errorf("the error does not name the image: %v", err)
	}

	// The Docker configuration's credentials, through DefaultKeychain.
	cfg := fmt.Sprintf(`{"auths": {%q: {"auth": %q}}}`, host, base64.StdEncoding.EncodeToString([]byte("bench:secret")))
	if err := os.WriteFile(filepath.Join(os.Getenv("DOCKER_CONFIG"), "config.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, ref); err != nil {
		t.Fatalf("with the Docker configuration's credentials: %v", err)
	}
}

func TestDigestMismatch(t *testing.T) {
	img := baseImage(t)
	layers, _ := img.Layers()
	bad, _ := layers[1].Digest()
	corrupt := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/blobs/"+bad.String()) {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, r)
				b := rec.Body.Bytes()
				if len(b) > 40 {
					b[len(b)-30] ^= 0xff
				}
				for k, v := range rec.Header() {
					w.Header()[k] = v
				}
				w.WriteHeader(rec.Code)
				w.Write(b)
				return
			}
			h.ServeHTTP(w, r)
		})
	}
	_, ref := serve(t, img, corrupt)
	s := &Store{Dir: t.TempDir()}
	_, err := s.Get(context.Background(), ref)
	if err == nil {
		t.Fatal("a corrupt layer was accepted")
	}
	if !errors.Is(err, ErrDigest) || !strings.Contains(err.Error(), "bench/mini:1") {
		t.Errorf("got %v, want a digest mismatch naming the image", err)
	}
	if ents, _ := os.ReadDir(s.Dir); len(ents) != 1 { // the lock file only
		t.Errorf("the store kept something: %v", ents)
	}

	// A config whose diff_ids do not match the layers.
	cf, _ := img.ConfigFile()
	cf = cf.DeepCopy()
	cf.RootFS.DiffIDs[0] = cf.RootFS.DiffIDs[1]
	lying, err := mutate.ConfigFile(img, cf)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Unpack(context.Background(), lying, t.TempDir()); !errors.Is(err, ErrDigest) {
		t.Errorf("a wrong diff_id: got %v, want ErrDigest", err)
	}
}

func TestUnpackRefusesEscapes(t *testing.T) {
	outside := t.TempDir()
	cases := []struct {
		name string
		ents []ent
	}{
		{"dot-dot name", []ent{{name: "../evil", body: "x"}}},
		{"dot-dot inside name", []ent{{name: "a/../../evil", body: "x"}}},
		{"relative link out", []ent{{name: "a/", typ: tar.TypeDir}, {name: "a/l", typ: tar.TypeSymlink, link: "../../etc"}}},
		{"hard link out", []ent{{name: "h", typ: tar.TypeLink, link: "../" + filepath.Base(outside) + "/f"}}},
		{"hard link to a host file", []ent{{name: "h", typ: tar.TypeLink, link: "/etc/hostname-not-in-image"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "root")
			os.Mkdir(root, 0o755)
			_, err := Unpack(context.Background(), testImage(t, testLayer(t, c.ents...)), root)
			var ee *EscapeError
			if !errors.As(err, &ee) {
				t.Fatalf("got %v, want an EscapeError", err)
			}
			if !strings.Contains(err.Error(), "refused") || !strings.Contains(err.Error(), "layer 0") {
				t.Errorf("message: %v", err)
			}
		})
	}

	// Links with absolute targets stay inside: written through, they
	// resolve against the root, never the host.
	root := filepath.Join(t.TempDir(), "root")
	os.Mkdir(root, 0o755)
	img := testImage(t, testLayer(t,
		ent{name: "out", typ: tar.TypeSymlink, link: outside},
		ent{name: "out/pwned", body: "x"},
		ent{name: "up", typ: tar.TypeSymlink, link: "/.."},
		ent{name: "up/etc-pwned", body: "x"},
		ent{name: "loop", typ: tar.TypeSymlink, link: "loop"},
	))
	if _, err := Unpack(context.Background(), img, root); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("wrote outside the root: %v", ents)
	}
	if read(t, filepath.Join(root, outside, "pwned")) != "x" || read(t, filepath.Join(root, "etc-pwned")) != "x" {
		t.Error("the files written through links are not inside the root")
	}
	loopImg := testImage(t, testLayer(t, ent{name: "loop", typ: tar.TypeSymlink, link: "loop"}, ent{name: "loop/x", body: "x"}))
	root2 := filepath.Join(t.TempDir(), "root")
	os.Mkdir(root2, 0o755)
	if _, err := Unpack(context.Background(), loopImg, root2); err == nil || !strings.Contains(err.Error(), "symbolic links") {
		t.Errorf("a link loop: %v", err)
	}
}

func TestUnpackOwners(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("owners are kept only when bench runs as root")
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	tw.WriteHeader(&tar.Header{Name: "f", Typeflag: tar.TypeReg, Mode: 0o644, Uid: 1234, Gid: 5678})
	tw.Close()
	b := buf.Bytes()
	l, _ := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil })
	root := t.TempDir()
	if _, err := Unpack(context.Background(), testImage(t, l), root); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Lstat(filepath.Join(root, "f"))
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != 1234 || st.Gid != 5678 {
		t.Errorf("owner %d:%d, want 1234:5678", st.Uid, st.Gid)
	}
}

func TestCopy(t *testing.T) {
	img := baseImage(t)
	root := filepath.Join(t.TempDir(), "root")
	os.Mkdir(root, 0o755)
	if _, err := Unpack(context.Background(), img, root); err != nil {
		t.Fatal(err)
	}
	view := filepath.Join(t.TempDir(), "view")
	if err := Copy(root, view); err != nil {
		t.Fatal(err)
	}
	if read(t, filepath.Join(view, "etc/ro/f")) != "in a read-only folder" {
		t.Error("content")
	}
	if l, _ := os.Readlink(filepath.Join(view, "bin")); l != "usr/bin" {
		t.Errorf("bin links to %q", l)
	}
	// A write to the view leaves the root alone.
	if err := os.WriteFile(filepath.Join(view, "etc/os-release"), []byte("changed"), 0o644); err != nil {
		t.Fatal(err)
	}
	if read(t, filepath.Join(root, "etc/os-release")) != "ID=bench2\n" {
		t.Error("the view wrote through to the root")
	}
	if fi, _ := os.Stat(filepath.Join(view, "tmp")); fi.Mode()&os.ModeSticky == 0 {
		t.Errorf("tmp: %s", fi.Mode())
	}
}

// zstd and uncompressed layers unpack as gzip ones do, their digests
// checked.
func TestUnpackCompressions(t *testing.T) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	tw.WriteHeader(&tar.Header{Name: "z", Typeflag: tar.TypeReg, Mode: 0o644, Size: 4})
	tw.Write([]byte("zstd"))
	tw.Close()
	b := buf.Bytes()
	open := func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	zl, err := tarball.LayerFromOpener(open, tarball.WithCompression(compression.ZStd))
	if err != nil {
		t.Fatal(err)
	}
	plain := static.NewLayer(b, types.OCIUncompressedLayer)
	for name, l := range map[string]v1.Layer{"zstd": zl, "uncompressed": plain} {
		root := t.TempDir()
		if _, err := Unpack(context.Background(), testImage(t, l), root); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if read(t, filepath.Join(root, "z")) != "zstd" {
			t.Errorf("%s: wrong content", name)
		}
	}
}

// A reference the registry cannot resolve now (offline) is the image it
// named when last pulled, if the store has it; never one it never pulled.
func TestStoreOffline(t *testing.T) {
	img := baseImage(t)
	var h http.Handler = registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(h)
	ref := strings.TrimPrefix(srv.URL, "http://") + "/bench/mini:1"
	r, _ := name.ParseReference(ref)
	if err := remote.Write(r, img); err != nil {
		t.Fatal(err)
	}
	s := &Store{Dir: t.TempDir()}
	ctx := context.Background()
	first, err := s.Get(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	srv.Close()
	again, err := s.Get(ctx, ref)
	if err != nil {
		t.Fatalf("offline: %v", err)
	}
	if again.Root != first.Root || again.ID != first.ID || again.Stale == "" {
		t.Errorf("offline: %+v", again)
	}
	if _, err := s.Get(ctx, strings.Replace(ref, "mini:1", "other:1", 1)); err == nil {
		t.Error("an image never pulled was found offline")
	}
}
