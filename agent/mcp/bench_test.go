package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/benchhq/bench/internal/cputime"
	"github.com/benchhq/bench/tasks"
)

// The benchmarks talk to the project's issue tracker over stdio, run as
// `bench mcp serve issues --file ...` (this test binary, whose TestMain
// serves those arguments, stands in for bench). Run them with:
//
//	go test -run '^$' -bench . -benchtime 2000x ./agent/mcp/

func benchServer(b testing.TB) (tasks.Server, Vars) {
	b.Helper()
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "issues.json"), []byte(testIssues), 0o644); err != nil {
		b.Fatal(err)
	}
	// As a task declares it, with the test binary in place of {bench}.
	srv := tasks.Server{Name: "issues", Command: testBinary(), Args: []string{"mcp", "serve", "issues", "--file", "{data}/issues.json"}, DefaultClass: "read"}
	return srv, Vars{Data: dir, Workspace: dir}
}

// reportCPU reports this process's CPU time per call since cpu0, in µs:
// the client side of each call (the server is another process); and the
// share of the machine's processors a virtual machine's host took
// meanwhile for its other guests (steal-%), which skews it.
func reportCPU(b *testing.B, cpu0 time.Duration, m0 cputime.Machine) {
	b.ReportMetric(float64((cputime.Self()-cpu0).Nanoseconds())/1000/float64(b.N), "client-cpu-µs/call")
	if p, ok := cputime.ReadMachine().StealSince(m0); ok {
		b.ReportMetric(p, "steal-%")
	}
}

// reportPercentiles reports the 50th and 99th percentiles of d, in unit
// ("ms" or "µs").
func reportPercentiles(b *testing.B, d []time.Duration, unit string) {
	if len(d) == 0 {
		return
	}
	scale := float64(time.Millisecond)
	if unit == "µs" {
		scale = float64(time.Microsecond)
	}
	slices.Sort(d)
	at := func(p float64) float64 {
		i := min(int(p*float64(len(d))), len(d)-1)
		return float64(d[i]) / scale
	}
	b.ReportMetric(at(0.50), "p50-"+unit)
	b.ReportMetric(at(0.99), "p99-"+unit)
}

// BenchmarkCallRoundTrip: one get_issue call through the adapter to a
// server kept for the whole attempt.
func BenchmarkCallRoundTrip(b *testing.B) {
	srv, vars := benchServer(b)
	c := connect(b, srv, vars, Options{})
	tool := toolNamed(b, c, "issues__get_issue")
	args := map[string]any{"id": 11}
	ctx := context.Background()
	d := make([]time.Duration, 0, b.N)
	cpu0, m0 := cputime.Self(), cputime.ReadMachine()
	for b.Loop() {
		start := time.Now()
		res, err := tool.Call(ctx, args)
		d = append(d, time.Since(start))
		if err != nil || res.IsError {
			b.Fatalf("call: %v %+v", err, res)
		}
	}
	reportCPU(b, cpu0, m0)
	reportPercentiles(b, d, "ms")
}

// BenchmarkStartAndDiscover: what each attempt pays to start the server,
// negotiate, list and prepare its tools, and shut it down.
func BenchmarkStartAndDiscover(b *testing.B) {
	srv, vars := benchServer(b)
	ctx := context.Background()
	d := make([]time.Duration, 0, b.N)
	for b.Loop() {
		start := time.Now()
		c, err := Connect(ctx, srv, vars, Options{})
		if err != nil {
			b.Fatal(err)
		}
		c.Close()
		d = append(d, time.Since(start))
	}
	reportPercentiles(b, d, "ms")
}

