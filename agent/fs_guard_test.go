package agent

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// These tests turn the file tools against the harness: a file that would
// take bench's memory, a line that would outlast the attempt, a named pipe
// that would block a tool forever.

// TestEditFileResultTooLarge: edit_file refuses an edit whose result would
// pass maxEditBytes before it builds the result, and leaves the file as it
// was.
func TestEditFileResultTooLarge(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	big := strings.Repeat("a", 1<<20)
	nearLimit := strings.Repeat("b", maxEditBytes-10) + "\nEND\n"
	writeFiles(t, fx.root, map[string]string{"big.txt": big, "near.txt": nearLimit, "small.txt": "one two\n", "huge.txt": "a"})
	if err := os.Truncate(filepath.Join(fx.root, "huge.txt"), 2<<30); err != nil { // sparse: no disk needed
		t.Fatal(err)
	}
	reg := testRegistry(t, fx, BuiltinOptions{})
	long := strings.Repeat("x", 200)
	tests := []struct {
		toolCase
		file, content string // what the file must hold after the call
	}{
		{toolCase{name: "replace_all of a letter by 200 bytes", wantErr: true,
			args: map[string]any{"path": "big.txt", "old_string": "a", "new_string": long, "replace_all": true},
			want: []string{"big.txt", "1048576 occurrences", "209715200 bytes", "at most 8388608", "run_command"}}, "big.txt", big},
		{toolCase{name: "one replacement past the limit", wantErr: true,
			args: map[string]any{"path": "near.txt", "old_string": "END", "new_string": long},
			want: []string{"near.txt", "1 occurrence", "8388800 bytes", "at most 8388608"}}, "near.txt", nearLimit},
		{toolCase{name: "new_string alone past the limit", wantErr: true,
			args: map[string]any{"path": "small.txt", "old_string": "two", "new_string": strings.Repeat("y", maxEditBytes)},
			want: []string{"small.txt", "at most 8388608"}}, "small.txt", "one two\n"},
		{toolCase{name: "a file of 2 GiB is not read", wantErr: true,
			args: map[string]any{"path": "huge.txt", "old_string": "a", "new_string": "b"},
			want: []string{"huge.txt is too large to edit (2147483648 bytes, at most 8388608)"}}, "", ""},
		{toolCase{name: "up to the limit is allowed",
			args: map[string]any{"path": "near.txt", "old_string": "END", "new_string": "01234567"},
			want: []string{"replaced 1 occurrence in near.txt"}}, "near.txt", strings.Repeat("b", maxEditBytes-10) + "\n01234567\n"},
		{toolCase{name: "shrinking a file is allowed",
			args:  map[string]any{"path": "big.txt", "old_string": "aaaa", "new_string": "", "replace_all": true},
			exact: "replaced 262144 occurrences in big.txt (lines 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, ...)"}, "big.txt", ""},
	}
	for _, tt := range tests {
		runToolCases(t, fx, reg, "edit_file", []toolCase{tt.toolCase})
		if tt.file == "" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(fx.root, tt.file))
		if err != nil || string(data) != tt.content {
			t.Errorf("%s: %s holds %d bytes, %v; want %d", tt.name, tt.file, len(data), err, len(tt.content))
		}
	}
}

