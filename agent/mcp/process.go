package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/benchhq/bench/internal/procio"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// process is a stdio server's subprocess. It runs in its own process group,
// so that what it starts (npx starts node) is shut down with it.
type process struct {
	cmd    *exec.Cmd
	kill   context.CancelFunc // kills the process group, unless the server has exited
	stdin  *os.File           // our end of the server's stdin
	in     io.WriteCloser     // writes to stdin (newPipeIO)
	out    io.Reader          // reads stdout (newPipeIO), through filter
	stdout *os.File           // our end of the server's stdout
	filter *stdoutFilter
	log    *capBuffer

	exited  chan struct{} // closed when the process has been reaped
	waitErr error         // set before exited is closed
}

// startProcess starts argv in dir with env. Its stderr goes to log.
func startProcess(argv []string, dir string, env []string, log *capBuffer) (*process, error) {
	if len(argv) == 0 || argv[0] == "" {
		return nil, errors.New("empty command")
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("stdin pipe: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, fmt.Errorf("stdout pipe: %w", err)
	}
	// The server outlives the context it was started in (it serves the
	// whole attempt): its own context is cancelled by stop.
	ctx, kill := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdin = inR
	cmd.Stdout = outW
	cmd.Stderr = log
	// A grandchild that keeps stderr open must not hold Wait forever.
	procio.KillGroupOnCancel(cmd, 2*time.Second)
	err = cmd.Start()
	// The child has its own copies now (or never started).
	inR.Close()
	outW.Close()
	if err != nil {
		kill()
		inW.Close()
		outR.Close()
		return nil, err
	}
	out := newPipeIO(outR)
	p := &process{
		cmd:    cmd,
		kill:   kill,
		stdin:  inW,
		in:     newPipeIO(inW),
		stdout: outR,
		out:    out,
		filter: newStdoutFilter(out, frameLimit, log),
		log:    log,
		exited: make(chan struct{}),
	}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// exitStatus describes how the process ended, or "" while it runs.
func (p *process) exitStatus() string {
	select {
	case <-p.exited:
	default:
		return ""
	}
	if p.waitErr == nil {
		return "exit status 0"
	}
	var ee *exec.ExitError
	if errors.As(p.waitErr, &ee) {
		return ee.Error()
	}
	return p.waitErr.Error()
}

// waitExit waits up to d for the process to end and reports whether it has.
func (p *process) waitExit(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	}
}

// stop shuts the process down as the MCP spec asks: close its stdin, wait,
// SIGTERM, wait, SIGKILL; then kills what is left of its process group.
func (p *process) stop(grace time.Duration) {
	p.stdin.Close()
	if !p.waitExit(grace) {
		_ = procio.SignalGroup(p.cmd, syscall.SIGTERM)
		if !p.waitExit(grace) {
			p.kill()
			<-p.exited
		}
	}
	p.kill()
	// Children the server left behind in its group.
	_ = procio.SignalGroup(p.cmd, syscall.SIGKILL)
	p.stdout.Close()
}

// capBuffer is a stdio server's stderr with the harness's notes (lines
// starting "[bench]"): the beginning (a quarter) and the end of it.
type capBuffer struct {
	*procio.Buffer
}

func newCapBuffer(limit int) *capBuffer {
	return &capBuffer{procio.New(limit, limit/4)}
}

// note writes a line of the harness's own into the log.
func (b *capBuffer) note(format string, args ...any) {
	fmt.Fprintf(b, "[bench] "+format+"\n", args...)
}

// String returns what was kept, with a note of the harness's saying how
// much was cut.
func (b *capBuffer) String() string {
	head, tail, cut := b.Parts()
	if cut == 0 {
		return head + tail
	}
	return fmt.Sprintf("%s\n[bench] ... %d bytes of stderr cut ...\n%s", head, cut, tail)
}

// lastLines returns at most n of the last lines kept, for error messages.
func (b *capBuffer) lastLines(n int, maxBytes int) string {
	s := strings.TrimRight(b.String(), "\n")
	if s == "" {
		return ""
	}
	if len(s) > maxBytes {
		s = s[len(s)-maxBytes:]
		for len(s) > 0 && !utf8.RuneStart(s[0]) {
			s = s[1:]
		}
	}
	lines := collapseDrops(strings.Split(s, "\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// dropNote starts the harness's note of a dropped stdout line.
const dropNote = "[bench] dropped a stdout line"

// collapseDrops turns a run of notes of dropped stdout lines into one
// note with their count and the last of them: a server printing garbage
// would otherwise fill an error message with the same line.
func collapseDrops(lines []string) []string {
	var out []string
	for i := 0; i < len(lines); {
		j := i
		for j < len(lines) && strings.HasPrefix(lines[j], dropNote) {
			j++
		}
		switch n := j - i; {
		case n == 0:
			out = append(out, lines[i])
			j = i + 1
		case n == 1:
			out = append(out, lines[i])
		default:
			out = append(out, fmt.Sprintf("[bench] dropped %d stdout lines that are not JSON-RPC messages; the last: %s",
				n, strings.TrimPrefix(lines[j-1], "[bench] dropped ")))
		}
		i = j
	}
	return out
}

// stdoutFilter reads a stdio server's stdout for the connection
// (stdioConn): one JSON-RPC message (or batch) a line. A line that is not
// one (a stray print, a banner, a line over the frame limit) is dropped,
// with a note in the log, rather than break the connection for the rest
// of the attempt. Each line is decoded once: the decoding that checks it
// is the message handed to the SDK.
type stdoutFilter struct {
	r     *bufio.Reader
	limit int
	log   *capBuffer

	// The line being read, kept across transient errors.
	line []byte
	size int
	over bool

	dropped  atomic.Int64
	lastDrop atomic.Value // string

	// sniff, when set, sees every line passed while tools are listed.
	sniff atomic.Pointer[func([]byte)]
}

func newStdoutFilter(r io.Reader, limit int, log *capBuffer) *stdoutFilter {
	return &stdoutFilter{r: bufio.NewReaderSize(r, 64*1024), limit: limit, log: log}
}

// next returns the messages of the next line that holds JSON-RPC
// messages (more than one for a batch), dropping the lines before it that
// do not. The error is the reader's (io.EOF when the server closed its
// stdout); after a transient one (a read deadline, errWouldBlock) the line
// read so far is kept, and next may be called again.
func (f *stdoutFilter) next() ([]jsonrpc.Message, error) {
	return f.nextWith(nil)
}

// nextWith is next, with take, when set, given each line first: a line
// it takes (it reports true) is not decoded, and nextWith returns
// (nil, nil) after it.
func (f *stdoutFilter) nextWith(take func([]byte) bool) ([]jsonrpc.Message, error) {
	for {
		line, size, err := f.readLine()
		if line != nil && take != nil && take(line) {
			return nil, err
		}
		if line != nil {
			if msgs := f.accept(line); msgs != nil {
				return msgs, nil
			}
		} else if size > 0 {
			f.drop(fmt.Sprintf("a stdout line of %d bytes, over the %d-byte limit for one message", size, f.limit))
		}
		if err != nil {
			return nil, err
		}
	}
}

// transient reports whether a read error leaves the pipe usable: the read
// deadline passed, or a read that must not wait found nothing.
func transient(err error) bool {
	return errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, errWouldBlock)
}

// readLine returns the next line without its end, or (nil, size) for a line
// longer than the limit, which is consumed and dropped. On a transient
// error it returns (nil, 0, err) and keeps what it read of the line.
func (f *stdoutFilter) readLine() ([]byte, int, error) {
	for {
		chunk, err := f.r.ReadSlice('\n')
		f.size += len(chunk)
		if !f.over {
			if len(f.line)+len(chunk) > f.limit+2 {
				f.over = true
				f.line = nil
			} else {
				f.line = append(f.line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && transient(err) {
			return nil, 0, err
		}
		buf, size, over := f.line, f.size, f.over
		f.line, f.size, f.over = nil, 0, false
		if over {
			return nil, size, err
		}
		buf = bytes.TrimRight(buf, "\r\n")
		if len(buf) == 0 && err == nil {
			continue // blank line
		}
		if len(buf) == 0 {
			return nil, 0, err
		}
		return buf, size, err
	}
}

// accept returns the JSON-RPC messages of a line, or nil (and a note)
// when it holds none: not JSON, not version "2.0", an id that is neither
// a number nor a string, a response without an id.
func (f *stdoutFilter) accept(line []byte) []jsonrpc.Message {
	trimmed := bytes.TrimSpace(line)
	var msgs []jsonrpc.Message
	var err error
	switch {
	case len(trimmed) > 0 && trimmed[0] == '[':
		var batch []json.RawMessage
		if err = unmarshal(trimmed, &batch); err == nil && len(batch) == 0 {
			err = errors.New("an empty batch")
		}
		for _, raw := range batch {
			var m jsonrpc.Message
			if m, err = decodeMessage(raw); err != nil {
				break
			}
			msgs = append(msgs, m)
		}
	case len(trimmed) > 0 && trimmed[0] == '{':
		var m jsonrpc.Message
		if m, err = decodeMessage(trimmed); err == nil {
			msgs = []jsonrpc.Message{m}
		}
	default:
		err = errors.New("not JSON")
	}
	if err != nil {
		f.drop(fmt.Sprintf("a stdout line that is not a JSON-RPC message (%d bytes): %q", len(line), clip(string(line), 200)))
		return nil
	}
	if s := f.sniff.Load(); s != nil {
		(*s)(trimmed)
	}
	return msgs
}

// wireMessage is a JSON-RPC message as it is written.
type wireMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  json.RawMessage `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *jsonrpc.Error  `json:"error"`
}

// decodeMessage decodes one JSON-RPC message as the SDK's
// jsonrpc.DecodeMessage does, with one parse of the whole line by the
// SDK's own decoder and flags (unmarshal): the SDK's Decoder over a reader
// allocates a 32 KB buffer for every message it reads.
func decodeMessage(data []byte) (jsonrpc.Message, error) {
	var w wireMessage
	if err := unmarshal(data, &w); err != nil {
		return nil, err
	}
	if w.JSONRPC != "2.0" {
		return nil, fmt.Errorf("version %q, not \"2.0\"", w.JSONRPC)
	}
	var idv any
	if len(w.ID) > 0 {
		if err := parse(w.ID, &idv); err != nil {
			return nil, err
		}
	}
	id, err := jsonrpc.MakeID(idv)
	if err != nil {
		return nil, err
	}
	if len(w.Method) > 0 { // the "method" key is there: a request or notification
		var method string
		if err := parse(w.Method, &method); err != nil {
			return nil, fmt.Errorf("method: %w", err)
		}
		return &jsonrpc.Request{Method: method, ID: id, Params: w.Params}, nil
	}
	if !id.IsValid() {
		return nil, errors.New("a response without an id")
	}
	resp := &jsonrpc.Response{ID: id, Result: w.Result}
	if w.Error != nil {
		resp.Error = w.Error
	}
	return resp, nil
}

func (f *stdoutFilter) drop(what string) {
	f.dropped.Add(1)
	f.lastDrop.Store(what)
	f.log.note("dropped %s", what)
}

// droppedSince describes the lines dropped after the count was n, or "".
func (f *stdoutFilter) droppedSince(n int64) string {
	d := f.dropped.Load() - n
	if d <= 0 {
		return ""
	}
	last, _ := f.lastDrop.Load().(string)
	if d == 1 {
		return fmt.Sprintf("meanwhile the server wrote %s, which was dropped", last)
	}
	return fmt.Sprintf("meanwhile the server wrote %d lines that are not JSON-RPC messages, which were dropped (the last: %s)", d, last)
}

// clip shortens s to at most n bytes on a character boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}
