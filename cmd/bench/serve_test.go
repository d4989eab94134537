package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/benchhq/bench/internal/ollamatest"
	"github.com/benchhq/bench/internal/openaitest"
	"github.com/benchhq/bench/results"
)

const examplesSuite = "../../tasks/suites/examples"

// startServe runs `bench serve` in-process on a free port and returns its
// base URL; it is stopped (as by Ctrl-C) at the end of the test.
func startServe(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	var errb syncBuffer
	done := make(chan int, 1)
	go func() {
		code := Main(ctx, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...), pw, &errb)
		pw.Close()
		done <- code
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			t.Error("bench serve did not stop within a minute of Ctrl-C")
		}
	})
	sc := bufio.NewScanner(pr)
	if !sc.Scan() {
		t.Fatalf("bench serve printed nothing: %s", errb.String())
	}
	go io.Copy(io.Discard, pr)
	line := sc.Text()
	_, url, ok := strings.Cut(line, "listening at ")
	if !ok {
		t.Fatalf("bench serve said %q", line)
	}
	return strings.TrimSuffix(strings.Fields(url)[0], "/")
}

// syncBuffer is a bytes.Buffer safe for one writer and readers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// post sends a request and returns the response, its events read one by
// one by the caller.
func post(t *testing.T, url string, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(url+"/v1/rollouts", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// events reads a stream's events into ch, then closes it.
func events(r io.Reader, ch chan<- map[string]any) {
	defer close(ch)
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil {
			ch <- m
		}
	}
}

// slowOnPhonebook answers the phonebook task slowly and the others at once.
func slowOnPhonebook(delay time.Duration) ollamatest.Script {
	fast := ollamatest.Turns(
		ollamatest.Reply{Content: "let me see", Calls: []ollamatest.Call{{Name: "list_dir", Args: map[string]any{"path": "."}}}},
		ollamatest.Reply{Content: "done"},
	)
	return func(req *api.ChatRequest) ollamatest.Reply {
		rep := fast(req)
		for _, m := range req.Messages {
			if m.Role == "user" && strings.Contains(m.Content, "phone book") {
				rep.Delay = delay
			}
		}
		return rep
	}
}

// TestServeGroupsWhileAnotherRequestRuns: a client gets its scored group,
// with exact token data, while a second client's request is still
// running on the same service; both are stored as runs.
func TestServeGroupsWhileAnotherRequestRuns(t *testing.T) {
	srv := openaitest.New(slowOnPhonebook(3*time.Second), openaitest.WithModels("qwen"), openaitest.WithTokenIDs())
	defer srv.Close()
	db := filepath.Join(t.TempDir(), "serve.db")
	url := startServe(t, "--suite", examplesSuite, "--api", "openai", "--host", srv.URL, "--model", "qwen", "-j", "4", "--max-requests", "2", "--db", db)

	slow := make(chan map[string]any, 16)
	go events(post(t, url, `{"tasks": ["phonebook-sort"], "attempts": 2, "name": "slow"}`).Body, slow)
	if ev := <-slow; ev["event"] != "accepted" {
		t.Fatalf("first event %v", ev)
	}
	// The slow request is running before the fast one is sent.
	if ev := <-slow; ev["event"] != "started" {
		t.Fatalf("second event %v", ev)
	}
	fast := make(chan map[string]any, 16)
	go events(post(t, url, `{"tasks": ["recipe-trailing-dot"], "attempts": 2, "options": {"temperature": 0.5}, "name": "fast"}`).Body, fast)
	var group map[string]any
	for ev := range fast {
		if ev["event"] == "group" {
			group = ev
		}
		if ev["event"] == "done" || ev["event"] == "error" {
			if ev["event"] == "error" {
				t.Fatalf("fast request: %v", ev)
			}
			break
		}
	}
	if group == nil {
		t.Fatal("the fast request streamed no group")
	}
	// The slow request has not ended meanwhile.
	resp, err := http.Get(url + "/v1/health")
	if err != nil {
		t.Fatal(err)
	}
	var health map[string]any
	json.NewDecoder(resp.Body).Decode(&health)
	resp.Body.Close()
	if health["running"].(float64) != 1 || health["queue_depth"].(float64) < 1 {
		t.Errorf("health %v once the fast request is done: want the slow one running with attempts to go", health)
	}
	if group["task_id"] != "recipe-trailing-dot" || group["complete"] != true || len(group["attempts"].([]any)) != 2 {
		t.Fatalf("group %v", group)
	}
	for _, a := range group["attempts"].([]any) {
		at := a.(map[string]any)
		if at["status"] != "finished" || at["reward"] == nil || at["advantage"] == nil {
			t.Errorf("attempt %v: want finished, scored, with an advantage", at)
		}
		ids, mask := at["completion_ids"].([]any), at["env_mask"].([]any)
		if len(at["prompt_ids"].([]any)) == 0 || len(ids) == 0 || len(mask) != len(ids) || len(at["logprobs"].([]any)) != len(ids) {
			t.Errorf("attempt %v: want exact token data", at["index"])
		}
	}
	for ev := range slow {
		if ev["event"] == "error" {
			t.Fatalf("slow request: %v", ev)
		}
		if ev["event"] == "done" && ev["stored"].(float64) != 2 {
			t.Errorf("slow request done: %v", ev)
		}
	}
	store, err := results.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	for _, id := range []string{"slow", "fast"} {
		ms, err := store.AttemptMetrics(context.Background(), id)
		if err != nil || len(ms) != 2 {
			t.Errorf("run %s: %d attempts stored (%v), want 2", id, len(ms), err)
		}
	}
}

// TestServeBadInput: requests the service refuses before running
// anything, each with a clear error; a client that disconnects mid-stream
// leaves the attempts finished stored, the run interrupted, and the
// token export with only those.
func TestServeBadInput(t *testing.T) {
	srv := openaitest.New(slowOnPhonebook(20*time.Second), openaitest.WithModels("qwen"), openaitest.WithTokenIDs())
	defer srv.Close()
	db := filepath.Join(t.TempDir(), "serve.db")
	url := startServe(t, "--suite", examplesSuite, "--api", "openai", "--host", srv.URL, "--model", "qwen", "-j", "4", "--db", db)
	for _, tt := range []struct{ body, want string }{
		{`{"tasks": ["no-such-task"], "attempts": 2}`, `"no-such-task" is not a task of the suite examples (tasks: access-log-regex`},
		{`{"tasks": ["recipe-trailing-dot"], "atempts": 2}`, `unknown field "atempts"`},
		{`{"tasks": "recipe-trailing-dot"}`, `field tasks: expected []string`},
		{`{"tasks": ["recipe-trailing-dot"], "advantage": "grpo-batch"}`, "grpo-batch"},
		{`{"tasks": ["recipe-trailing-dot"], "arm": {"approver": "terminal"}}`, "arm.approver"},
		{``, "request body: empty"},
	} {
		resp := post(t, url, tt.body)
		var e struct{ Error string }
		json.NewDecoder(resp.Body).Decode(&e)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(e.Error, tt.want) {
			t.Errorf("%s: HTTP %d %q; want 400 saying %q", tt.body, resp.StatusCode, e.Error, tt.want)
		}
	}
	if resp, _ := http.Get(url + "/v1/rollouts/nope"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET an unknown request: HTTP %d", resp.StatusCode)
	}

	// A client gone mid-stream: the fast group is stored, the slow one's
	// attempts are dropped, and the run says it was interrupted.
	resp := post(t, url, `{"tasks": ["phonebook-sort", "recipe-trailing-dot"], "attempts": 2, "name": "gone"}`)
	ch := make(chan map[string]any, 16)
	go events(resp.Body, ch)
	for ev := range ch {
		if ev["event"] == "group" {
			if ev["task_id"] != "recipe-trailing-dot" {
				t.Fatalf("first group %v", ev)
			}
			break
		}
	}
	resp.Body.Close()
	deadline := time.Now().Add(30 * time.Second)
	var st map[string]any
	for time.Now().Before(deadline) {
		r, err := http.Get(url + "/v1/rollouts/gone")
		if err != nil {
			t.Fatal(err)
		}
		st = map[string]any{}
		json.NewDecoder(r.Body).Decode(&st)
		r.Body.Close()
		if st["state"] != "running" {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if st["state"] != "canceled" || !strings.Contains(st["error"].(string), "disconnected") {
		t.Fatalf("request after its client left: %v", st)
	}
	// DELETE cancels a running request: its stream ends with a done
	// event that says so.
	resp = post(t, url, `{"tasks": ["phonebook-sort"], "attempts": 2, "name": "deleted"}`)
	ch = make(chan map[string]any, 16)
	go events(resp.Body, ch)
	for ev := range ch {
		if ev["event"] == "started" {
			break
		}
	}
	req, _ := http.NewRequest(http.MethodDelete, url+"/v1/rollouts/deleted", nil)
	if r, err := http.DefaultClient.Do(req); err != nil || r.StatusCode != http.StatusAccepted {
		t.Fatalf("DELETE: %v %v", r, err)
	}
	var last map[string]any
	for ev := range ch {
		last = ev
	}
	if last["event"] != "done" || last["canceled"] != true || !strings.Contains(last["reason"].(string), "DELETE") {
		t.Errorf("stream of a deleted request ended with %v", last)
	}
	code, out, stderr := bench(t, "export", "--db", db, "--run", "gone", "--tokens", "trl")
	if code != 0 || strings.Count(out, "\n") != 2 || strings.Contains(out, "phonebook") {
		t.Errorf("export of the interrupted run: exit %d, %d lines\n%s", code, strings.Count(out, "\n"), stderr)
	}
}

// TestPythonRolloutExample runs docs/examples/bench_rollouts.py, the TRL
// rollout_func client (Python's standard library only), against a real
// bench serve: it gets a batch of G attempts with exact token data.
func TestPythonRolloutExample(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	srv := openaitest.New(toolScript, openaitest.WithModels("qwen"), openaitest.WithTokenIDs())
	defer srv.Close()
	db := filepath.Join(t.TempDir(), "serve.db")
	url := startServe(t, "--suite", examplesSuite, "--api", "openai", "--host", srv.URL, "--model", "qwen", "-j", "2", "--db", db)
	cmd := exec.Command(python, "../../docs/examples/bench_rollouts.py", "--url", url, "--task", "recipe-trailing-dot", "--attempts", "2", "--temperature", "0.7", "--endpoint", srv.URL)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python example: %v\n%s", err, stderr.String())
	}
	var got struct {
		Attempts         int       `json:"attempts"`
		CompletionTokens []int     `json:"completion_tokens"`
		SampledTokens    []int     `json:"sampled_tokens"`
		Rewards          []float64 `json:"rewards"`
		Advantages       []float64 `json:"advantages"`
		Health           struct {
			Status string `json:"status"`
		} `json:"health"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("python example printed %s: %v", out, err)
	}
	// What the scripted server sampled, over both attempts, is what the
	// masks cover.
	sampled, turns := 0, 0
	for _, s := range srv.Sampled() {
		sampled += len(s.CompletionIDs)
		turns++
	}
	if got.Attempts != 2 || len(got.Rewards) != 2 || len(got.Advantages) != 2 || got.Health.Status != "ok" || turns != 6 ||
		len(got.SampledTokens) != 2 || got.SampledTokens[0]+got.SampledTokens[1] != sampled || got.CompletionTokens[0] <= got.SampledTokens[0] {
		t.Errorf("python example: %+v; the server sampled %d tokens over %d turns", got, sampled, turns)
	}
}
