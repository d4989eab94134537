package environment

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/benchhq/bench/internal/tree"
)

// Listed is one environment in a cache folder.
type Listed struct {
	Meta
	// Dir is its folder.
	Dir string
}

// List reads the prepared environments of a cache folder ("" for
// DefaultDir), sorted by task and then by when they were prepared. A
// folder that is not one (a preparation that was cut short) is not listed;
// Clear removes it.
func List(dir string) ([]Listed, error) {
	if dir == "" {
		dir = DefaultDir()
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list environments in %s: %w", dir, err)
	}
	c := &Cache{Dir: dir}
	var out []Listed
	for _, e := range entries {
		if !e.IsDir() || strings.Contains(e.Name(), ".tmp-") {
			continue
		}
		env, err := c.load(e.Name())
		if err != nil {
			continue
		}
		out = append(out, Listed{Meta: env.Meta, Dir: env.Dir})
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
	// Removed counts the environments removed, Freed their bytes.
	Removed int
	Freed   int64
	// InUse are those left alone: a run or a preparation holds them.
	InUse []Listed
}

// Clear removes the environments of a cache folder ("" for DefaultDir)
// that remove says to remove (nil: all of them), with the remains of cut
// preparations. An environment in use (a running bench holds it, or is
// preparing it) is left alone and listed in InUse.
func Clear(dir string, remove func(Listed) bool) (Cleared, error) {
	var out Cleared
	if dir == "" {
		dir = DefaultDir()
	}
	list, err := List(dir)
	if err != nil {
		return out, err
	}
	for _, l := range list {
		if remove != nil && !remove(l) {
			continue
		}
		done, err := removeLocked(dir, l.Key, l.Dir)
		if err != nil {
			return out, err
		}
		if !done {
			out.InUse = append(out.InUse, l)
			continue
		}
		out.Removed++
		out.Freed += l.Bytes
	}
	if remove == nil {
		// Views of runs that ended without removing them (a killed bench):
		// those older than any attempt lasts, of an environment no bench
		// holds (a view is named key-layer-random).
		views, _ := os.ReadDir(filepath.Join(dir, viewsDir))
		for _, v := range views {
			fi, err := v.Info()
			if err != nil || time.Since(fi.ModTime()) <= staleView {
				continue
			}
			p := filepath.Join(dir, viewsDir, v.Name())
			key := v.Name()
			for range 2 {
				if i := strings.LastIndex(key, "-"); i > 0 {
					key = key[:i]
				}
			}
			if _, err := removeLocked(dir, key, p); err != nil {
				return out, err
			}
		}
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if key, _, ok := strings.Cut(e.Name(), ".tmp-"); ok {
				if _, err := removeLocked(dir, key, filepath.Join(dir, e.Name())); err != nil {
					return out, err
				}
			}
		}
	}
	return out, nil
}

// SizeText words a size in bytes, as bench shows an environment's.
func SizeText(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// staleView is the age past which a view is taken for one a killed bench
// left: no attempt or scoring run lasts that long with bench's defaults.
const staleView = 6 * time.Hour

// removeLocked removes p, one of key's folders, unless a bench process
// holds its lock (preparing it, or using it); it says whether it did.
func removeLocked(dir, key, p string) (bool, error) {
	f, err := os.OpenFile(filepath.Join(dir, key+".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return false, fmt.Errorf("remove %s: %w", p, err)
	}
	defer f.Close()
	if err := lockNow(f); err != nil {
		return false, nil // in use: left alone
	}
	defer unlock(f)
	if err := tree.Remove(p); err != nil {
		return false, fmt.Errorf("remove %s: %w", p, err)
	}
	return true, nil
}
