package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// stdioTransport is the SDK transport of a stdio server: newline-delimited
// JSON-RPC over the process's pipes, as sdk.IOTransport, reading through
// the stdoutFilter, which decodes each line once and drops what is not a
// message. (sdk.IOTransport decodes every message three times over, each
// time with a new 32 KB buffer: most of the client's CPU per call.)
// A batch the server sends is read message by message; answers to a
// batch of requests go one by one (the revisions from 2025-06-18 on have
// no batches).
type stdioTransport struct {
	out *stdoutFilter
	in  io.WriteCloser
	// readDeadline sets the read deadline of the server's stdout; waiter
	// makes its reads wait or not (rawPipe). Without both, one goroutine
	// reads the server's stdout all the time and hands each answer over.
	readDeadline func(time.Time) error
	waiter       interface{ setWait(bool) }
	progress     func(*sdk.ProgressNotificationParams) bool // the connection's
	conn         *stdioConn                                 // once connected
}

// How often the connection reads what an idle server wrote (a ping, a
// notification) when no call is waiting for an answer: after idlePollMin
// at first, doubling up to idlePollMax while the server stays silent.
const (
	idlePollMin = 10 * time.Millisecond
	idlePollMax = time.Second
)

// Connect implements sdk.Transport.
func (t *stdioTransport) Connect(context.Context) (sdk.Connection, error) {
	c := &stdioConn{
		out:        t.out,
		in:         t.in,
		waiter:     t.waiter,
		closed:     make(chan struct{}),
		dead:       make(chan struct{}),
		role:       make(chan struct{}, 1),
		sdkReady:   make(chan struct{}, 1),
		wake:       make(chan struct{}, 1),
		sdkPending: map[jsonrpc.ID]bool{},
		pending:    map[string]chan answer{},
	}
	c.deadline = func(time.Time) error { return errors.ErrUnsupported }
	if t.readDeadline != nil && t.waiter != nil && t.readDeadline(time.Time{}) == nil {
		c.deadline = t.readDeadline
	} else {
		c.dedicated = true
		c.wake <- struct{}{}
	}
	c.role <- struct{}{}
	c.progress = t.progress
	t.conn = c
	go c.background()
	return c, nil
}

// stdioConn is a stdio server's connection (sdk.Connection).
//
// Whoever waits for a message reads the server's stdout itself, one
// reader at a time (the role): a tool call waiting for its answer
// (callTool), or the background goroutine while the SDK waits for the
// answer to a request of its own, and now and then when nobody waits (an
// idle server's pings and notifications). The reader hands the messages
// that are not its own to their callers (the SDK's Read, other calls). A
// call that reads its own answer costs one wake-up, the poller's; handing
// the answer over from a reading goroutine cost a second one, as much CPU
// again on the 2-core machine. Where the pipe has no read deadline
// (dedicated), the background goroutine is the only reader.
type stdioConn struct {
	out       *stdoutFilter
	in        io.WriteCloser
	waiter    interface{ setWait(bool) }
	deadline  func(time.Time) error // the server's stdout's read deadline
	dedicated bool                  // only the background goroutine reads
	closed    chan struct{}
	once      sync.Once

	writeMu sync.Mutex
	buf     []byte

	role    chan struct{} // holds a token while nobody reads
	rmu     sync.Mutex
	reader  uint64 // the ticket of who reads, 0 when nobody does
	tickets uint64

	// Messages for the SDK.
	qmu        sync.Mutex
	queue      []jsonrpc.Message
	sdkPending map[jsonrpc.ID]bool // the SDK's requests waiting for an answer
	sdkReady   chan struct{}       // there is something in queue
	wake       chan struct{}       // the SDK sent a request: read for it

	// The direct tools/call (callTool).
	fastMu  sync.Mutex
	listed  bool            // the SDK has listed tools: meta is what it sends
	meta    json.RawMessage // the "_meta" of its requests (nil: none)
	seq     int64
	pending map[string]chan answer // direct calls waiting, by id

	// progress takes a progress notification, and reports whether it
	// was for a call in flight (otherwise it goes to the SDK).
	progress func(*sdk.ProgressNotificationParams) bool

	dead     chan struct{} // closed when reading stopped
	deadErr  error         // why, set before dead is closed
	deadOnce sync.Once
}

