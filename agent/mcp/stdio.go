package mcp

import (
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
	out  *stdoutFilter
	in   io.WriteCloser
	conn *stdioConn // once connected
}

// Connect implements sdk.Transport.
func (t *stdioTransport) Connect(context.Context) (sdk.Connection, error) {
	t.conn = &stdioConn{in: t.in, incoming: make(chan readResult), closed: make(chan struct{}),
		dead: make(chan struct{}), pending: map[string]chan *jsonrpc.Response{}}
	go t.conn.readLoop(t.out)
	return t.conn, nil
}

type readResult struct {
	msgs []jsonrpc.Message
	err  error
}

// stdioConn is a stdio server's connection (sdk.Connection).
type stdioConn struct {
	in       io.WriteCloser
	incoming chan readResult
	closed   chan struct{}
	once     sync.Once

	queue []jsonrpc.Message // the rest of a batch; Read is not called concurrently

	writeMu sync.Mutex
	buf     []byte

	// The direct tools/call (callTool).
	fastMu  sync.Mutex
	listed  bool            // the SDK has listed tools: meta is what it sends
	meta    json.RawMessage // the "_meta" of its requests (nil: none)
	seq     int64
	pending map[string]chan *jsonrpc.Response // direct calls waiting, by id
	dead    chan struct{}                     // closed when reading stopped
	deadErr error                             // why, set before dead is closed
}

// readLoop hands the messages of each line to Read, until the server's
// stdout ends or the connection is closed.
func (c *stdioConn) readLoop(out *stdoutFilter) {
	for {
		msgs, err := out.next()
		msgs = c.deliver(msgs)
		if err != nil {
			c.deadErr = err
			close(c.dead)
		} else if len(msgs) == 0 {
			continue
		}
		select {
		case c.incoming <- readResult{msgs, err}:
		case <-c.closed:
			return
		}
		if err != nil {
			return
		}
	}
}

// Read implements sdk.Connection: the next message, or an error when ctx
// ends, the connection is closed, or the server's stdout ends.
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(c.queue) > 0 {
		m := c.queue[0]
		c.queue = c.queue[1:]
		return m, nil
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case r := <-c.incoming:
		if r.err != nil {
			return nil, r.err
		}
		c.queue = r.msgs[1:]
		return r.msgs[0], nil
	case <-c.closed:
		return nil, io.EOF
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
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	select {
	case <-c.closed:
		return errors.New("write to a closed connection")
	default:
	}
	c.buf = append(append(c.buf[:0], data...), '\n')
	_, err = c.in.Write(c.buf)
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "tools/list" {
		c.noteMeta(req.Params)
	}
	return err
}

