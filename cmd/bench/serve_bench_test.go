package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/benchhq/bench/internal/cputime"
	"github.com/benchhq/bench/internal/openaitest"
)

// BenchmarkServeOverhead compares what an attempt costs through bench
// serve with what it costs through bench run, against the scripted
// OpenAI-compatible server with token ids (three turns, two tool calls,
// hidden tests): the CPU time of bench and all it started (sandboxes,
// hidden tests), per attempt. "run" is one bench run of G attempts per
// iteration; "serve" is one request of G attempts per iteration to one
// bench serve started before the first. Each reports cpu-ms/attempt
// (meaningful under load) and wall-ms/attempt (not, on a shared machine).
//
//	go test -run '^$' -bench ServeOverhead -benchtime 5x ./cmd/bench/
func BenchmarkServeOverhead(b *testing.B) {
	const g = 8
	bin, err := builtBench()
	if err != nil {
		b.Fatal(err)
	}
	srv := openaitest.New(toolScript, openaitest.WithModels("qwen"), openaitest.WithTokenIDs())
	defer srv.Close()
	cache := b.TempDir()
	env := append(os.Environ(), "BENCH_CACHE="+cache)
	report := func(b *testing.B, cpu, wall time.Duration) {
		n := float64(b.N * g)
		b.ReportMetric(float64(cpu.Microseconds())/1000/n, "cpu-ms/attempt")
		b.ReportMetric(float64(wall.Microseconds())/1000/n, "wall-ms/attempt")
		b.ReportMetric(0, "ns/op")
	}
	b.Run("run", func(b *testing.B) {
		dir := b.TempDir()
		var wall time.Duration
		cpu0 := cputime.Children()
		for i := range b.N {
			cmd := exec.Command(bin, "run", "--api", "openai", "--host", srv.URL, "--model", "qwen", "--task", recipeTask, "--tokens",
				"--attempts", fmt.Sprint(g), "-j", "4", "--no-progress", "--db", filepath.Join(dir, "bench.db"), "--name", fmt.Sprintf("r%d", i))
			cmd.Env = env
			start := time.Now()
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("bench run: %v\n%s", err, out)
			}
			wall += time.Since(start)
		}
		report(b, cputime.Children()-cpu0, wall)
	})
	b.Run("serve", func(b *testing.B) {
		dir := b.TempDir()
		cpu0 := cputime.Children()
		cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--suite", examplesSuite, "--api", "openai", "--host", srv.URL,
			"--model", "qwen", "-j", "4", "--db", filepath.Join(dir, "bench.db"))
		cmd.Env = env
		out, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		if !sc.Scan() {
			b.Fatal("bench serve printed nothing")
		}
		_, url, _ := strings.Cut(sc.Text(), "listening at ")
		url = strings.TrimSuffix(strings.Fields(url)[0], "/")
		var wall time.Duration
		for range b.N {
			start := time.Now()
			resp, err := http.Post(url+"/v1/rollouts", "application/json", strings.NewReader(fmt.Sprintf(`{"tasks": ["recipe-trailing-dot"], "attempts": %d}`, g)))
			if err != nil {
				b.Fatal(err)
			}
			ev := bufio.NewScanner(resp.Body)
			ev.Buffer(nil, 1<<24)
			var last map[string]any
			for ev.Scan() {
				last = map[string]any{}
				json.Unmarshal(ev.Bytes(), &last)
			}
			resp.Body.Close()
			if last["event"] != "done" || last["stored"].(float64) != g {
				b.Fatalf("request ended with %v", last)
			}
			wall += time.Since(start)
		}
		cmd.Process.Signal(syscall.SIGINT)
		if err := cmd.Wait(); err != nil {
			b.Fatalf("bench serve: %v", err)
		}
		report(b, cputime.Children()-cpu0, wall)
	})
}
