package mcp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/internal/procio"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tool is one of a server's tools, offered to the model. It implements
// agent.Tool.
type Tool struct {
	conn   *Conn
	spec   agent.Spec
	info   ToolInfo
	output outputCheck
}

var _ agent.Tool = (*Tool)(nil)

// Spec returns the tool as the model and the policy see it.
func (t *Tool) Spec() agent.Spec { return t.spec }

// Call calls the tool on the server with arguments already validated
// against its schema. Every failure of the server is an error observation
// (a Result with IsError); the error return is only for the attempt's own
// context ending.
func (t *Tool) Call(ctx context.Context, args map[string]any) (agent.Result, error) {
	c := t.conn
	if why := c.unavailable(); why != "" {
		r := errorResult("%s cannot be called: %s; the tools of server %q are unavailable for the rest of this attempt", t.spec.Name, why, c.srv.Name)
		r.Kind = "transport"
		return r, nil
	}
	if err := ctx.Err(); err != nil {
		return agent.Result{}, fmt.Errorf("call %s: %w", t.spec.Name, err)
	}
	var dropped0, over0 int64
	if c.proc != nil {
		dropped0 = c.proc.filter.dropped.Load()
	}
	if c.httpTap != nil {
		over0 = c.httpTap.oversize.Load()
	}
	if args == nil {
		args = map[string]any{}
	}
	w := c.watches.start(c, t.spec.Name)
	defer c.watches.stop(w)
	res, err := c.callTool(ctx, t.info.Tool, args, w)
	if err != nil {
		if ctx.Err() != nil {
			return agent.Result{}, fmt.Errorf("call %s: %w", t.spec.Name, ctx.Err())
		}
		text, kind := t.failure(err, dropped0, w)
		if c.httpTap != nil && c.httpTap.oversize.Load() > over0 {
			text, kind = fmt.Sprintf("%s: server %q sent an answer over %s, which bench did not read", t.spec.Name, c.srv.Name, sizeText(c.httpTap.limitOr())), "transport"
		}
		return agent.Result{Text: text, IsError: true, Kind: kind, Details: callDetails(nil, w)}, nil
	}
	text := formatResult(res, resultLimit)
	if why := t.output.check(res); why != "" {
		// The model still reads what came back, after the reason.
		return agent.Result{Text: fmt.Sprintf("%s: the result of server %q cannot be trusted: %s. It was:\n%s", t.spec.Name, c.srv.Name, clip(why, 2000), text), IsError: true, Kind: "bad_output", Details: callDetails(res, w)}, nil
	}
	return agent.Result{Text: text, IsError: res.IsError, Details: callDetails(res, w)}, nil
}

// callTool calls a tool on the server, with w's progress token, waiting
// for its answer until w's deadline (errCallTimeout): directly on a stdio
// connection (stdioConn.callTool), through the SDK otherwise.
func (c *Conn) callTool(ctx context.Context, name string, args map[string]any, w *callWatch) (*sdk.CallToolResult, error) {
	if c.stdio != nil && c.stdio.conn != nil {
		res, err := c.stdio.conn.callTool(ctx, name, args, w)
		if !errors.Is(err, errNoDirectCall) {
			return res, err
		}
	}
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	// The watchdog: the SDK takes a context, whose deadline progress
	// could not move.
	done := make(chan struct{})
	defer close(done)
	go func() {
		t := time.NewTimer(time.Until(w.deadline()))
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if d := w.deadline(); time.Now().Before(d) {
					t.Reset(time.Until(d))
					continue
				}
				cancel(errCallTimeout)
				return
			}
		}
	}()
	params := &sdk.CallToolParams{Name: name, Arguments: args}
	params.SetProgressToken(w.token)
	res, err := c.session.CallTool(cctx, params)
	if err != nil && cctx.Err() != nil {
		c.cancels.Add(1) // the SDK sends notifications/cancelled in the background
		if ctx.Err() == nil && errors.Is(context.Cause(cctx), errCallTimeout) {
			return nil, fmt.Errorf("%w: %v", errCallTimeout, err)
		}
	}
	return res, err
}

// progressNote tells, for a timeout observation, what the server last
// reported.
func progressNote(w *callWatch) string {
	p := w.progress()
	if p.Count == 0 {
		return ""
	}
	s := fmt.Sprintf(" (it reported progress %d times, last %s", p.Count, formatProgress(p))
	if w.max <= 0 {
		s += "; progress extends a call only when the server's declaration sets max_call_time"
	}
	return s + ")"
}

