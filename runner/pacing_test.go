package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/benchhq/bench/internal/ollamatest"
	"github.com/benchhq/bench/runner"
	"github.com/benchhq/bench/tasks"
)

// pacingSuite is one task whose hidden test is `true`.
func pacingSuite(t *testing.T) *tasks.Suite {
	return writeTask(t, "format = 1\ninstruction = \"Say hello.\"\n[tests]\ncommand = \"true\"\n", map[string]string{
		"workspace/a.txt": "alpha\n", "tests/test_a.py": "\n", "solution/solve.sh": "true\n"})
}

// The tool-token measurements before the first attempt are sent at once,
// as many in flight as the plan's concurrency (the model's slots), never
// more: one after another they cost a whole run of N slots N times the
// requests' time.
func TestMeasurementsUseTheSlots(t *testing.T) {
	var inFlight, most atomic.Int64
	f := newFixture(t, func(req *api.ChatRequest) ollamatest.Reply {
		if req.Options["num_predict"] == float64(1) { // a measuring request
			n := inFlight.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			time.Sleep(50 * time.Millisecond)
			inFlight.Add(-1)
		}
		return ollamatest.Reply{Content: "done"}
	}, ollamatest.WithoutRecording())
	f.run(&runner.Plan{Model: "fake", Suite: pacingSuite(t), Attempts: 1, Concurrency: 4}, "run")
	// Eight measuring requests (no tools, all tools, six tools alone).
	if got := most.Load(); got != 4 {
		t.Errorf("at most %d measuring requests in flight at once, want 4 (the concurrency)", got)
	}
}

// An attempt's folder is removed after its slot went to the next attempt:
// the removal is not on the run's critical path. Run still waits for it.
func TestFolderRemovalIsOffTheCriticalPath(t *testing.T) {
	var seen sync.Map // seeds of the attempts that reached the model
	f := newFixture(t, func(req *api.ChatRequest) ollamatest.Reply {
		if s, ok := req.Options["seed"]; ok {
			seen.Store(s, true)
		}
		return ollamatest.Reply{Content: "done"}
	})
	release := make(chan struct{})
	var removed []string
	var mu sync.Mutex
	var calls atomic.Int32
	runner.SetRemoveAll(f.runner, func(dir string) error {
		first := calls.Add(1) == 1
		<-release
		if first {
			// The first removal goes in the background (none runs yet):
			// slow, and counted once done, it would come after the end
			// of a Run that did not wait for its removals.
			time.Sleep(200 * time.Millisecond)
		}
		err := os.RemoveAll(dir)
		mu.Lock()
		removed = append(removed, dir)
		mu.Unlock()
		return err
	})
	plan := &runner.Plan{Model: "fake", Suite: pacingSuite(t), Attempts: 2, Concurrency: 1}
	done := make(chan error, 1)
	go func() {
		_, err := f.runner.Run(context.Background(), plan, "run")
		done <- err
	}()
	// Both attempts reach the model while the first folder's removal is
	// held back.
	deadline := time.After(20 * time.Second)
	for n := 0; n < 2; {
		select {
		case err := <-done:
			t.Fatalf("run ended (%v) before its folders were removed", err)
		case <-deadline:
			close(release)
			t.Fatalf("%d of 2 attempts reached the model while a folder removal was held back", n)
		case <-time.After(10 * time.Millisecond):
		}
		n = 0
		seen.Range(func(any, any) bool { n++; return true })
	}
	select {
	case err := <-done:
		t.Fatalf("run returned (%v) before its folders were removed", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	// Each attempt's folder and its scoring folder.
	kinds := map[string]int{}
	for _, dir := range removed {
		kinds[strings.SplitN(filepath.Base(dir), "-", 3)[1]]++
	}
	if len(removed) != 4 || kinds["attempt"] != 2 || kinds["score"] != 2 {
		t.Fatalf("folders removed: %v, want two attempt folders and two scoring folders", removed)
	}
	for _, dir := range removed {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("attempt folder %s still there after Run: %v", dir, err)
		}
	}
}