// TestEditFileRefusalMemory measures what a refused edit allocates: the
// file it reads, not the result it refuses. It does not run in parallel, so
// that the counts are its own.
func TestEditFileRefusalMemory(t *testing.T) {
	fx := newFixture(t)
	const size = 1 << 20
	writeFiles(t, fx.root, map[string]string{"big.txt": strings.Repeat("a", size)})
	reg := testRegistry(t, fx, BuiltinOptions{})
	tool, _ := reg.Lookup("edit_file")
	args := map[string]any{"path": "big.txt", "old_string": "a", "new_string": strings.Repeat("x", 200), "replace_all": true}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res, err := tool.Call(context.Background(), args)
	runtime.ReadMemStats(&after)
	if err != nil || !res.IsError {
		t.Fatalf("edit_file: %+v, %v; want a refusal", res, err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 2*size {
		t.Errorf("a refused edit of a %d-byte file allocated %d bytes; want at most %d (the result would be %d)", size, got, 2*size, size*200)
	}
}

// BenchmarkEditFileRefused is the case of the issue: an 8 MiB file, every
// letter replaced by 200 bytes. B/op is what the refusal costs (the file
// read once).
func BenchmarkEditFileRefused(b *testing.B) {
	fx := newFixture(b)
	if err := os.WriteFile(filepath.Join(fx.root, "big.txt"), []byte(strings.Repeat("a", maxEditBytes)), 0o644); err != nil {
		b.Fatal(err)
	}
	tool := editFileTool{fileTool{fx.ws}}
	args := map[string]any{"path": "big.txt", "old_string": "a", "new_string": strings.Repeat("x", 200), "replace_all": true}
	b.ReportAllocs()
	for b.Loop() {
		if res, err := tool.Call(context.Background(), args); err != nil || !res.IsError {
			b.Fatalf("edit_file: %+v, %v; want a refusal", res, err)
		}
	}
}

// BenchmarkEditFileReplaceAll is an allowed edit of an 8 MiB file: the
// result is built once, at its size.
func BenchmarkEditFileReplaceAll(b *testing.B) {
	fx := newFixture(b)
	p := filepath.Join(fx.root, "big.txt")
	content := []byte(strings.Repeat("abcdefgh\n", maxEditBytes/9))
	tool := editFileTool{fileTool{fx.ws}}
	args := map[string]any{"path": "big.txt", "old_string": "d", "new_string": "D", "replace_all": true}
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		if err := os.WriteFile(p, content, 0o644); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if res, err := tool.Call(context.Background(), args); err != nil || res.IsError {
			b.Fatalf("edit_file: %+v, %v", res, err)
		}
	}
}

// TestContainsSqueezed: the whitespace hint of edit_file agrees with
// collapsing the white space of both texts and searching, which it does
// without building the collapsed file. It does not run in parallel, for
// AllocsPerRun.
func TestContainsSqueezed(t *testing.T) {
	tests := []struct {
		content, old string
		want         bool
	}{
		{"hello there\n", "hello  there", true},
		{"hello\n\tthere\n", "hello there", true},
		{"hello there\n", "hello\nthere\n", true},
		{"hello there\n", "world", false},
		{"hellothere\n", "hello there", false},
		{"hello there\n", "hellothere", false},
		{"xhello   therex", "hello there", true},
		{"aab aab aac", "aab aac", true},
		{"aab aab aab", "aab aac", false},
		{"a\u00a0\u2003b", "a b", true},
		{"a\xffb  c", "\xffb c", true},
		{"", "  ", true},
		{"abc", "", true},
		{"ab", "abc", false},
	}
	for _, tt := range tests {
		ref := strings.Contains(squeezeSpace(tt.content), squeezeSpace(tt.old))
		if ref != tt.want {
			t.Fatalf("the case %q in %q is wrong: collapsing gives %v", tt.old, tt.content, ref)
		}
		if got := containsSqueezed([]byte(tt.content), tt.old); got != tt.want {
			t.Errorf("containsSqueezed(%q, %q) = %v, want %v", tt.content, tt.old, got, tt.want)
		}
	}
	content := []byte(strings.Repeat("a ", 1<<20))
	if allocs := testing.AllocsPerRun(5, func() { containsSqueezed(content, "a  b") }); allocs > 5 {
		t.Errorf("containsSqueezed on %d bytes: %v allocations a run; want a few, whatever the size", len(content), allocs)
	}
}

// stingyCtx is a context that ends after its Err has said nil once: it
// stands for an attempt whose deadline passes while a tool is busy.
type stingyCtx struct {
	context.Context
	mu    sync.Mutex
	calls int
}

func (c *stingyCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	if c.calls > 1 {
		return context.DeadlineExceeded
	}
	return nil
}

// TestReadFileDeadlineInLongLine: the attempt's deadline ends read_file
// inside a single long line, without reading it to its end.
func TestReadFileDeadlineInLongLine(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	tests := []struct {
		name string
		size int64 // the file: text, then zeros up to size, no newline
		args map[string]any
	}{
		{"one line of 1 GiB", 1 << 30, map[string]any{"path": "wide.txt"}},
		{"a range inside it", 1 << 30, map[string]any{"path": "wide.txt", "start_line": 2, "end_line": 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := os.Create(filepath.Join(fx.root, "wide.txt"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteString(strings.Repeat("text ", 2000)); err != nil {
				t.Fatal(err)
			}
			if err := f.Truncate(tt.size); err != nil { // sparse: no disk needed
				t.Fatal(err)
			}
			f.Close()
			ctx := &stingyCtx{Context: context.Background()}
			res, err := readFileTool{fileTool{fx.ws}}.Call(ctx, tt.args)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("read_file after the deadline: %.200q, %v; want the deadline's error", res.Text, err)
			}
		})
	}
}

// TestFileToolsNamedPipe: a named pipe (or a socket) planted in the
// workspace, for example by a command, never blocks a tool: the tools that
// read or write a file refuse it, list_dir shows it, search skips it.
func TestFileToolsNamedPipe(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	for _, p := range []string{"fifo", "sub/fifo"} {
		if err := mkfifo(filepath.Join(fx.root, p)); err != nil {
			t.Skip("mkfifo:", err)
		}
	}
	if err := os.Symlink("fifo", filepath.Join(fx.root, "fifo_link")); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, fx.root, map[string]string{"sub/c.txt": "needle\n"})
	reg := testRegistry(t, fx, BuiltinOptions{})
	tests := []struct {
		tool string
		toolCase
	}{
		{"read_file", toolCase{name: "read", args: map[string]any{"path": "fifo"}, wantErr: true, want: []string{"fifo is not a regular file (a named pipe)"}}},
		{"read_file", toolCase{name: "read a link to it", args: map[string]any{"path": "fifo_link"}, wantErr: true, want: []string{"not a regular file"}}},
		{"write_file", toolCase{name: "write", args: map[string]any{"path": "fifo", "content": "x"}, wantErr: true, want: []string{"not a regular file"}}},
		{"write_file", toolCase{name: "write a link to it", args: map[string]any{"path": "fifo_link", "content": "x"}, wantErr: true, want: []string{"not a regular file"}}},
		{"edit_file", toolCase{name: "edit", args: map[string]any{"path": "fifo", "old_string": "a", "new_string": "b"}, wantErr: true, want: []string{"not a regular file"}}},
		{"list_dir", toolCase{name: "list", args: map[string]any{"path": "sub", "recursive": true}, want: []string{"sub/fifo (a named pipe)", "sub/c.txt"}}},
		{"list_dir", toolCase{name: "list it", args: map[string]any{"path": "fifo"}, wantErr: true, want: []string{"not a folder"}}},
		{"search", toolCase{name: "search around it", args: map[string]any{"pattern": "needle"}, want: []string{"sub/c.txt:1: needle"}}},
		{"search", toolCase{name: "search it", args: map[string]any{"pattern": "needle", "path": "fifo"}, want: []string{"no matches", "(0 files searched)"}}},
		{"search", toolCase{name: "search a link to it", args: map[string]any{"pattern": "needle", "path": "fifo_link"}, want: []string{"(0 files searched)"}}},
	}
	for _, tt := range tests {
		runToolCases(t, fx, reg, tt.tool, []toolCase{tt.toolCase})
	}
}

// TestFileToolsPipeSwappedIn: something that runs beside the agent (a
// sandboxed MCP server, a command of the confined mode) swaps a file for a
// named pipe between a tool's check and its open. Opening a pipe blocks
// until the other end is opened: the tool must refuse the pipe, never open
// it as a file. A helper plays the other end, so that a tool that opened
// the pipe comes back (with an empty file) instead of hanging the test.
func TestFileToolsPipeSwappedIn(t *testing.T) {
	t.Parallel()
	const rounds = 10000
	tests := []struct {
		tool     string
		args     map[string]any
		peerFlag int               // how the helper opens the pipe's other end
		ok       func(Result) bool // a result of the plain file or a refusal
	}{
		{"read_file", map[string]any{"path": "slot"}, os.O_WRONLY, func(r Result) bool {
			return r.Text == "     1\tplain\n" || strings.Contains(r.Text, "not a regular file")
		}},
		{"search", map[string]any{"pattern": "plain", "path": "slot"}, os.O_WRONLY, func(r Result) bool {
			return r.Text == "slot:1: plain\n" || strings.Contains(r.Text, "(0 files searched)")
		}},
		{"write_file", map[string]any{"path": "slot", "content": "plain\n"}, os.O_RDONLY, func(r Result) bool {
			return r.Text == "overwrote slot: wrote 6 bytes" || strings.Contains(r.Text, "not a regular file")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			t.Parallel()
			fx := newFixture(t)
			plain, pipe := filepath.Join(fx.root, "plain"), filepath.Join(fx.root, "pipe")
			writeFiles(t, fx.root, map[string]string{"plain": "plain\n"})
			if err := mkfifo(pipe); err != nil {
				t.Skip("mkfifo:", err)
			}
			reg := testRegistry(t, fx, BuiltinOptions{})
			ctx, cancel := context.WithCancel(context.Background())
			tmp, slot := filepath.Join(fx.root, "tmp"), filepath.Join(fx.root, "slot")
			if err := os.Link(plain, slot); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			var wroteInto atomic.Bool
			wg.Add(2)
			// Swap plain and pipe at "slot", atomically, again and again. The
			// pipe goes first: renaming a link of plain over slot, already a
			// link of plain, would do nothing and leave tmp behind.
			go func() {
				defer wg.Done()
				for i := 1; ctx.Err() == nil; i++ {
					src := plain
					if i%2 == 1 {
						src = pipe
					}
					if os.Link(src, tmp) == nil {
						os.Rename(tmp, slot)
					}
				}
			}()
			go func() { // the pipe's other end, for a tool that opened it
				defer wg.Done()
				buf := make([]byte, 64)
				for ctx.Err() == nil {
					f, err := os.OpenFile(pipe, tt.peerFlag|syscall.O_NONBLOCK, 0)
					if err != nil {
						time.Sleep(20 * time.Microsecond)
						continue
					}
					if tt.peerFlag == os.O_RDONLY {
						time.Sleep(200 * time.Microsecond)
						if n, _ := f.Read(buf); n > 0 {
							wroteInto.Store(true)
						}
					}
					f.Close()
				}
			}()
			bad := 0
			var first Result
			for range rounds {
				res := callTool(t, reg, tt.tool, tt.args)
				if !tt.ok(res) {
					if bad == 0 {
						first = res
					}
					bad++
				}
			}
			cancel()
			wg.Wait()
			if bad > 0 {
				t.Errorf("%s opened the pipe swapped in for the file in %d of %d calls; the first said %q", tt.tool, bad, rounds, first.Text)
			}
			if wroteInto.Load() {
				t.Errorf("%s wrote into the pipe swapped in for the file", tt.tool)
			}
		})
	}
}

// TestOpenRegular: the opening all file tools share refuses what is not a
// regular file, at once, whatever the access asked for.
func TestOpenRegular(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	if err := mkfifo(filepath.Join(fx.root, "fifo")); err != nil {
		t.Skip("mkfifo:", err)
	}
	root, err := os.OpenRoot(fx.root)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	tests := []struct {
		name    string
		path    string
		flag    int
		wantErr string
	}{
		{"read a pipe", "fifo", os.O_RDONLY, "not a regular file (a named pipe)"},
		{"write a pipe", "fifo", os.O_WRONLY, "not a regular file (a named pipe)"},
		{"create over a pipe", "fifo", os.O_WRONLY | os.O_CREATE, "not a regular file (a named pipe)"},
		{"read and write a pipe", "fifo", os.O_RDWR, "not a regular file (a named pipe)"},
		{"read a folder", "sub", os.O_RDONLY, "not a regular file (a folder)"},
		{"read a file", "a.txt", os.O_RDONLY, ""},
		{"write a file", "a.txt", os.O_RDWR, ""},
		{"create a file", "new.txt", os.O_WRONLY | os.O_CREATE, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, fi, err := openRegular(root, tt.path, tt.flag, 0o644)
			if tt.wantErr == "" {
				if err != nil || !fi.Mode().IsRegular() {
					t.Fatalf("openRegular(%s): %v, %v", tt.path, fi, err)
				}
				f.Close()
				return
			}
			if err == nil {
				f.Close()
				t.Fatalf("openRegular(%s) opened it", tt.path)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("openRegular(%s): %v; want %q", tt.path, err, tt.wantErr)
			}
		})
	}
}

// TestWalkFSNamedPipe: the walks of list_dir and search open folders in a
// way that a folder swapped for a named pipe cannot block.
func TestWalkFSNamedPipe(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	if err := mkfifo(filepath.Join(fx.root, "fifo")); err != nil {
		t.Skip("mkfifo:", err)
	}
	root, err := os.OpenRoot(fx.root)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	fsys := walkFS{root}
	if entries, err := fs.ReadDir(fsys, "fifo"); err == nil {
		t.Errorf("ReadDir of a named pipe: %v, no error", entries)
	}
	if f, err := fsys.Open("fifo"); err == nil {
		f.Close() // opened at once, without waiting for a writer
	}
	entries, err := fs.ReadDir(fsys, "sub")
	if err != nil || len(entries) != 3 || entries[0].Name() != "b.txt" {
		t.Errorf("ReadDir of a folder: %v, %v", entries, err)
	}
	var walked []string
	err = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		walked = append(walked, p)
		return err
	})
	if err != nil || !slices.Contains(walked, "fifo") || !slices.Contains(walked, "sub/b.txt") {
		t.Errorf("WalkDir: %v, %v", walked, err)
	}
}
