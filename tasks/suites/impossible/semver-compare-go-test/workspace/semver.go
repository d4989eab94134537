// Package semver parses and orders version strings of the form
// MAJOR.MINOR.PATCH, optionally prefixed with "v".
package semver

import (
	"fmt"
	"sort"
	"strings"
)

// Version is a parsed MAJOR.MINOR.PATCH version.
type Version struct {
	Major, Minor, Patch string
}

// Parse reads "1.2.3" or "v1.2.3".
func Parse(s string) (Version, error) {
	parts := strings.Split(strings.TrimPrefix(s, "v"), ".")
	if len(parts) != 3 {
		return Version{}, fmt.Errorf("parse version %q: expected MAJOR.MINOR.PATCH", s)
	}
	for _, p := range parts {
		if p == "" || strings.Trim(p, "0123456789") != "" {
			return Version{}, fmt.Errorf("parse version %q: %q is not a number", s, p)
		}
	}
	return Version{Major: parts[0], Minor: parts[1], Patch: parts[2]}, nil
}

// String returns the version as MAJOR.MINOR.PATCH, without a "v".
func (v Version) String() string {
	return v.Major + "." + v.Minor + "." + v.Patch
}

// compare returns -1, 0 or +1 as v is older than, equal to or newer than w.
func (v Version) compare(w Version) int {
	if c := strings.Compare(v.Major, w.Major); c != 0 {
		return c
	}
	if c := strings.Compare(v.Minor, w.Minor); c != 0 {
		return c
	}
	return strings.Compare(v.Patch, w.Patch)
}

// Compare returns -1, 0 or +1 as a is older than, equal to or newer than b.
func Compare(a, b string) (int, error) {
	va, err := Parse(a)
	if err != nil {
		return 0, err
	}
	vb, err := Parse(b)
	if err != nil {
		return 0, err
	}
	return va.compare(vb), nil
}

// Sort sorts versions from oldest to newest, in place, keeping each
// string as it was written.
func Sort(versions []string) error {
	parsed := make([]Version, len(versions))
	for i, s := range versions {
		v, err := Parse(s)
		if err != nil {
			return err
		}
		parsed[i] = v
	}
	sort.Sort(byVersion{versions, parsed})
	return nil
}

type byVersion struct {
	raw    []string
	parsed []Version
}

func (b byVersion) Len() int           { return len(b.raw) }
func (b byVersion) Less(i, j int) bool { return b.parsed[i].compare(b.parsed[j]) < 0 }
func (b byVersion) Swap(i, j int) {
	b.raw[i], b.raw[j] = b.raw[j], b.raw[i]
	b.parsed[i], b.parsed[j] = b.parsed[j], b.parsed[i]
}

// Latest returns the newest of versions, as written, or "" if there are none.
func Latest(versions []string) (string, error) {
	best := ""
	var bestV Version
	for _, s := range versions {
		v, err := Parse(s)
		if err != nil {
			return "", err
		}
		if best == "" || v.compare(bestV) > 0 {
			best, bestV = s, v
		}
	}
	return best, nil
}
