package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
)

// httpTap is the RoundTripper of a Streamable HTTP server: it adds the
// operator's headers to every request and, while tools are listed, lets
// the raw JSON-RPC messages of the responses be seen (for the schemas as
// the server wrote them).
type httpTap struct {
	base    http.RoundTripper
	headers http.Header
	sniff   atomic.Pointer[func([]byte)]
	// cancels counts the notifications/cancelled POSTed (answered or not).
	cancels atomic.Int64
	// limit bounds one message (0: frameLimit).
	limit int
	// oversize counts the messages past limit, not read.
	oversize atomic.Int64
}

// maxPeek bounds the request body looked at for a cancellation.
const maxPeek = 4096

// isCancellation reports whether req carries a notifications/cancelled.
func isCancellation(req *http.Request) bool {
	if req.Method != http.MethodPost || req.GetBody == nil || req.ContentLength <= 0 || req.ContentLength > maxPeek {
		return false
	}
	body, err := req.GetBody()
	if err != nil {
		return false
	}
	defer body.Close()
	b, err := io.ReadAll(io.LimitReader(body, maxPeek))
	return err == nil && bytes.Contains(b, []byte(`"notifications/cancelled"`))
}

// maxSniff bounds how much of one response is kept for sniffing.
const maxSniff = 16 << 20

// RoundTrip implements http.RoundTripper.
func (t *httpTap) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 {
		req = req.Clone(req.Context())
		for k, v := range t.headers {
			req.Header[k] = v
		}
	}
	if isCancellation(req) {
		defer t.cancels.Add(1)
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	sse := strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")
	limit := t.limitOr()
	if sse || req.Method != http.MethodPost || resp.StatusCode != http.StatusOK {
		resp.Body = &limitBody{rc: resp.Body, sse: sse, max: limit, over: &t.oversize}
	} else if err := t.boundJSON(req, resp, limit); err != nil {
		return nil, err
	}
	if req.Method != http.MethodPost {
		return resp, nil
	}
	if fn := t.sniff.Load(); fn != nil {
		resp.Body = &tapBody{rc: resp.Body, sse: sse, fn: *fn}
	}
	return resp, nil
}

// tapBody copies a response body as it is read and hands the JSON-RPC
// messages in it to fn when it ends.
type tapBody struct {
	rc   io.ReadCloser
	sse  bool
	fn   func([]byte)
	buf  bytes.Buffer
	over bool
	done bool
}

func (b *tapBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 && !b.over {
		if b.buf.Len()+n > maxSniff {
			b.over = true
			b.buf.Reset()
		} else {
			b.buf.Write(p[:n])
		}
		if b.sse && !b.over {
			b.events(false)
		}
	}
	if err != nil {
		b.flush()
	}
	return n, err
}

func (b *tapBody) Close() error {
	b.flush()
	return b.rc.Close()
}

func (b *tapBody) flush() {
	if b.done || b.over {
		return
	}
	b.done = true
	if b.sse {
		b.events(true)
		return
	}
	b.fn(bytes.TrimSpace(b.buf.Bytes()))
}

// events hands over each complete server-sent event in the buffer (all of
// it at the end), before the SDK reads it: the data lines of an event make
// one message.
func (b *tapBody) events(final bool) {
	for {
		data := b.buf.Bytes()
		end, skip := bytes.Index(data, []byte("\n\n")), 2
		if i := bytes.Index(data, []byte("\r\n\r\n")); i >= 0 && (end < 0 || i < end) {
			end, skip = i, 4
		}
		if end < 0 {
			if !final || len(bytes.TrimSpace(data)) == 0 {
				return
			}
			end, skip = len(data), 0
		}
		var lines []string
		for _, line := range strings.Split(string(data[:end]), "\n") {
			line = strings.TrimSuffix(line, "\r")
			if rest, ok := strings.CutPrefix(line, "data:"); ok {
				lines = append(lines, strings.TrimPrefix(rest, " "))
			}
		}
		b.buf.Next(end + skip)
		if len(lines) > 0 {
			b.fn([]byte(strings.Join(lines, "\n")))
		}
	}
}

// limitOr is the tap's limit, or frameLimit.
func (t *httpTap) limitOr() int {
	if t.limit > 0 {
		return t.limit
	}
	return frameLimit
}

// boundJSON reads a JSON response body up to limit. One over it is not
// read further: in its place the SDK reads a JSON-RPC error answering the
// request (the SDK would otherwise take the failed body for a broken
// connection, and every later call would fail).
func (t *httpTap) boundJSON(req *http.Request, resp *http.Response, limit int) error {
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, int64(limit)+1))
	if err != nil {
		return fmt.Errorf("read the response: %w", err)
	}
	if len(data) > limit {
		t.oversize.Add(1)
		id := requestID(req)
		if id == nil {
			return errTooLarge
		}
		data, _ = json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id,
			"error": map[string]any{"code": codeTooLarge, "message": errTooLarge.Error()}})
		resp.ContentLength = int64(len(data))
		resp.Header.Del("Content-Length")
	}
	resp.Body = io.NopCloser(bytes.NewReader(data))
	return nil
}

// codeTooLarge is the code of the error that stands for an answer over
// the limit (one of JSON-RPC's implementation-defined server errors).
const codeTooLarge = -32099

// requestID returns the id of the JSON-RPC request req carries, or nil.
func requestID(req *http.Request) any {
	if req.GetBody == nil {
		return nil
	}
	body, err := req.GetBody()
	if err != nil {
		return nil
	}
	defer body.Close()
	var m struct {
		ID any `json:"id"`
	}
	if json.NewDecoder(io.LimitReader(body, maxPeek*256)).Decode(&m) != nil {
		return nil
	}
	return m.ID
}

// limitBody bounds one message a server sends over HTTP, as frameLimit
// bounds a stdio server's line: a JSON body at max bytes, an event stream
// at max bytes from one event to the next. Past it the body fails, and
// the call waiting for it gets an error (a 1 GB resource is an error
// observation, not 1 GB in memory).
type limitBody struct {
	rc   io.ReadCloser
	sse  bool
	max  int
	over *atomic.Int64 // counts the bodies that went over max
	n    int           // bytes of the body (JSON) or of the current event (SSE)
	// blank says the stream's current line is empty so far (SSE): a line
	// feed then ends the event.
	blank bool
}

// errTooLarge is the error of a body past its limit.
var errTooLarge = errors.New("the server sent a message over bench's limit (64 MiB by default), which bench does not read")

func (b *limitBody) Read(p []byte) (int, error) {
	if b.n > b.max {
		return 0, errTooLarge
	}
	n, err := b.rc.Read(p)
	if !b.sse {
		b.n += n
	} else {
		for _, c := range p[:n] {
			switch c {
			case '\n':
				if b.blank {
					b.n = 0 // an empty line: the event ended
					continue
				}
				b.blank = true
			case '\r':
			default:
				b.blank = false
			}
			b.n++
		}
	}
	if b.n > b.max {
		if b.over != nil {
			b.over.Add(1)
		}
		return n, errTooLarge
	}
	return n, err
}

func (b *limitBody) Close() error { return b.rc.Close() }
