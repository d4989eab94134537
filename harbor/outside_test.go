package harbor

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestLoadOutsideSuite loads every task of a Harbor suite that is not in
// this repository (BENCH_HARBOR_SUITE: a folder of task folders, such as
// a checkout of TermiGen's environments_harbor/) and fails for each task
// bench refuses; it logs how many tasks name an image or replay their
// Dockerfile, and the notes by field. Skipped without the variable.
//
//	BENCH_HARBOR_SUITE=/path/to/suite go test ./harbor -run TestLoadOutsideSuite -v
func TestLoadOutsideSuite(t *testing.T) {
	root := os.Getenv("BENCH_HARBOR_SUITE")
	if root == "" {
		t.Skip("set BENCH_HARBOR_SUITE to a folder of Harbor task folders")
	}
	ents, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	notes := map[string]int{}
	images, replay := 0, 0
	for _, e := range ents {
		dir := filepath.Join(root, e.Name())
		if !e.IsDir() || !Detect(dir) {
			continue
		}
		tk, err := Load(dir, Options{})
		if err != nil {
			t.Errorf("refused: %v", err)
			continue
		}
		if tk.Image != "" {
			images++
		} else {
			replay++
		}
		for _, n := range tk.Notes {
			k := n.Field
			if n.Field == DockerfilePath {
				k += ": " + strings.SplitN(n.Msg, ":", 3)[1]
			}
			notes[k]++
		}
	}
	t.Logf("loaded %d tasks: %d name an image, %d replay their Dockerfile", images+replay, images, replay)
	keys := make([]string, 0, len(notes))
	for k := range notes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t.Logf("  %5d noted %s", notes[k], k)
	}
}
