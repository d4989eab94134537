package issuetracker

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func BenchmarkServeCallPipe(b *testing.B) {
	path := filepath.Join(b.TempDir(), "i.json")
	os.WriteFile(path, []byte(sample), 0o644)
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	go Serve(context.Background(), path, sr, sw)
	rd := bufio.NewReader(cr)
	w := func(s string) { cw.Write([]byte(s + "\n")) }
	w(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
	rd.ReadBytes('\n')
	w(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	line := []byte(`{"jsonrpc":"2.0","id":"bench-1","method":"tools/call","params":{"name":"get_issue","arguments":{"id":1}}}` + "\n")
	b.ResetTimer()
	for b.Loop() {
		cw.Write(line)
		if _, err := rd.ReadBytes('\n'); err != nil {
			b.Fatal(err)
		}
	}
}