// BenchmarkRelaunchPerCall: the same call as BenchmarkCallRoundTrip, done by
// starting the server afresh for the call (what the harness does not do).
func BenchmarkRelaunchPerCall(b *testing.B) {
	srv, vars := benchServer(b)
	ctx := context.Background()
	args := map[string]any{"id": 11}
	d := make([]time.Duration, 0, b.N)
	for b.Loop() {
		start := time.Now()
		c, err := Connect(ctx, srv, vars, Options{})
		if err != nil {
			b.Fatal(err)
		}
		res, err := toolNamed(b, c, "issues__get_issue").Call(ctx, args)
		if err != nil || res.IsError {
			b.Fatalf("call: %v %+v", err, res)
		}
		c.Close()
		d = append(d, time.Since(start))
	}
	reportPercentiles(b, d, "ms")
}

// python is python3 and the absolute path of a file of testdata; the test
// is skipped without python3.
func python(tb testing.TB, script string) (py, path string) {
	tb.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		tb.Skip("python3 is not installed")
	}
	path, err = filepath.Abs(filepath.Join("testdata", script))
	if err != nil {
		tb.Fatal(err)
	}
	return py, path
}

// BenchmarkPipeRoundTrip is the floor under every client-cpu-µs/call: one
// line written to `cat` through a pipe and read back, as a client reading
// in a goroutine of its own does, no JSON and no MCP. On a quiet machine
// it is a few µs; on a loaded one, waking up for the answer costs tens of
// µs, and every client pays it (compare the seed lesson's client in
// BenchmarkSeedComparison, run at the same time).
func BenchmarkPipeRoundTrip(b *testing.B) {
	cmd := exec.Command("cat")
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Skip("no cat:", err)
	}
	defer cmd.Wait()
	defer in.Close()
	lines := make(chan []byte)
	go func() {
		r := bufio.NewReader(out)
		for {
			l, err := r.ReadSlice('\n')
			if err != nil {
				close(lines)
				return
			}
			lines <- append([]byte(nil), l...)
		}
	}()
	msg := []byte(`{"jsonrpc":"2.0","id":"bench-1","method":"tools/call","params":{"name":"get_issue","arguments":{"id":11}}}` + "\n")
	d := make([]time.Duration, 0, b.N)
	cpu0, m0 := cputime.Self(), cputime.ReadMachine()
	for b.Loop() {
		start := time.Now()
		if _, err := in.Write(msg); err != nil {
			b.Fatal(err)
		}
		<-lines
		d = append(d, time.Since(start))
	}
	reportCPU(b, cpu0, m0)
	reportPercentiles(b, d, "µs")
}

// seedServer is the seed lesson's Python MCP server (testdata/seed_server.py,
// its one tool "incidencias"), as a task would declare it.
func seedServer(tb testing.TB) tasks.Server {
	tb.Helper()
	py, abs := python(tb, "seed_server.py")
	return tasks.Server{Name: "seed", Command: py, Args: []string{abs}, DefaultClass: "read"}
}