// background reads the server's stdout for the SDK when it waits for an
// answer, and what an idle server writes, until the connection is closed
// or the server's stdout ends.
func (c *stdioConn) background() {
	wait := idlePollMin
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		select {
		case <-c.closed:
			return
		case <-c.dead:
			return
		case <-c.wake:
		case <-t.C:
		}
		switch {
		case c.dedicated || c.sdkWaiting():
			c.readWhile(func() bool { return c.dedicated || c.sdkWaiting() })
			wait = idlePollMin
		case c.drain():
			wait = idlePollMin
		default:
			wait = min(2*wait, idlePollMax)
		}
		t.Reset(wait)
	}
}

// sdkWaiting reports whether a request of the SDK's waits for its answer.
func (c *stdioConn) sdkWaiting() bool {
	c.qmu.Lock()
	defer c.qmu.Unlock()
	return len(c.sdkPending) > 0
}

// readWhile takes the role and reads, waiting for the server, while cond
// holds.
func (c *stdioConn) readWhile(cond func() bool) {
	select {
	case <-c.role:
	case <-c.closed:
		return
	case <-c.dead:
		return
	}
	defer c.release()
	c.hold(time.Time{}, true)
	for cond() && !c.isClosed() {
		if err := c.readOnce(); err != nil && !transient(err) {
			return
		}
	}
}

// drain reads what the server wrote, without waiting, unless somebody
// else reads; it reports whether there was anything.
func (c *stdioConn) drain() bool {
	select {
	case <-c.role:
	default:
		return false
	}
	defer c.release()
	c.hold(time.Time{}, false)
	read := false
	for !c.isClosed() && c.readOnce() == nil {
		read = true
	}
	return read
}

// hold makes the caller, which took the role, the reader: its reads
// wait (or not) until deadline (none when zero). It returns the caller's
// ticket, for interrupt.
func (c *stdioConn) hold(deadline time.Time, wait bool) uint64 {
	c.rmu.Lock()
	defer c.rmu.Unlock()
	c.tickets++
	c.reader = c.tickets
	_ = c.deadline(deadline)
	if c.waiter != nil {
		c.waiter.setWait(wait)
	}
	return c.reader
}

// release gives the role back.
func (c *stdioConn) release() {
	c.rmu.Lock()
	c.reader = 0
	c.rmu.Unlock()
	c.role <- struct{}{}
}

// interrupt ends the wait of the reader of the given ticket (0: of any
// reader).
func (c *stdioConn) interrupt(ticket uint64) {
	c.rmu.Lock()
	defer c.rmu.Unlock()
	if c.reader != 0 && (ticket == 0 || ticket == c.reader) {
		_ = c.deadline(time.Unix(1, 0))
	}
}

func (c *stdioConn) isClosed() bool {
	select {
	case <-c.closed:
		return true
	default:
		return false
	}
}

// readOnce reads the messages of one line and hands them over: to the
// direct calls waiting for them, the rest to the SDK. Its error is the
// filter's; one that is not transient stops the connection.
func (c *stdioConn) readOnce() error {
	msgs, err := c.out.nextWith(c.directAnswer)
	for _, m := range msgs {
		c.route(m)
	}
	if err != nil && !transient(err) {
		c.deadOnce.Do(func() {
			c.deadErr = err
			close(c.dead)
		})
	}
	return err
}

// route hands one message to its caller.
func (c *stdioConn) route(m jsonrpc.Message) {
	r, isResponse := m.(*jsonrpc.Response)
	if isResponse {
		if id, ok := r.ID.Raw().(string); ok && strings.HasPrefix(id, directPrefix) {
			c.answer(id, answer{resp: r})
			return
		}
	}
	// Progress is taken here, in the order of the server's lines: through
	// the SDK it would be handled in another goroutine, possibly after
	// the answer it preceded.
	if req, ok := m.(*jsonrpc.Request); ok && req.Method == "notifications/progress" && c.progress != nil {
		var p sdk.ProgressNotificationParams
		if parse(req.Params, &p) == nil && c.progress(&p) {
			return
		}
	}
	c.qmu.Lock()
	c.queue = append(c.queue, m)
	if isResponse {
		delete(c.sdkPending, r.ID)
	}
	c.qmu.Unlock()
	select {
	case c.sdkReady <- struct{}{}:
	default:
	}
}

