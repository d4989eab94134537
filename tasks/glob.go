package tasks

import (
	"fmt"
	"path"
	"strings"
)

// MatchGlob reports whether a slash-separated path relative to a workspace
// root, or one of the folders above it, matches a glob. A glob without a
// slash matches a name at any depth ("*.lock"); one with a slash is
// anchored at the root ("tests/**"); ** matches any number of folders; a
// glob that matches a folder covers everything under it. The same rule
// serves a task's [tests] result and a profile's deny_write.
func MatchGlob(glob, name string) bool {
	glob = strings.TrimSuffix(glob, "/")
	segs := strings.Split(name, "/")
	if !strings.Contains(glob, "/") {
		for _, s := range segs {
			if ok, _ := path.Match(glob, s); ok {
				return true
			}
		}
		return false
	}
	pat := strings.Split(strings.TrimPrefix(glob, "/"), "/")
	for i := 1; i <= len(segs); i++ {
		if matchSegs(pat, segs[:i]) {
			return true
		}
	}
	return false
}

// matchSegs matches path segments against glob segments, where "**"
// stands for any number of segments.
func matchSegs(pat, segs []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for k := 0; k <= len(segs); k++ {
				if matchSegs(pat[1:], segs[k:]) {
					return true
				}
			}
			return false
		}
		if len(segs) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], segs[0]); !ok {
			return false
		}
		pat, segs = pat[1:], segs[1:]
	}
	return len(segs) == 0
}

// CheckGlob says what is wrong with a glob of MatchGlob, or "".
func CheckGlob(g string) string {
	if strings.TrimSpace(g) == "" {
		return "empty glob"
	}
	for _, s := range strings.Split(strings.Trim(g, "/"), "/") {
		if s == ".." || s == "." {
			return fmt.Sprintf("%q: a glob is relative to the workspace root and may not hold . or .. segments", g)
		}
		if s == "**" {
			continue
		}
		if _, err := path.Match(s, ""); err != nil {
			return fmt.Sprintf("%q is not a valid glob: %v", g, err)
		}
	}
	return ""
}