// formatProgress shows one progress report: "3/10: message".
func formatProgress(p Progress) string {
	s := strconv.FormatFloat(p.Progress, 'f', -1, 64)
	if p.Total > 0 {
		s += "/" + strconv.FormatFloat(p.Total, 'f', -1, 64)
	}
	if p.Message != "" {
		s += ": " + p.Message
	}
	return s
}

// FormatProgress shows one progress report as `bench mcp call` prints it.
func FormatProgress(p Progress) string { return formatProgress(p) }

// callDetails is what is stored with a call beside its observation: the
// structured content, the last progress reported and how many times.
func callDetails(res *sdk.CallToolResult, w *callWatch) json.RawMessage {
	d := struct {
		Structured any       `json:"structured_content,omitempty"`
		Progress   *Progress `json:"progress,omitempty"`
	}{}
	if res != nil && res.StructuredContent != nil {
		d.Structured = res.StructuredContent
	}
	if p := w.progress(); p.Count > 0 {
		d.Progress = &p
	}
	if d.Structured == nil && d.Progress == nil {
		return nil
	}
	b, err := json.Marshal(d)
	if err != nil || len(b) > detailsLimit {
		b, _ = json.Marshal(map[string]string{"note": fmt.Sprintf("details of %d bytes not kept (at most %d)", len(b), detailsLimit)})
	}
	return b
}

// detailsLimit bounds the details stored with one call.
const detailsLimit = 64 << 10

// sizeText shows a size in MiB, or KiB below one MiB.
func sizeText(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d KiB", n>>10)
}

func errorResult(format string, args ...any) agent.Result {
	return agent.Result{Text: fmt.Sprintf(format, args...), IsError: true}
}

// failure describes a failed call for the model, with its kind for the
// store ("timeout", "protocol", "transport"), and marks the connection
// broken when the server is gone.
func (t *Tool) failure(err error, dropped0 int64, w *callWatch) (string, string) {
	c := t.conn
	var notes []string
	if c.proc != nil {
		if d := c.proc.filter.droppedSince(dropped0); d != "" {
			notes = append(notes, d)
		}
	}
	suffix := ""
	if len(notes) > 0 {
		suffix = " (" + strings.Join(notes, "; ") + ")"
	}
	var rpcErr *jsonrpc.Error
	switch {
	case errors.Is(err, errCallTimeout):
		return fmt.Sprintf("%s: server %q did not answer within %s%s; the call was abandoned%s", t.spec.Name, c.srv.Name, w.limit(), progressNote(w), suffix), "timeout"
	case errors.As(err, &rpcErr) && !localCode(rpcErr.Code):
		return fmt.Sprintf("%s: server %q answered with a protocol error (code %d): %s%s", t.spec.Name, c.srv.Name, rpcErr.Code, clip(rpcErr.Message, 2000), suffix), "protocol"
	}
	// Anything else is a transport failure: the SDK's first error for a
	// server that died is a bare EOF.
	if c.proc != nil {
		// A server that closed its stdout is almost always exiting: give it
		// time to be reaped, so that the observation can say how it ended.
		wait := time.Second
		if errors.Is(err, io.EOF) || errors.Is(err, sdk.ErrConnectionClosed) {
			wait = 5 * time.Second
		}
		if c.proc.waitExit(wait) {
			// Not "during the call": a server that exited right after its
			// last answer is reaped only once this call has been sent.
			why := fmt.Sprintf("the server exited without answering the call (%s)", c.proc.exitStatus())
			c.markBroken(why)
			return fmt.Sprintf("%s: %s; the tools of server %q are unavailable for the rest of this attempt%s", t.spec.Name, why, c.srv.Name, suffix), "transport"
		}
		if errors.Is(err, io.EOF) || errors.Is(err, sdk.ErrConnectionClosed) {
			why := fmt.Sprintf("the connection to the server was lost (%v)", err)
			c.markBroken(why)
			return fmt.Sprintf("%s: %s; the tools of server %q are unavailable for the rest of this attempt%s", t.spec.Name, why, c.srv.Name, suffix), "transport"
		}
	}
	return fmt.Sprintf("%s: the call to server %q failed: %s%s", t.spec.Name, c.srv.Name, clip(err.Error(), 2000), suffix), "transport"
}