// Read implements sdk.Connection: the next message, or an error when ctx
// ends, the connection is closed, or the server's stdout ends.
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		c.qmu.Lock()
		if len(c.queue) > 0 {
			m := c.queue[0]
			c.queue[0] = nil
			c.queue = c.queue[1:]
			c.qmu.Unlock()
			return m, nil
		}
		c.qmu.Unlock()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.sdkReady:
		case <-c.closed:
			return nil, io.EOF
		case <-c.dead:
			c.qmu.Lock()
			empty := len(c.queue) == 0
			c.qmu.Unlock()
			if empty {
				return nil, c.deadErr
			}
		}
	}
}

// Write implements sdk.Connection: one message, one line.
func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	req, isRequest := msg.(*jsonrpc.Request)
	waits := isRequest && req.ID.IsValid()
	if waits {
		c.qmu.Lock()
		c.sdkPending[req.ID] = true
		c.qmu.Unlock()
	} else if isRequest && req.Method == "notifications/cancelled" {
		c.forgetCancelled(req.Params)
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if c.isClosed() {
		return errors.New("write to a closed connection")
	}
	c.buf = append(append(c.buf[:0], data...), '\n')
	_, err = c.in.Write(c.buf)
	if isRequest && req.Method == "tools/list" {
		c.noteMeta(req.Params)
	}
	if waits {
		select {
		case c.wake <- struct{}{}:
		default:
		}
	}
	return err
}

// forgetCancelled stops waiting for the answer to a request the SDK
// cancelled.
func (c *stdioConn) forgetCancelled(params json.RawMessage) {
	var p struct {
		RequestID any `json:"requestId"`
	}
	if parse(params, &p) != nil {
		return
	}
	if f, ok := p.RequestID.(float64); ok {
		p.RequestID = int64(f)
	}
	id, err := jsonrpc.MakeID(p.RequestID)
	if err != nil {
		return
	}
	c.qmu.Lock()
	delete(c.sdkPending, id)
	c.qmu.Unlock()
}

// writeLine writes one line the connection encoded itself, with encode
// appending it to the connection's buffer.
func (c *stdioConn) writeLine(ctx context.Context, encode func([]byte) ([]byte, error)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if c.isClosed() {
		return errors.New("write to a closed connection")
	}
	buf, err := encode(c.buf[:0])
	if err != nil {
		return err
	}
	c.buf = buf
	_, err = c.in.Write(buf)
	return err
}

// Close implements sdk.Connection: the server's stdin is closed, which
// tells it to exit; its stdout is closed when the process is stopped.
func (c *stdioConn) Close() error {
	var err error
	c.once.Do(func() {
		close(c.closed)
		c.interrupt(0)
		c.writeMu.Lock()
		err = c.in.Close()
		c.writeMu.Unlock()
	})
	return err
}

// SessionID implements sdk.Connection: stdio has no sessions.
func (c *stdioConn) SessionID() string { return "" }

// The hot path: tools/call without the SDK. Through the SDK's client a
// call cost this process 250 to 400 µs of CPU and 143 KB (its JSON
// decoder takes a new 32 KB buffer every time, a result is decoded
// several times over, and each call crosses four goroutines); bench calls
// a tool thousands of times a run. callTool writes the request itself,
// with the "_meta" the SDK sent in its tools/list request (the
// per-request fields of revision 2026-07-28; none before it), and reads
// the answer itself, which never reaches the SDK. Everything else
// (negotiation, listing, the server's own requests and notifications,
// shutdown, Streamable HTTP) stays with the SDK. See docs/mcp.md.

// errNoDirectCall says that the connection cannot call a tool itself yet:
// the SDK has not listed tools on it.
var errNoDirectCall = errors.New("no direct tools/call before tools/list")

// errWouldBlock is the error of a read that must not wait (drain) when
// the server wrote nothing.
var errWouldBlock = errors.New("nothing to read yet")

// errCallTimeout is the error of a call the server did not answer in time.
var errCallTimeout = fmt.Errorf("no answer in time: %w", context.DeadlineExceeded)

// directPrefix starts the ids of direct calls: the SDK numbers its
// requests, so a string id never collides with one of them.
const directPrefix = "bench-"

// noteMeta keeps the "_meta" of the SDK's tools/list request.
func (c *stdioConn) noteMeta(params json.RawMessage) {
	var p struct {
		Meta json.RawMessage `json:"_meta"`
	}
	if len(params) > 0 && parse(params, &p) != nil {
		return
	}
	c.fastMu.Lock()
	defer c.fastMu.Unlock()
	c.listed, c.meta = true, p.Meta
}

