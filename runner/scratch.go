package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/benchhq/bench/internal/tree"
)

// scratchMarker is the file in a run's scratch folder that names its run
// and whether it keeps its workspaces. Its owner holds a lock on it for as
// long as it runs: a scratch folder whose marker nobody holds was left by
// a bench that was killed.
const scratchMarker = ".bench-run"

// scratch is a run's scratch folder (tree.Scratch) with its marker held.
type scratch struct {
	dir    string
	marker *os.File
}

// unsafeInName matches what a run id may hold that a folder name should
// not.
var unsafeInName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// scratchPrefix is the start of the names of run's scratch folders.
func scratchPrefix(runID string) string {
	id := unsafeInName.ReplaceAllString(runID, "_")
	if len(id) > 40 {
		id = id[:40]
	}
	return "bench-run-" + id + "-"
}

// newScratch makes the scratch folder of run in parent and marks it as
// the run's, held by this process until release.
func newScratch(parent, runID string, keep bool) (*scratch, error) {
	dir, err := tree.Scratch(parent, scratchPrefix(runID))
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, scratchMarker), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		if err = lockFile(f); err == nil {
			_, err = fmt.Fprintf(f, "run %s\nkeep %t\npid %d\n", runID, keep, os.Getpid())
		}
		if err != nil {
			f.Close()
		}
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("make a scratch folder: %w", err)
	}
	return &scratch{dir: dir, marker: f}, nil
}

// release removes the marker and then the folder, when it is empty
// (kept workspaces stay), and gives the hold up.
func (s *scratch) release() {
	os.Remove(s.marker.Name())
	s.marker.Close()
	os.Remove(s.dir)
}

// leftovers lists the scratch folders in parent that earlier starts of
// run left behind: their bench was killed (nobody holds their marker) and
// they keep no workspaces. One still held, or that kept workspaces, is
// not listed. Nobody takes a leftover up again (each start makes a new
// folder), so that what is listed can be removed at leisure.
func leftovers(parent, runID, own string) []string {
	if parent == "" {
		parent = os.TempDir()
	}
	dirs, _ := filepath.Glob(filepath.Join(parent, scratchPrefix(runID)+"*"))
	var out []string
	for _, d := range dirs {
		if d == own {
			continue
		}
		f, err := os.OpenFile(filepath.Join(d, scratchMarker), os.O_RDWR, 0)
		if err != nil {
			continue // not a scratch folder of this bench, or one being made
		}
		held := tryLockFile(f) != nil
		b := make([]byte, 256)
		n, _ := f.ReadAt(b, 0)
		f.Close() // the lock with it: the folder is removed next, or left alone
		lines := strings.Split(string(b[:n]), "\n")
		if held || len(lines) < 2 || lines[0] != "run "+runID || lines[1] != "keep false" {
			continue
		}
		out = append(out, d)
	}
	return out
}
