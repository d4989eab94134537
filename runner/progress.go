package runner

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/benchhq/bench/results"
)

// progress reports a run as it goes: a live bar (attempts done, passes so
// far, infra errors, an estimate of the time left) for a terminal, or one
// line per finished attempt for a log.
type progress struct {
	mu                  sync.Mutex
	bar                 *progressbar.ProgressBar
	lines               io.Writer
	total, already      int
	passed, done, infra int
}

func newProgress(bar, lines io.Writer, total, already int) *progress {
	p := &progress{lines: lines, total: total, already: already}
	if bar == nil {
		return p
	}
	p.bar = progressbar.NewOptions(total,
		progressbar.OptionSetWriter(bar),
		progressbar.OptionSetDescription("attempts"),
		progressbar.OptionShowCount(),
		progressbar.OptionSetWidth(30),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionShowElapsedTimeOnFinish(),
		// No throttle: attempts end seconds apart, and a throttled update
		// would leave the bar showing a stale count.
		progressbar.OptionSetRenderBlankState(true),
		progressbar.OptionClearOnFinish(),
	)
	_ = p.bar.Set(already)
	return p
}

func (p *progress) add(a *results.Attempt) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	if a.Reward != nil && *a.Reward == 1 {
		p.passed++
	}
	if a.Status == results.StatusInfraError {
		p.infra++
	}
	if p.lines != nil {
		fmt.Fprintln(p.lines, p.line(a))
	}
	if p.bar == nil {
		return
	}
	desc := fmt.Sprintf("attempts · pass %d/%d", p.passed, p.done-p.infra)
	if p.already > 0 {
		desc = fmt.Sprintf("attempts · %d kept · pass %d/%d of the new", p.already, p.passed, p.done-p.infra)
	}
	if p.infra > 0 {
		desc += fmt.Sprintf(" · infra errors %d", p.infra)
	}
	// The count first, then the description: Describe renders at once,
	// and the passes must never run ahead of the attempts counted.
	_ = p.bar.Add(1)
	p.bar.Describe(desc)
}

// line is the log line of a finished attempt: its place in the run, task,
// arm, index, reward, turns and time.
func (p *progress) line(a *results.Attempt) string {
	head := fmt.Sprintf("attempt %d/%d: %s, arm %s, #%d:", p.already+p.done, p.total, a.Key.Task, a.Key.Arm, a.Key.Index)
	took := a.FinishedAt.Sub(a.StartedAt).Round(100 * time.Millisecond)
	turns := 0
	if a.Trajectory != nil {
		turns = len(a.Trajectory.Turns)
	}
	switch {
	case a.Status == results.StatusInfraError:
		return fmt.Sprintf("%s infrastructure failure after %d tries, not scored (%s), %s", head, max(a.Tries, 1), a.Error, took)
	case a.Reward == nil:
		return fmt.Sprintf("%s %s, %s", head, a.Status, took)
	}
	stop := ""
	if a.Trajectory != nil {
		stop = ", " + string(a.Trajectory.Stop)
	}
	return fmt.Sprintf("%s reward %d, %d turns%s, %s", head, *a.Reward, turns, stop, took)
}

func (p *progress) finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}