// callTool calls a tool and returns the result as the server wrote it,
// waiting for it until w's deadline (which progress may push back), or
// ctx's, if earlier. The request carries w's progress token. Its errors
// are those of the SDK's CallTool: the server's JSON-RPC error (a
// *jsonrpc.Error), ctx's error, or sdk.ErrConnectionClosed when the
// server's stdout ended or the connection closed; errCallTimeout when the
// server did not answer in time, errNoDirectCall when it cannot be used.
// A call abandoned (timeout, ctx) has its notifications/cancelled written
// before callTool returns.
func (c *stdioConn) callTool(ctx context.Context, name string, args map[string]any, w *callWatch) (*sdk.CallToolResult, error) {
	c.fastMu.Lock()
	if !c.listed {
		c.fastMu.Unlock()
		return nil, errNoDirectCall
	}
	c.seq++
	id := directPrefix + strconv.FormatInt(c.seq, 10)
	meta := c.meta
	ch := make(chan answer, 1)
	c.pending[id] = ch
	c.fastMu.Unlock()
	forget := func() {
		c.fastMu.Lock()
		delete(c.pending, id)
		c.fastMu.Unlock()
	}
	deadline := func() time.Time {
		d := w.deadline()
		if cd, ok := ctx.Deadline(); ok && cd.Before(d) {
			return cd
		}
		return d
	}
	if err := c.writeLine(ctx, func(b []byte) ([]byte, error) { return appendCallRequest(b, id, meta, w.token, name, args) }); err != nil {
		forget()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%w: calling %q: %v", sdk.ErrConnectionClosed, "tools/call", err)
	}
	a, err := c.await(ctx, ch, deadline)
	if err != nil {
		forget()
		if cd, ok := ctx.Deadline(); ok && errors.Is(err, errCallTimeout) && !time.Now().Before(cd) {
			<-ctx.Done() // the context's own deadline: its error
			err = ctx.Err()
		}
		if errors.Is(err, errCallTimeout) || ctx.Err() != nil {
			// Written before returning, so that it is on the wire before
			// the caller goes on (and before bench exits); bounded, as
			// the SDK bounds its own.
			rid, _ := jsonrpc.MakeID(id)
			c.notifyCancelled(rid, err)
		}
		return nil, err
	}
	return a.result()
}

// await waits for the answer on ch until deadline(): reading the server's
// stdout itself when nobody else does.
func (c *stdioConn) await(ctx context.Context, ch chan answer, deadline func() time.Time) (answer, error) {
	role := c.role
	if c.dedicated {
		role = nil // never read here: only the background goroutine does
	}
	select {
	case r := <-ch:
		return r, nil
	case <-role:
		return c.readFor(ctx, ch, deadline)
	default:
	}
	t := time.NewTimer(time.Until(deadline()))
	defer t.Stop()
	for {
		select {
		case r := <-ch:
			return r, nil
		case <-role:
			return c.readFor(ctx, ch, deadline)
		case <-ctx.Done():
			return answer{}, ctx.Err()
		case <-t.C:
			if d := deadline(); time.Now().Before(d) {
				t.Reset(time.Until(d)) // progress pushed the deadline back
				continue
			}
			return answer{}, errCallTimeout
		case <-c.dead:
			return answer{}, c.deadError()
		case <-c.closed:
			return answer{}, c.closedError()
		}
	}
}

// readFor reads the server's stdout, with the role, until the answer
// comes on ch, deadline() passes, ctx ends or reading stops.
func (c *stdioConn) readFor(ctx context.Context, ch chan answer, deadline func() time.Time) (answer, error) {
	defer c.release()
	d := deadline()
	ticket := c.hold(d, true)
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, func() { c.interrupt(ticket) })
		defer stop()
	}
	for {
		select {
		case r := <-ch:
			return r, nil
		case <-c.closed:
			return answer{}, c.closedError()
		default:
		}
		err := c.readOnce()
		switch {
		case err == nil:
		case !transient(err):
			select {
			case r := <-ch:
				return r, nil
			default:
			}
			return answer{}, c.deadError()
		case ctx.Err() != nil:
			return answer{}, ctx.Err()
		case !time.Now().Before(d):
			next := deadline()
			if !time.Now().Before(next) {
				return answer{}, errCallTimeout
			}
			d = next // progress pushed the deadline back
			c.extend(ticket, d)
		}
	}
}

