package issuetracker

import (
	"context"
	"io"
	"os"
	"runtime"
	"runtime/debug"
)

// serveGCPercent is the garbage collector's target of a process that
// serves over stdio, unless GOGC says otherwise: the SDK allocates a 32 KB
// decoding buffer for each of the several decodings of a tool call, so
// that at Go's default (100) the collector ran every few dozen calls and
// took a third of the server's CPU; 200 halves that for a few MB more
// heap (docs/performance.md, section 5).
const serveGCPercent = 200

// ServeStdio is the whole of a `bench mcp serve issues` process: Serve over
// the process's stdin and stdout, tuned for one client that waits for
// each answer. Its garbage collector's target is serveGCPercent, and when
// stdin is a pipe it is read through Go's poller, on one processor: a
// read of the inherited, blocking stdin keeps a thread in a system call
// between requests, and each request then crossed threads (waking one
// cost more than the tool's own work). GOGC and GOMAXPROCS, when set, win.
func ServeStdio(ctx context.Context, path string) error {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(serveGCPercent)
	}
	in, polled := pollableStdin()
	defer in.Close()
	if _, set := os.LookupEnv("GOMAXPROCS"); polled && !set {
		runtime.GOMAXPROCS(1)
	}
	return Serve(ctx, path, in, nopWriteCloser{os.Stdout})
}

// nopWriteCloser is stdout, which Serve must not close.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
