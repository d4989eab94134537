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

// Clear removes the environments of a cache folder ("" for DefaultDir)
// that keep says to remove (nil: all of them), with the remains of cut
// preparations, and returns how many it removed and the bytes freed. An
// environment being prepared (its lock held) is left alone.
func Clear(dir string, remove func(Listed) bool) (int, int64, error) {
	if dir == "" {
		dir = DefaultDir()
	}
	list, err := List(dir)
	if err != nil {
		return 0, 0, err
	}
	n, freed := 0, int64(0)
	for _, l := range list {
		if remove != nil && !remove(l) {
			continue
		}
		if err := removeLocked(dir, l.Key, l.Dir); err != nil {
			return n, freed, err
		}
		n++
		freed += l.Bytes
	}
	if remove == nil {
		// Views of runs that ended without removing them (a killed bench):
		// those older than any attempt lasts.
		views, _ := os.ReadDir(filepath.Join(dir, viewsDir))
		for _, v := range views {
			if fi, err := v.Info(); err == nil && time.Since(fi.ModTime()) > staleView {
				tree.Remove(filepath.Join(dir, viewsDir, v.Name()))
			}
		}
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if key, _, ok := strings.Cut(e.Name(), ".tmp-"); ok {
				if err := removeLocked(dir, key, filepath.Join(dir, e.Name())); err != nil {
					return n, freed, err
				}
			}
		}
	}
	return n, freed, nil
}

// staleView is the age past which a view is taken for one a killed bench
// left: no attempt or scoring run lasts that long with bench's defaults.
const staleView = 6 * time.Hour

// removeLocked removes p, one of key's folders, unless a preparation of
// key holds its lock.
func removeLocked(dir, key, p string) error {
	f, err := os.OpenFile(filepath.Join(dir, key+".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return fmt.Errorf("remove %s: %w", p, err)
	}
	defer f.Close()
	if err := lockNow(f); err != nil {
		return nil // being prepared: left alone
	}
	defer unlock(f)
	if err := tree.Remove(p); err != nil {
		return fmt.Errorf("remove %s: %w", p, err)
	}
	return nil
}
