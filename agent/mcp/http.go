package mcp

import (
	"bytes"
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
	resp.Body = &limitBody{rc: resp.Body, sse: sse, max: frameLimit}
	if req.Method != http.MethodPost {
		return resp, err
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

// limitBody bounds one message a server sends over HTTP, as frameLimit
// bounds a stdio server's line: a JSON body at max bytes, an event stream
// at max bytes from one event to the next. Past it the body fails, and
// the call waiting for it gets an error (a 1 GB resource is an error
// observation, not 1 GB in memory).
type limitBody struct {
	rc  io.ReadCloser
	sse bool
	max int
	n   int // bytes of the body (JSON) or of the current event (SSE)
	// blank says the stream's current line is empty so far (SSE): a line
	// feed then ends the event.
	blank bool
}

// errTooLarge is the error of a body past its limit.
var errTooLarge = fmt.Errorf("the server sent a message over %d MiB, which bench does not read", frameLimit>>20)

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
		return n, errTooLarge
	}
	return n, err
}

func (b *limitBody) Close() error { return b.rc.Close() }
