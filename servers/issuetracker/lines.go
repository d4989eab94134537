package issuetracker

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxLine bounds one message a client sends: a longer line is refused
// (the connection ends) rather than buffered without end.
const maxLine = 16 << 20

// lineTransport is newline-delimited JSON-RPC over a reader and a writer,
// as the SDK's IOTransport, for a server: each line is read into one
// buffer kept for the connection and decoded once, and each answer is
// encoded once and written with one system call. The SDK's IOTransport
// decodes a message several times over, each time with a new 32 KB
// buffer, and hands it across a goroutine of its own: most of the
// server's CPU per call, and its round trip (docs/performance.md). It
// reads no batches (JSON-RPC arrays), which revisions from 2025-06-18 on
// do not have; a batch is answered with an error.
type lineTransport struct {
	in     io.ReadCloser
	out    io.WriteCloser
	direct *direct // nil: every message goes to the SDK
}

// Connect implements mcp.Transport.
func (t *lineTransport) Connect(context.Context) (mcp.Connection, error) {
	return &lineConn{in: t.in, r: bufio.NewReaderSize(t.in, 64<<10), out: t.out, direct: t.direct}, nil
}

// lineConn is one connection of a lineTransport (mcp.Connection).
type lineConn struct {
	direct *direct
	in     io.ReadCloser
	r      *bufio.Reader
	buf    []byte // a line longer than r's buffer, put together

	wmu  sync.Mutex
	out  io.WriteCloser
	wbuf []byte

	closeOnce sync.Once
	closeErr  error
}

// Read implements mcp.Connection: the next message. A line that is not a
// JSON-RPC message gets a parse error written back (as the SDK does) and
// is skipped.
func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		line, err := c.line()
		if err != nil {
			return nil, err
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if line[0] == '[' {
			c.reply(jsonrpc.CodeInvalidRequest, "batches are not supported")
			continue
		}
		if req := c.direct.request(line); req != nil {
			if resp := c.direct.answer(req); resp != nil {
				if err := c.writeDirect(resp); err != nil {
					return nil, err
				}
				continue
			}
		}
		msg, err := jsonrpc.DecodeMessage(line)
		if err != nil {
			c.reply(jsonrpc.CodeParseError, err.Error())
			continue
		}
		if req, ok := msg.(*jsonrpc.Request); ok {
			c.direct.sawRequest(req)
		}
		return msg, nil
	}
}

// line reads one line, without its end.
func (c *lineConn) line() ([]byte, error) {
	line, err := c.r.ReadSlice('\n')
	if err == nil || (errors.Is(err, io.EOF) && len(line) > 0) {
		return line, nil
	}
	if !errors.Is(err, bufio.ErrBufferFull) {
		return nil, err
	}
	c.buf = append(c.buf[:0], line...)
	for {
		line, err = c.r.ReadSlice('\n')
		c.buf = append(c.buf, line...)
		if len(c.buf) > maxLine {
			return nil, fmt.Errorf("a line of over %d bytes", maxLine)
		}
		switch {
		case err == nil:
			return c.buf, nil
		case errors.Is(err, io.EOF) && len(c.buf) > 0:
			return c.buf, nil
		case !errors.Is(err, bufio.ErrBufferFull):
			return nil, err
		}
	}
}

// reply writes an error response without an id, for a line that could not
// be read as a request.
func (c *lineConn) reply(code int64, msg string) {
	_ = c.Write(context.Background(), &jsonrpc.Response{Error: &jsonrpc.Error{Code: code, Message: msg}})
}

// Write implements mcp.Connection: one message, one line, one write.
func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.direct.sawResponse(resp)
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.wbuf = append(append(c.wbuf[:0], data...), '\n')
	_, err = c.out.Write(c.wbuf)
	return err
}

// writeDirect writes the direct path's answer.
func (c *lineConn) writeDirect(resp *jsonrpc.Response) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	b, err := appendResponse(c.wbuf[:0], resp)
	if err != nil {
		return err
	}
	c.wbuf = b
	_, err = c.out.Write(b)
	return err
}

// Close implements mcp.Connection.
func (c *lineConn) Close() error {
	c.closeOnce.Do(func() {
		c.closeErr = errors.Join(c.in.Close(), c.out.Close())
	})
	return c.closeErr
}

// SessionID implements mcp.Connection: stdio has no sessions.
func (c *lineConn) SessionID() string { return "" }
