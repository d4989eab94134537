package runner

import (
	"fmt"
	"io"
	"sync"

	"github.com/schollz/progressbar/v3"

	"github.com/benchhq/bench/results"
)

// progress is the live bar of a run: attempts done, passes so far, infra
// errors, and an estimate of the time left.
type progress struct {
	mu                  sync.Mutex
	bar                 *progressbar.ProgressBar
	passed, done, infra int
}

func newProgress(w io.Writer, total, already int) *progress {
	p := &progress{}
	if w == nil {
		return p
	}
	p.bar = progressbar.NewOptions(total,
		progressbar.OptionSetWriter(w),
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
	if p.bar == nil {
		return
	}
	desc := fmt.Sprintf("attempts · pass %d/%d", p.passed, p.done-p.infra)
	if p.infra > 0 {
		desc += fmt.Sprintf(" · infra errors %d", p.infra)
	}
	p.bar.Describe(desc)
	_ = p.bar.Add(1)
}

func (p *progress) finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}
