package runner

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A scratch folder is a leftover of a run only when nobody holds it (its
// bench was killed), it is the same run's, and it keeps no workspaces.
func TestScratchLeftovers(t *testing.T) {
	parent := t.TempDir()
	mk := func(runID string, keep bool) *scratch {
		s, err := newScratch(parent, runID, keep)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(s.dir, "attempt-file"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		return s
	}
	killed := mk("r/1", false) // a run id with a slash: named safely
	killed.marker.Close()      // as a killed bench's hold ends
	kept := mk("r/1", true)
	kept.marker.Close()
	running := mk("r/1", false) // another process still running it
	other := mk("r/1-b", false) // a run whose name starts the same
	other.marker.Close()
	own := mk("r/1", false)

	got := leftovers(parent, "r/1", own.dir)
	if want := []string{killed.dir}; !slices.Equal(got, want) {
		t.Errorf("leftovers %v, want %v (kept %s, running %s, other %s)", got, want, kept.dir, running.dir, other.dir)
	}
	if filepath.Dir(killed.dir) != parent || filepath.Base(killed.dir)[:len("bench-run-r_1-")] != "bench-run-r_1-" {
		t.Errorf("scratch folder %s not named after its run", killed.dir)
	}
	own.release()
	if _, err := os.Stat(own.dir); err != nil {
		t.Errorf("a scratch folder with files in it was removed by release: %v", err)
	}
	if _, err := os.Stat(filepath.Join(own.dir, scratchMarker)); !os.IsNotExist(err) {
		t.Errorf("release left the marker: %v", err)
	}
}
