package mcp

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestCapBuffer(t *testing.T) {
	b := newCapBuffer(100)
	b.Write([]byte(strings.Repeat("h", 25)))
	b.Write([]byte(strings.Repeat("m", 999) + "\n"))
	b.Write([]byte("the end\n"))
	s := b.String()
	if !strings.HasPrefix(s, strings.Repeat("h", 25)+"\n[bench] ... 933 bytes of stderr cut ...\n") || !strings.HasSuffix(s, "mmm\nthe end\n") {
		t.Errorf("String = %q", s)
	}
	if got := b.lastLines(1, 100); got != "the end" {
		t.Errorf("lastLines = %q", got)
	}
	small := newCapBuffer(100)
	small.Write([]byte("short\n"))
	if small.String() != "short\n" {
		t.Errorf("String = %q", small.String())
	}
}

// TestCapBufferUTF8: a server writing multi-byte characters never gets
// its stderr stored as broken UTF-8, whatever the cut.
func TestCapBufferUTF8(t *testing.T) {
	b := newCapBuffer(64)
	for range 100 {
		b.Write([]byte("日"))
	}
	s := b.String()
	if !utf8.ValidString(s) || !strings.Contains(s, "bytes of stderr cut") {
		t.Errorf("String = %q", s)
	}
	if l := b.lastLines(1, 10); !utf8.ValidString(l) {
		t.Errorf("lastLines = %q", l)
	}
}

func TestStdoutFilter(t *testing.T) {
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`Server running on stdio`,
		``,
		`{"not":"jsonrpc"}`,
		`{"jsonrpc":"2.0","id":2,` + strings.Repeat(" ", 200) + `"result":{}}`, // over the limit
		`[{"jsonrpc":"2.0","id":3,"result":{}}]`,
		`{"jsonrpc":"2.0","id":4,"result":{}}`, // no final newline
	}, "\r\n")
	log := newCapBuffer(4096)
	f := newStdoutFilter(strings.NewReader(in), 100, log)
	var ids []any
	for {
		msgs, err := f.next()
		for _, m := range msgs {
			ids = append(ids, m.(*jsonrpc.Response).ID.Raw())
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if want := []any{int64(1), int64(3), int64(4)}; !reflect.DeepEqual(ids, want) {
		t.Errorf("passed the messages of ids %v, want %v", ids, want)
	}
	if n := f.dropped.Load(); n != 3 {
		t.Errorf("dropped %d lines, want 3", n)
	}
	notes := log.String()
	for _, w := range []string{`(23 bytes): "Server running on stdio"`, `"{\"not\":\"jsonrpc\"}"`, "a stdout line of 238 bytes, over the 100-byte limit"} {
		if !strings.Contains(notes, w) {
			t.Errorf("notes lack %q:\n%s", w, notes)
		}
	}
	if d := f.droppedSince(2); !strings.Contains(d, "meanwhile the server wrote a stdout line of 238 bytes") {
		t.Errorf("droppedSince = %q", d)
	}
}

func TestFormatResult(t *testing.T) {
	size := int64(7)
	tests := []struct {
		name  string
		res   *sdk.CallToolResult
		limit int
		want  string
	}{
		{"empty", &sdk.CallToolResult{}, 100, "(the tool returned no content)"},
		{"text", &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "a"}, &sdk.TextContent{Text: "b"}}}, 100, "a\nb"},
		{"image without type", &sdk.CallToolResult{Content: []sdk.Content{&sdk.ImageContent{Data: []byte{1, 2}}}}, 100, "[image, 2 bytes]"},
		{"link", &sdk.CallToolResult{Content: []sdk.Content{&sdk.ResourceLink{URI: "x:/y", Size: &size}}}, 100, "[resource link x:/y (7 bytes)]"},
		{"structured after non-text", &sdk.CallToolResult{Content: []sdk.Content{&sdk.AudioContent{MIMEType: "audio/ogg"}}, StructuredContent: map[string]any{"k": 1}}, 100,
			"[audio/ogg, 0 bytes]\n{\"k\":1}"},
		{"structured mirroring an image", &sdk.CallToolResult{Content: []sdk.Content{&sdk.ImageContent{MIMEType: "image/png", Data: []byte("0123456789abcdef")}},
			StructuredContent: map[string]any{"data": "MDEyMzQ1Njc4OWFiY2RlZg==", "mimeType": "image/png"}}, 100, "[image/png, 16 bytes]"},
		{"structured beside an image it does not repeat", &sdk.CallToolResult{Content: []sdk.Content{&sdk.ImageContent{MIMEType: "image/png", Data: []byte("0123456789abcdef")}},
			StructuredContent: map[string]any{"width": 4}}, 100, "[image/png, 16 bytes]\n{\"width\":4}"},
		{"structured ignored beside text", &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "t"}}, StructuredContent: map[string]any{"k": 1}}, 100, "t"},
		{"cut", &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Repeat("é", 10)}}}, 5,
			"éé\n[bench: result cut: showing the first 4 of 20 bytes]"},
		{"one text at the limit", &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "abcde"}}}, 5, "abcde"},
		{"one text over the limit", &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "abcdef"}}}, 5,
			"abcde\n[bench: result cut: showing the first 5 of 6 bytes]"},
		{"one empty text", &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{}}, IsError: true}, 5, "(the tool reported an error without saying what)"},
		{"one invalid UTF-8 text", &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "a\xffb"}}}, 5, "a\xffb"},
	}
	for _, tt := range tests {
		if got := formatResult(tt.res, tt.limit); got != tt.want {
			t.Errorf("%s: formatResult = %q, want %q", tt.name, got, tt.want)
		}
	}
}