// extend moves the read deadline of the reader of the given ticket.
func (c *stdioConn) extend(ticket uint64, d time.Time) {
	c.rmu.Lock()
	defer c.rmu.Unlock()
	if c.reader == ticket {
		_ = c.deadline(d)
	}
}

func (c *stdioConn) deadError() error {
	return fmt.Errorf("%w: calling %q: %v", sdk.ErrConnectionClosed, "tools/call", c.deadErr)
}

func (c *stdioConn) closedError() error {
	return fmt.Errorf("%w: calling %q: the connection was closed", sdk.ErrConnectionClosed, "tools/call")
}

// appendCallRequest appends the tools/call request of a direct call to b,
// one line, as the SDK writes it: jsonrpc, id, method, then the params
// _meta (the SDK's, when it sends one, with the progress token),
// name, arguments.
func appendCallRequest(b []byte, id string, meta json.RawMessage, token, name string, args map[string]any) ([]byte, error) {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendQuote(b, id) // directPrefix and digits: nothing to escape
	b = append(b, `,"method":"tools/call","params":{`...)
	b = append(b, `"_meta":{`...)
	if m := bytes.TrimSpace(meta); len(m) > 2 && m[0] == '{' && m[len(m)-1] == '}' {
		// The SDK's fields, then the token: as it writes the map, in the
		// order of the keys, as long as its own sort before "progressToken".
		b = append(b, bytes.TrimSpace(m[1:len(m)-1])...)
		b = append(b, ',')
	}
	b = append(b, `"progressToken":`...)
	b = strconv.AppendQuote(b, token) // a prefix and digits: nothing to escape
	b = append(b, "},"...)
	n, err := json.Marshal(name)
	if err != nil {
		return nil, err
	}
	b = append(append(b, `"name":`...), n...)
	b = append(b, `,"arguments":`...)
	if args == nil {
		b = append(b, "{}"...)
	} else {
		a, err := json.Marshal(args)
		if err != nil {
			return nil, fmt.Errorf("arguments: %w", err)
		}
		b = append(b, a...)
	}
	return append(b, "}}\n"...), nil
}

// cancelWait bounds how long notifyCancelled waits for the server's stdin
// to take the notification.
const cancelWait = time.Second

// notifyCancelled tells the server that the caller gave up on a call,
// waiting at most cancelWait for the write (a server that reads nothing
// fills its stdin's pipe).
func (c *stdioConn) notifyCancelled(id jsonrpc.ID, why error) {
	params, _ := json.Marshal(map[string]any{"reason": why.Error(), "requestId": id.Raw()})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = c.Write(context.Background(), &jsonrpc.Request{Method: "notifications/cancelled", Params: params})
	}()
	t := time.NewTimer(cancelWait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}

