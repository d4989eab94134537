package issuetracker

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkServeCallPipe: one get_issue call to Serve over in-process
// pipes, the client a bare line writer and reader: the server's own cost
// per call, without a process boundary (for a CPU profile of it:
// -cpuprofile). The cross-process figures are agent/mcp's
// BenchmarkSeedComparison (server-cpu-µs/call).
func BenchmarkServeCallPipe(b *testing.B) {
	path := filepath.Join(b.TempDir(), "issues.json")
	if err := os.WriteFile(path, []byte(sample), 0o644); err != nil {
		b.Fatal(err)
	}
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go Serve(ctx, path, sr, sw)
	defer cw.Close()
	rd := bufio.NewReader(cr)
	send := func(s string) {
		if _, err := io.WriteString(cw, s+"\n"); err != nil {
			b.Fatal(err)
		}
	}
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
	if _, err := rd.ReadBytes('\n'); err != nil {
		b.Fatal(err)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	line := []byte(`{"jsonrpc":"2.0","id":"bench-1","method":"tools/call","params":{"name":"get_issue","arguments":{"id":1}}}` + "\n")
	for b.Loop() {
		if _, err := cw.Write(line); err != nil {
			b.Fatal(err)
		}
		if _, err := rd.ReadBytes('\n'); err != nil {
			b.Fatal(err)
		}
	}
}
