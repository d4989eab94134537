package runner_test

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/benchhq/bench/internal/ollamatest"
	"github.com/benchhq/bench/runner"
)

// Without a terminal, a run says each attempt as it finishes: a 17-minute
// run printed nothing until the end.
func TestRunWritesALinePerAttempt(t *testing.T) {
	f := newFixture(t, solveRecipe(t))
	var lines bytes.Buffer
	f.runner.Lines = &lines
	f.run(&runner.Plan{Model: "fake", Suite: loadTask(t, "recipe-trailing-dot"), Attempts: 3}, "r1")
	got := strings.Split(strings.TrimSpace(lines.String()), "\n")
	if len(got) != 3 {
		t.Fatalf("%d lines, want 3:\n%s", len(got), lines.String())
	}
	re := regexp.MustCompile(`^attempt [123]/3: recipe-trailing-dot, arm default, #[012]: reward 1, 5 turns, answered, [0-9.]+m?s$`)
	for _, l := range got {
		if !re.MatchString(l) {
			t.Errorf("line %q does not say task, arm, index, reward, turns and time", l)
		}
	}
}

// The bar's passes never run ahead of its count (it showed "pass 2/6" at
// "(5/6)"): every frame's passes are over at most the attempts counted.
func TestProgressBarPassesDoNotRunAhead(t *testing.T) {
	f := newFixture(t, solveRecipe(t))
	var bar bytes.Buffer
	f.runner.Progress = &bar
	f.run(&runner.Plan{Model: "fake", Suite: loadTask(t, "recipe-trailing-dot"), Attempts: 4, Concurrency: 2}, "r1")
	frame := regexp.MustCompile(`pass (\d+)/(\d+).*\((\d+)/(\d+)`)
	seen := 0
	for _, fr := range strings.Split(bar.String(), "\r") {
		m := frame.FindStringSubmatch(fr)
		if m == nil {
			continue
		}
		seen++
		scored, _ := strconv.Atoi(m[2])
		counted, _ := strconv.Atoi(m[3])
		if scored > counted {
			t.Errorf("frame %q: passes over %d attempts, but %d counted", fr, scored, counted)
		}
	}
	if seen == 0 {
		t.Fatalf("no frame with passes:\n%q", bar.String())
	}
}

// A run continued (or run again when finished) keeps the overhead measured
// at its start: it measured again and threw the result away.
func TestResumeKeepsTheOverheadMeasurement(t *testing.T) {
	f := newFixture(t, ollamatest.Turns(ollamatest.Reply{Content: "no"}))
	suite := loadTask(t, "recipe-trailing-dot")
	f.run(&runner.Plan{Model: "fake", Suite: suite, Attempts: 2}, "r1")
	var measuredAt string
	if err := f.store.DB().QueryRow(`SELECT measured_at FROM overhead WHERE run_id = 'r1'`).Scan(&measuredAt); err != nil {
		t.Fatal(err)
	}
	before := len(f.server.Requests())
	var log bytes.Buffer
	f.runner.Log = &log
	f.run(&runner.Plan{Model: "fake", Suite: suite, Attempts: 2}, "r1")
	if n := len(f.server.Requests()) - before; n != 0 {
		t.Errorf("%d chat requests to continue a finished run, want none", n)
	}
	var again string
	if err := f.store.DB().QueryRow(`SELECT measured_at FROM overhead WHERE run_id = 'r1'`).Scan(&again); err != nil || again != measuredAt {
		t.Errorf("measurement %q (%v), want the first one %q kept", again, err, measuredAt)
	}
	if !strings.Contains(log.String(), "not measured again") {
		t.Errorf("log does not say the measurement is kept:\n%s", log.String())
	}
}