// BenchmarkSeedComparison times one tool call through bench's MCP client
// (client=bench: the adapter's Tool.Call over the official Go SDK) and
// through the seed lesson's Python client (client=seed-python:
// testdata/seed_client.py, the lesson's client, standard library only),
// against the same two servers, in one run: the project's issue tracker
// (server=bench-go, `bench mcp serve issues`) and the lesson's own Python
// server (server=seed-python). Each reports the round trip's p50 and p99
// in µs and the client's own CPU time per call (client-cpu-µs/call: the
// client process's user + system time; the server is another process).
//
//	go test -run '^$' -bench SeedComparison -benchtime 2000x ./agent/mcp/
func BenchmarkSeedComparison(b *testing.B) {
	py, client := python(b, "seed_client.py")
	type server struct {
		name string
		decl func(b testing.TB) (tasks.Server, Vars)
		tool string
		args map[string]any
	}
	for _, srv := range []server{
		{"bench-go", benchServer, "get_issue", map[string]any{"id": 11}},
		{"seed-python", func(b testing.TB) (tasks.Server, Vars) {
			dir := b.TempDir()
			return seedServer(b), Vars{Workspace: dir}
		}, "incidencias", map[string]any{"estado": "abierta"}},
	} {
		b.Run("server="+srv.name+"/client=bench", func(b *testing.B) {
			decl, vars := srv.decl(b)
			c := connect(b, decl, vars, Options{})
			tool := toolNamed(b, c, decl.Name+Separator+srv.tool)
			ctx := context.Background()
			if _, err := tool.Call(ctx, srv.args); err != nil {
				b.Fatal(err)
			}
			d := make([]time.Duration, 0, b.N)
			pid := c.proc.cmd.Process.Pid
			srv0, srvOK := processCPU(pid)
			cpu0, m0 := cputime.Self(), cputime.ReadMachine()
			for b.Loop() {
				start := time.Now()
				res, err := tool.Call(ctx, srv.args)
				d = append(d, time.Since(start))
				if err != nil || res.IsError {
					b.Fatalf("call: %v %+v", err, res)
				}
			}
			reportCPU(b, cpu0, m0)
			if srv1, ok := processCPU(pid); ok && srvOK {
				b.ReportMetric(float64((srv1-srv0).Nanoseconds())/1000/float64(b.N), "server-cpu-µs/call")
			}
			reportPercentiles(b, d, "µs")
		})
		b.Run("server="+srv.name+"/client=seed-python", func(b *testing.B) {
			decl, vars := srv.decl(b)
			args, _ := json.Marshal(srv.args)
			argv := []string{client, strconv.Itoa(b.N), srv.tool, string(args), decl.Command}
			for _, a := range decl.Args {
				argv = append(argv, newExpander(vars).expand("args", a))
			}
			cmd := exec.Command(py, argv...)
			cmd.Dir = vars.Workspace
			cmd.Env = os.Environ()
			for k, v := range decl.Env {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			cmd.Stderr = os.Stderr
			b.ResetTimer()
			out, err := cmd.Output()
			b.StopTimer()
			if err != nil {
				b.Fatalf("seed client: %v\n%s", err, out)
			}
			var got struct {
				P50 float64 `json:"p50_us"`
				P99 float64 `json:"p99_us"`
				CPU float64 `json:"cpu_us_per_call"`
			}
			if err := json.Unmarshal(out, &got); err != nil {
				b.Fatalf("seed client said %q: %v", out, err)
			}
			b.ReportMetric(got.CPU, "client-cpu-µs/call")
			b.ReportMetric(got.P50, "p50-µs")
			b.ReportMetric(got.P99, "p99-µs")
		})
	}
}

// processCPU returns the user + system CPU time a process has used so far
// (/proc/PID/stat, in clock ticks of 10 ms: meaningful over thousands of
// calls), and whether it could be read.
func processCPU(pid int) (time.Duration, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// The fields after the command's name, which is in parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond, true
}

// answerLine is the issue tracker's answer to get_issue 11, as it writes it.
const answerLine = `{"jsonrpc":"2.0","id":"bench-1","result":{"content":[{"type":"text","text":"#11 [open] Docs typo\nlabels: docs\n\nrecieve\n\n--- comment 1 by bo on unknown\nalso in README"}],"structuredContent":{"body":"recieve","comments":[{"author":"bo","body":"also in README"}],"id":11,"labels":["docs"],"state":"open","title":"Docs typo"}}}`

// BenchmarkDecodeAnswer: what decoding one tools/call answer costs (the
// line and the result in it, as directAnswer does), with the SDK's
// decoder as bench does (decoder=sdk, unmarshal) and with the standard
// library's in its place (decoder=stdlib).
func BenchmarkDecodeAnswer(b *testing.B) {
	line := []byte(answerLine)
	for _, dec := range []struct {
		name      string
		unmarshal func([]byte, any) error
	}{
		{"sdk", unmarshal},
		{"stdlib", json.Unmarshal},
	} {
		b.Run("decoder="+dec.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var w directWire
				if err := dec.unmarshal(line, &w); err != nil {
					b.Fatal(err)
				}
				if _, err := resultFromWire(w.Result, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
