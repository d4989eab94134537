package mcp

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Progress is what a server reported of a call in progress
// (notifications/progress): every call carries a progressToken.
type Progress struct {
	// Tool is the name the model sees ("server__tool").
	Tool string `json:"tool"`
	// Progress and Total are the server's numbers; Total is 0 when unknown.
	Progress float64 `json:"progress"`
	Total    float64 `json:"total,omitempty"`
	// Message is the server's words (untrusted), cut at 500 bytes.
	Message string `json:"message,omitempty"`
	// Count is how many progress notifications the call has had so far.
	Count int `json:"count"`
	// Elapsed is the time since the call was sent.
	Elapsed time.Duration `json:"elapsed_ns"`
}

// maxProgressMessage bounds the message of one progress notification kept.
const maxProgressMessage = 500

// callWatch follows one call in flight: its progress, and the deadline
// that progress may push back. Without a max_call_time in the server's
// declaration the deadline is fixed, start + the call timeout, whatever
// the server reports; with one, each progress notification moves it to
// that notification + the call timeout, never past start + max_call_time.
// A server that reports progress without end is so still cut.
type callWatch struct {
	tool    string
	token   string
	start   time.Time
	idle    time.Duration // the call timeout
	max     time.Duration // max_call_time; 0: progress does not extend
	onNote  func(Progress)
	mu      sync.Mutex
	last    time.Time // the last progress notification, or start
	latest  Progress
	applied bool // whether progress moved the deadline
}

// deadline is when the call is abandoned if the server has not answered.
func (w *callWatch) deadline() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.deadlineLocked()
}

func (w *callWatch) deadlineLocked() time.Time {
	fixed := w.start.Add(w.idle)
	if w.max <= 0 {
		return fixed
	}
	d := w.last.Add(w.idle)
	if limit := w.start.Add(w.max); d.After(limit) {
		d = limit
	}
	if d.Before(fixed) {
		d = fixed
	}
	return d
}

// limit is how long the call was allowed in the end, for the timeout
// observation.
func (w *callWatch) limit() time.Duration {
	return w.deadline().Sub(w.start).Round(time.Millisecond)
}

// note takes one progress notification.
func (w *callWatch) note(p *sdk.ProgressNotificationParams) {
	w.mu.Lock()
	w.last = time.Now()
	w.latest.Count++
	w.latest.Progress, w.latest.Total = p.Progress, p.Total
	w.latest.Message = clip(p.Message, maxProgressMessage)
	w.latest.Elapsed = w.last.Sub(w.start)
	snap := w.latest
	w.mu.Unlock()
	if w.onNote != nil {
		w.onNote(snap)
	}
}

// progress returns what was reported so far (Count 0: nothing).
func (w *callWatch) progress() Progress {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.latest
}

// watches are the calls in flight of one connection, by progress token.
type watches struct {
	mu   sync.Mutex
	by   map[string]*callWatch
	seq  atomic.Int64
	late atomic.Int64 // progress notifications for no call in flight
}

// start registers a call and returns its watch, with a fresh token.
func (ws *watches) start(c *Conn, tool string) *callWatch {
	w := &callWatch{
		tool:   tool,
		token:  "bench-progress-" + strconv.FormatInt(ws.seq.Add(1), 10),
		start:  time.Now(),
		idle:   c.callTimeout,
		max:    c.srv.MaxCallTime.Duration,
		onNote: c.opts.OnProgress,
	}
	w.last = w.start
	w.latest.Tool = tool
	ws.mu.Lock()
	if ws.by == nil {
		ws.by = map[string]*callWatch{}
	}
	ws.by[w.token] = w
	ws.mu.Unlock()
	return w
}

// stop forgets a call: later notifications for it are dropped.
func (ws *watches) stop(w *callWatch) {
	ws.mu.Lock()
	delete(ws.by, w.token)
	ws.mu.Unlock()
}

// progressNotification is the client's handler of notifications/progress.
func (c *Conn) progressNotification(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
	if req.Params != nil && !c.takeProgress(req.Params) {
		c.watches.late.Add(1)
	}
}

// takeProgress hands a progress notification to its call in flight, and
// reports whether there was one.
func (c *Conn) takeProgress(p *sdk.ProgressNotificationParams) bool {
	token := fmt.Sprint(p.ProgressToken)
	c.watches.mu.Lock()
	w := c.watches.by[token]
	c.watches.mu.Unlock()
	if w == nil {
		return false
	}
	w.note(p)
	return true
}