// Close implements sdk.Connection: the server's stdin is closed, which
// tells it to exit; its stdout is closed when the process is stopped.
func (c *stdioConn) Close() error {
	var err error
	c.once.Do(func() {
		close(c.closed)
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
// several times over, and each call crosses four goroutines); bench calls a tool thousands of times a
// run. callTool sends the request itself, with the "_meta" the SDK sent
// in its tools/list request (the per-request fields of revision
// 2026-07-28; none before it), and gets the response from the read loop,
// which hands it over without passing it to the SDK. Everything else
// (negotiation, listing, the server's own requests and notifications,
// shutdown, Streamable HTTP) stays with the SDK. See docs/mcp.md.

// errNoDirectCall says that the connection cannot call a tool itself yet:
// the SDK has not listed tools on it.
var errNoDirectCall = errors.New("no direct tools/call before tools/list")

// directPrefix starts the ids of direct calls: the SDK numbers its
// requests, so a string id never collides with one of them.
const directPrefix = "bench-"

// noteMeta keeps the "_meta" of the SDK's tools/list request.
func (c *stdioConn) noteMeta(params json.RawMessage) {
	var p struct {
		Meta json.RawMessage `json:"_meta"`
	}
	if len(params) > 0 && json.Unmarshal(params, &p) != nil {
		return
	}
	c.fastMu.Lock()
	defer c.fastMu.Unlock()
	c.listed, c.meta = true, p.Meta
}

// deliver hands the responses to direct calls to their callers and
// returns the other messages, for the SDK.
func (c *stdioConn) deliver(msgs []jsonrpc.Message) []jsonrpc.Message {
	out := msgs[:0]
	for _, m := range msgs {
		if r, ok := m.(*jsonrpc.Response); ok {
			if id, ok := r.ID.Raw().(string); ok && strings.HasPrefix(id, directPrefix) {
				c.fastMu.Lock()
				ch, waiting := c.pending[id]
				delete(c.pending, id)
				c.fastMu.Unlock()
				if waiting {
					ch <- r
				}
				continue // a late answer to an abandoned call is dropped
			}
		}
		out = append(out, m)
	}
	return out
}

// callTool calls a tool and returns the result as the server wrote it. Its
// errors are those of the SDK's CallTool: the server's JSON-RPC error (a
// *jsonrpc.Error), ctx's error, or sdk.ErrConnectionClosed when the
// server's stdout ended or the connection closed; errNoDirectCall when it
// cannot be used.
func (c *stdioConn) callTool(ctx context.Context, name string, args map[string]any) (json.RawMessage, error) {
	c.fastMu.Lock()
	if !c.listed {
		c.fastMu.Unlock()
		return nil, errNoDirectCall
	}
	c.seq++
	id := directPrefix + strconv.FormatInt(c.seq, 10)
	meta := c.meta
	ch := make(chan *jsonrpc.Response, 1)
	c.pending[id] = ch
	c.fastMu.Unlock()
	forget := func() {
		c.fastMu.Lock()
		delete(c.pending, id)
		c.fastMu.Unlock()
	}
	params, err := callParams(meta, name, args)
	if err != nil {
		forget()
		return nil, fmt.Errorf("calling %q: %w", "tools/call", err)
	}
	rid, _ := jsonrpc.MakeID(id)
	if err := c.Write(ctx, &jsonrpc.Request{ID: rid, Method: "tools/call", Params: params}); err != nil {
		forget()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%w: calling %q: %v", sdk.ErrConnectionClosed, "tools/call", err)
	}
	select {
	case r := <-ch:
		if r.Error != nil {
			return nil, fmt.Errorf("calling %q: %w", "tools/call", r.Error)
		}
		return r.Result, nil
	case <-ctx.Done():
		forget()
		// As the SDK does, best effort and off the caller's path.
		go c.notifyCancelled(rid, ctx.Err())
		return nil, ctx.Err()
	case <-c.dead:
		forget()
		return nil, fmt.Errorf("%w: calling %q: %v", sdk.ErrConnectionClosed, "tools/call", c.deadErr)
	case <-c.closed:
		forget()
		return nil, fmt.Errorf("%w: calling %q: the connection was closed", sdk.ErrConnectionClosed, "tools/call")
	}
}

// callParams are the params of a tools/call request as the SDK writes
// them: _meta (when it sends one), name, arguments.
func callParams(meta json.RawMessage, name string, args map[string]any) (json.RawMessage, error) {
	p := struct {
		Meta      json.RawMessage `json:"_meta,omitempty"`
		Name      string          `json:"name"`
		Arguments map[string]any  `json:"arguments"`
	}{meta, name, args}
	if p.Arguments == nil {
		p.Arguments = map[string]any{}
	}
	return json.Marshal(p)
}

// notifyCancelled tells the server that the caller gave up on a call.
func (c *stdioConn) notifyCancelled(id jsonrpc.ID, why error) {
	params, _ := json.Marshal(map[string]any{"reason": why.Error(), "requestId": id.Raw()})
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = c.Write(ctx, &jsonrpc.Request{Method: "notifications/cancelled", Params: params})
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
// is left to the SDK's own decoding.
func decodeResult(raw json.RawMessage) (*sdk.CallToolResult, error) {
	var w resultWire
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, fmt.Errorf("unmarshaling tools/call result: %w", err)
	}
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
			if err := json.Unmarshal(raw, &r); err != nil {
				return nil, err
			}
			return &r, nil
		}
	}
	// The structured content is decoded only when the model is shown it:
	// when no content is text.
	if !hasText && len(w.StructuredContent) > 0 && string(w.StructuredContent) != "null" {
		if err := json.Unmarshal(w.StructuredContent, &res.StructuredContent); err != nil {
			return nil, fmt.Errorf("unmarshaling tools/call result: %w", err)
		}
	}
	return res, nil
}