// resultWire is a tools/call result as servers write it, with the content
// kinds formatResult shows.
type resultWire struct {
	Content []struct {
		Type        string                `json:"type"`
		Text        string                `json:"text"`
		MIMEType    string                `json:"mimeType"`
		Data        []byte                `json:"data"`
		URI         string                `json:"uri"`
		Name        string                `json:"name"`
		Title       string                `json:"title"`
		Description string                `json:"description"`
		Size        *int64                `json:"size"`
		Resource    *sdk.ResourceContents `json:"resource"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
	ResultType        string          `json:"resultType"`
	InputRequests     json.RawMessage `json:"inputRequests"`
}

// errNeedsInput is the error of a result that asks the client for input
// (elicitation, sampling) before the call can complete: the harness gives
// none, as its client declares no such capability.
var errNeedsInput = errors.New("the server asked for input to complete the call (input_required), which the harness does not give")

// decodeResult decodes a tools/call result as the SDK's CallToolResult
// does, for what formatResult reads. A result with content of another kind
// is left to the SDK's own decoding. raw is part of a line already
// checked whole (decodeMessage).
func decodeResult(raw json.RawMessage) (*sdk.CallToolResult, error) {
	var w resultWire
	if err := parse(raw, &w); err != nil {
		return nil, fmt.Errorf("unmarshaling tools/call result: %w", err)
	}
	return resultFromWire(&w, func() json.RawMessage { return raw })
}

// resultFromWire is decodeResult's, from the result decoded; raw gives
// the result as written, for the SDK's decoding.
func resultFromWire(w *resultWire, raw func() json.RawMessage) (*sdk.CallToolResult, error) {
	if w.ResultType == "input_required" || (len(w.InputRequests) > 0 && string(w.InputRequests) != "null") {
		return nil, errNeedsInput
	}
	res := &sdk.CallToolResult{IsError: w.IsError, Content: make([]sdk.Content, 0, len(w.Content))}
	hasText := false // as formatResult decides to show the structured content
	for _, c := range w.Content {
		switch c.Type {
		case "text":
			hasText = true
			res.Content = append(res.Content, &sdk.TextContent{Text: c.Text})
		case "image":
			res.Content = append(res.Content, &sdk.ImageContent{MIMEType: c.MIMEType, Data: c.Data})
		case "audio":
			res.Content = append(res.Content, &sdk.AudioContent{MIMEType: c.MIMEType, Data: c.Data})
		case "resource_link":
			res.Content = append(res.Content, &sdk.ResourceLink{URI: c.URI, Name: c.Name, Title: c.Title, Description: c.Description, MIMEType: c.MIMEType, Size: c.Size})
		case "resource":
			hasText = hasText || (c.Resource != nil && c.Resource.Blob == nil)
			res.Content = append(res.Content, &sdk.EmbeddedResource{Resource: c.Resource})
		default:
			var r sdk.CallToolResult
			if err := parse(raw(), &r); err != nil {
				return nil, err
			}
			return &r, nil
		}
	}
	// The structured content is decoded when the model is shown it (no
	// content is text); otherwise it is kept as written, a copy of its
	// bytes (for the stored details, and decoded only if the tool's
	// outputSchema checks it): decoding it cost a direct call most of its
	// CPU on servers that mirror their text in it.
	if sc := w.StructuredContent; len(sc) > 0 && string(sc) != "null" {
		if hasText {
			res.StructuredContent = json.RawMessage(bytes.Clone(sc))
		} else if err := parse(sc, &res.StructuredContent); err != nil {
			return nil, fmt.Errorf("unmarshaling tools/call result: %w", err)
		}
	}
	return res, nil
}

// directWire is a line that answers a direct call, decoded in one pass,
// the result and all (directAnswer).
type directWire struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  json.RawMessage `json:"method"`
	Result  *resultWire     `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// directMark is how the id of a direct call starts on the wire.
var directMark = []byte(`"` + directPrefix)

// directAnswer hands over a line that answers a direct call with a
// result, decoding it once (decodeMessage and then decodeResult would
// decode the result twice, and check the line twice), and reports whether
// it did. Any other line (an error, a request, another id, anything
// decodeMessage would judge differently) is left to decodeMessage.
func (c *stdioConn) directAnswer(line []byte) bool {
	if !bytes.Contains(line, directMark) {
		return false
	}
	var w directWire
	if unmarshal(line, &w) != nil || w.JSONRPC != "2.0" || len(w.Method) > 0 || w.Result == nil ||
		(len(w.Error) > 0 && string(w.Error) != "null") {
		return false
	}
	id := w.ID
	if len(id) < 2 || !bytes.HasPrefix(id, directMark) || id[len(id)-1] != '"' || bytes.IndexByte(id, '\\') >= 0 {
		return false
	}
	c.answer(string(id[1:len(id)-1]), answer{wire: w.Result, line: line})
	return true
}

// answer hands an answer to the direct call of the given id, if it
// still waits (a late answer to an abandoned call is dropped).
func (c *stdioConn) answer(id string, a answer) {
	c.fastMu.Lock()
	ch, waiting := c.pending[id]
	delete(c.pending, id)
	c.fastMu.Unlock()
	if waiting {
		ch <- a // buffered: never blocks
	}
}

// answer is what comes back to a direct call: the result decoded
// (directAnswer), or the response as decodeMessage decoded it.
type answer struct {
	wire *resultWire
	line []byte // wire's line
	resp *jsonrpc.Response
}

// result is the call's result, or its error.
func (a answer) result() (*sdk.CallToolResult, error) {
	if a.wire != nil {
		return resultFromWire(a.wire, func() json.RawMessage {
			var r struct {
				Result json.RawMessage `json:"result"`
			}
			_ = parse(a.line, &r)
			return r.Result
		})
	}
	if a.resp.Error != nil {
		return nil, fmt.Errorf("calling %q: %w", "tools/call", a.resp.Error)
	}
	return decodeResult(a.resp.Result)
}
