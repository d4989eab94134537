// Package image brings container images to bench without Docker: it pulls
// an image by reference with go-containerregistry (from its registry, an
// operator's mirror, an OCI image layout folder or a `docker save`
// tarball; credentials from the Docker configuration), verifies every
// digest, and unpacks the layers into a root file system that bench's
// sandbox can run in. Root file systems are cached by content (the
// image's config digest), so an image is unpacked once whatever tag or
// registry it came from.
//
// Unpacking is safe against hostile layers: an entry whose name climbs out
// of the root ("../"), a symbolic link whose relative target does, or a
// hard link to a path outside the image is refused; symbolic links met on
// the way to an entry are followed as if the root were "/", so nothing is
// written outside it; set-user-ID and set-group-ID bits are dropped.
package image

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Source says where images come from. The zero Source pulls from each
// reference's own registry with the Docker configuration's credentials.
type Source struct {
	// Mirror, when set, is a registry ("host[:port]") asked for every
	// image instead of the reference's own; the repository and tag or
	// digest stay the reference's.
	Mirror string
	// Insecure lets a registry be reached over plain HTTP (a local
	// mirror). localhost and 127.0.0.1 are always allowed plain HTTP.
	Insecure bool
	// Layout, when set, is an OCI image layout folder to take images from
	// instead of a registry: an image is found by its reference name
	// annotation (the whole reference, or its tag) or its digest.
	Layout string
	// Archive, when set, is a `docker save` tarball to take images from
	// instead of a registry: an image is found by its repository tag, or
	// is the archive's only image.
	Archive string
	// Keychain gives registry credentials; nil is authn.DefaultKeychain
	// (the Docker configuration: $DOCKER_CONFIG or ~/.docker/config.json,
	// and its credential helpers).
	Keychain authn.Keychain
	// Transport carries registry requests; nil is http.DefaultTransport.
	Transport http.RoundTripper
	// Platform picks an image of a multi-platform index; the zero value
	// is linux on bench's own architecture.
	Platform v1.Platform
}

// String describes the source for logs and errors.
func (s Source) String() string {
	switch {
	case s.Layout != "":
		return "OCI layout " + s.Layout
	case s.Archive != "":
		return "docker save archive " + s.Archive
	case s.Mirror != "":
		return "registry mirror " + s.Mirror
	}
	return "registry"
}

func (s Source) platform() v1.Platform {
	if s.Platform.OS == "" {
		return v1.Platform{OS: "linux", Architecture: runtime.GOARCH}
	}
	return s.Platform
}

// Resolve finds the image ref names in the source. It reads only the
// image's manifest and config; its layers are read when unpacked.
func (s Source) Resolve(ctx context.Context, ref string) (v1.Image, error) {
	var opts []name.Option
	if s.Insecure {
		opts = append(opts, name.Insecure)
	}
	r, err := name.ParseReference(ref, opts...)
	if err != nil {
		return nil, fmt.Errorf("image %q: not an image reference: %w", ref, err)
	}
	switch {
	case s.Layout != "":
		return s.fromLayout(r)
	case s.Archive != "":
		return s.fromArchive(r)
	}
	if s.Mirror != "" {
		reg, err := name.NewRegistry(s.Mirror, opts...)
		if err != nil {
			return nil, fmt.Errorf("registry mirror %q: %w", s.Mirror, err)
		}
		switch v := r.(type) {
		case name.Tag:
			v.Repository.Registry = reg
			r = v
		case name.Digest:
			v.Repository.Registry = reg
			r = v
		}
	}
	kc := s.Keychain
	if kc == nil {
		kc = authn.DefaultKeychain
	}
	ro := []remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(kc), remote.WithPlatform(s.platform())}
	if s.Transport != nil {
		ro = append(ro, remote.WithTransport(s.Transport))
	}
	// By digest, go-containerregistry checks the manifest against it.
	img, err := remote.Image(r, ro...)
	if err != nil {
		return nil, fmt.Errorf("pull image %s from %s: %w", r, r.Context().RegistryStr(), err)
	}
	return img, nil
}

// fromLayout finds r in an OCI image layout.
func (s Source) fromLayout(r name.Reference) (v1.Image, error) {
	p, err := layout.FromPath(s.Layout)
	if err != nil {
		return nil, fmt.Errorf("image %s: OCI layout %s: %w", r, s.Layout, err)
	}
	idx, err := p.ImageIndex()
	if err != nil {
		return nil, fmt.Errorf("image %s: OCI layout %s: %w", r, s.Layout, err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, fmt.Errorf("image %s: OCI layout %s: %w", r, s.Layout, err)
	}
	var names []string
	for _, d := range m.Manifests {
		n := d.Annotations["org.opencontainers.image.ref.name"]
		full := d.Annotations["io.containerd.image.name"]
		names = append(names, n)
		match := false
		switch v := r.(type) {
		case name.Digest:
			match = d.Digest.String() == v.DigestStr()
		case name.Tag:
			match = n == v.TagStr() || n == r.String() || n == r.Name() || full == r.Name() || full == r.String()
		}
		if !match {
			continue
		}
		if d.MediaType.IsIndex() {
			child, err := idx.ImageIndex(d.Digest)
			if err != nil {
				return nil, fmt.Errorf("image %s: OCI layout %s: %w", r, s.Layout, err)
			}
			return pickPlatform(child, s.platform(), r)
		}
		img, err := idx.Image(d.Digest)
		if err != nil {
			return nil, fmt.Errorf("image %s: OCI layout %s: %w", r, s.Layout, err)
		}
		return img, nil
	}
	return nil, fmt.Errorf("image %s: not in the OCI layout %s (its images: %s)", r, s.Layout, strings.Join(names, ", "))
}

// pickPlatform takes the image of platform p from an index.
func pickPlatform(idx v1.ImageIndex, p v1.Platform, r name.Reference) (v1.Image, error) {
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, fmt.Errorf("image %s: %w", r, err)
	}
	for _, d := range m.Manifests {
		if d.Platform != nil && d.Platform.Satisfies(p) && d.MediaType.IsImage() {
			return idx.Image(d.Digest)
		}
	}
	return nil, fmt.Errorf("image %s: no image for %s in its index", r, p)
}

// fromArchive finds r in a `docker save` tarball.
func (s Source) fromArchive(r name.Reference) (v1.Image, error) {
	var tag *name.Tag
	if t, ok := r.(name.Tag); ok {
		tag = &t
	}
	img, err := tarball.ImageFromPath(s.Archive, tag)
	if err != nil && tag != nil {
		// An archive of one image made without a tag.
		if one, err2 := tarball.ImageFromPath(s.Archive, nil); err2 == nil {
			return one, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("image %s: docker save archive %s: %w", r, s.Archive, err)
	}
	if d, ok := r.(name.Digest); ok {
		got, err := img.Digest()
		if err != nil {
			return nil, fmt.Errorf("image %s: docker save archive %s: %w", r, s.Archive, err)
		}
		if got.String() != d.DigestStr() {
			return nil, fmt.Errorf("image %s: docker save archive %s holds %s: %w", r, s.Archive, got, ErrDigest)
		}
	}
	return img, nil
}

// ErrDigest is a digest that does not match the content it names.
var ErrDigest = errors.New("digest mismatch")