// localCode reports whether a JSON-RPC error code is one the SDK makes up
// on this side (the transport rejected the request, the client is closing),
// not one the server sent.
func localCode(code int64) bool {
	return code == -32005 || code == -32003
}

// formatResult turns a tool result into the text the model reads: text
// content as is, other content summarised, structured content appended
// when there is no text and it does not repeat the content (see
// showStructured), everything cut at limit bytes with a note.
func formatResult(res *sdk.CallToolResult, limit int) string {
	// One text that fits, the common answer: as is, without a copy.
	if len(res.Content) == 1 {
		if t, ok := res.Content[0].(*sdk.TextContent); ok && t.Text != "" && len(t.Text) <= limit {
			return t.Text
		}
	}
	w := procio.New(limit, limit) // the beginning only
	hasText := false
	for i, c := range res.Content {
		if i > 0 {
			w.WriteString("\n")
		}
		switch v := c.(type) {
		case *sdk.TextContent:
			hasText = true
			w.WriteString(v.Text)
		case *sdk.ImageContent:
			fmt.Fprintf(w, "[%s, %d bytes]", orDefault(v.MIMEType, "image"), len(v.Data))
		case *sdk.AudioContent:
			fmt.Fprintf(w, "[%s, %d bytes]", orDefault(v.MIMEType, "audio"), len(v.Data))
		case *sdk.ResourceLink:
			w.WriteString(describeLink(v))
		case *sdk.EmbeddedResource:
			r := v.Resource
			switch {
			case r == nil:
				w.WriteString("[embedded resource without contents]")
			case r.Blob != nil:
				fmt.Fprintf(w, "[resource %s: %s, %d bytes]", r.URI, orDefault(r.MIMEType, "binary"), len(r.Blob))
			default:
				hasText = true
				fmt.Fprintf(w, "[resource %s (%s)]\n", r.URI, orDefault(r.MIMEType, "text"))
				w.WriteString(r.Text)
			}
		default:
			fmt.Fprintf(w, "[content of an unexpected kind: %T]", c)
		}
	}
	if !hasText && res.StructuredContent != nil {
		if b, ok := showStructured(res); ok {
			if len(res.Content) > 0 {
				w.WriteString("\n")
			}
			w.Write(b)
		}
	}
	if w.Len() == 0 {
		if res.IsError {
			return "(the tool reported an error without saying what)"
		}
		return "(the tool returned no content)"
	}
	text, _, cut := w.Parts()
	if cut == 0 {
		return text
	}
	return fmt.Sprintf("%s\n[bench: result cut: showing the first %d of %d bytes]", text, len(text), w.Len())
}

// minMirror is the shortest binary content (in bytes) whose base64 form
// found in the structured content makes it a copy of the content: below
// it, a match could be chance.
const minMirror = 12

// showStructured returns the structured content as JSON for the model, and
// whether to show it at all. A result without text content gets its
// structured content shown, once: not when it carries the base64 data of
// an image, audio or binary resource already summarised above (a server
// mirroring its content, as server-filesystem's read_media_file does, would
// otherwise put the whole file into every later prompt).
func showStructured(res *sdk.CallToolResult) ([]byte, bool) {
	b, err := json.Marshal(res.StructuredContent)
	if err != nil || string(b) == "null" {
		return nil, false
	}
	for _, c := range res.Content {
		var data []byte
		switch v := c.(type) {
		case *sdk.ImageContent:
			data = v.Data
		case *sdk.AudioContent:
			data = v.Data
		case *sdk.EmbeddedResource:
			if v.Resource != nil {
				data = v.Resource.Blob
			}
		}
		if len(data) < minMirror {
			continue
		}
		// A prefix of the encoding is enough, and cheaper than all of it.
		n := min(len(data), 3*1024) / 3 * 3
		if bytes.Contains(b, []byte(base64.StdEncoding.EncodeToString(data[:n]))) {
			return nil, false
		}
	}
	return b, true
}

func describeLink(l *sdk.ResourceLink) string {
	var parts []string
	if l.Name != "" {
		parts = append(parts, l.Name)
	}
	if l.MIMEType != "" {
		parts = append(parts, l.MIMEType)
	}
	if l.Size != nil {
		parts = append(parts, fmt.Sprintf("%d bytes", *l.Size))
	}
	s := "[resource link " + l.URI
	if len(parts) > 0 {
		s += " (" + strings.Join(parts, ", ") + ")"
	}
	if l.Description != "" {
		s += ": " + l.Description
	}
	return s + "]"
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
