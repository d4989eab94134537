package endpoint

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/ollama/ollama/api"
	"github.com/schollz/progressbar/v3"
)

// PullProgress shows pulls as they go, the way `ollama pull` does on a
// terminal: one bar of the bytes of every layer of every endpoint being
// pulled onto, with the stage when no layer is downloading. Without a
// terminal (a log, a pipe) it writes a line per stage of each endpoint
// instead: what a log can hold. A nil *PullProgress shows nothing.
type PullProgress struct {
	w        io.Writer
	terminal bool
	now      func() time.Time

	mu      sync.Mutex
	bar     *progressbar.ProgressBar
	title   string
	began   time.Time
	many    bool
	stages  map[string]string              // endpoint: last status
	layers  map[string]map[string][2]int64 // endpoint: digest: completed, total
	lastMax int64
}

// NewPullProgress shows pulls on w: a live bar when terminal, else a line
// per stage.
func NewPullProgress(w io.Writer, terminal bool) *PullProgress {
	return &PullProgress{w: w, terminal: terminal, now: time.Now}
}

func (pp *PullProgress) start(model string, endpoints int) {
	if pp == nil {
		return
	}
	pp.mu.Lock()
	defer pp.mu.Unlock()
	pp.began = pp.now()
	pp.many = endpoints > 1
	pp.stages = map[string]string{}
	pp.layers = map[string]map[string][2]int64{}
	pp.lastMax = 0
	if !pp.terminal {
		return
	}
	pp.title = "pulling " + model
	if pp.many {
		pp.title += fmt.Sprintf(" onto %d endpoints", endpoints)
	}
	pp.bar = progressbar.NewOptions64(-1,
		progressbar.OptionSetWriter(pp.w),
		progressbar.OptionSetDescription(pp.title),
		progressbar.OptionShowBytes(true),
		progressbar.OptionShowCount(),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionSetRenderBlankState(true),
		progressbar.OptionClearOnFinish(),
	)
}

// update takes one progress line of an endpoint's pull.
func (pp *PullProgress) update(endpoint, model string, r api.ProgressResponse) {
	if pp == nil {
		return
	}
	pp.mu.Lock()
	defer pp.mu.Unlock()
	stage := r.Status
	if r.Digest != "" && r.Total > 0 {
		if pp.layers[endpoint] == nil {
			pp.layers[endpoint] = map[string][2]int64{}
		}
		_, seen := pp.layers[endpoint][r.Digest]
		pp.layers[endpoint][r.Digest] = [2]int64{r.Completed, r.Total}
		if !seen {
			stage = fmt.Sprintf("%s (%s)", r.Status, Size(r.Total))
		} else {
			stage = pp.stages[endpoint] // the same layer, further on
		}
	}
	changed := stage != pp.stages[endpoint]
	pp.stages[endpoint] = stage
	if !pp.terminal {
		if changed {
			fmt.Fprintf(pp.w, "pull %s on %s: %s\n", model, endpoint, stage)
		}
		return
	}
	var done, total int64
	for _, ls := range pp.layers {
		for _, l := range ls {
			done += l[0]
			total += l[1]
		}
	}
	if total != pp.lastMax {
		pp.bar.ChangeMax64(total)
		pp.lastMax = total
	}
	if changed {
		// The stages around the download (manifest, verifying, writing)
		// show beside the title; the download is the bar itself.
		desc := pp.title
		if r.Digest == "" || r.Total == 0 {
			desc += ": " + r.Status
		}
		pp.bar.Describe(desc)
	}
	_ = pp.bar.Set64(done)
}

// finish ends the bar and says, in one line, what was pulled where.
func (pp *PullProgress) finish(model string, endpoints []string, ok bool) {
	if pp == nil {
		return
	}
	pp.mu.Lock()
	defer pp.mu.Unlock()
	if pp.bar != nil {
		if ok {
			_ = pp.bar.Finish()
		} else {
			_ = pp.bar.Exit()
		}
		pp.bar = nil
	}
	if !ok {
		return // the error says what went wrong
	}
	var total int64 // of one endpoint: each pulled the same model
	for _, l := range pp.layers[endpoints[0]] {
		total += l[1]
	}
	fmt.Fprintf(pp.w, "pulled %s (%s) onto %s in %s\n", model, Size(total), strings.Join(endpoints, ", "),
		pp.now().Sub(pp.began).Round(time.Second))
}
