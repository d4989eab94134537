package endpoint_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/benchhq/bench/endpoint"
	"github.com/benchhq/bench/internal/ollamatest"
)

const pullModel = "qwen3:0.6b"

// Each endpoint that lacks the model pulls it, the others are left
// alone; Check then finds the digests agree, or says they do not.
func TestPullMissingPullsWhereMissing(t *testing.T) {
	const digest = "aaaa000000000000000000000000000000000000000000000000000000000001"
	for _, tt := range []struct {
		name       string
		pulled     string // the digest the registry gives
		wantErr    string // of Check afterwards
		wantPulled int
	}{
		{"same weights", digest, "", 1},
		{"other weights", "bbbb000000000000000000000000000000000000000000000000000000000002", "different models", 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			has := ollamatest.New(ollamatest.Turns(), ollamatest.WithDigest(pullModel, digest), ollamatest.WithPullable(ollamatest.Pullable{Name: pullModel, Digest: digest}))
			defer has.Close()
			lacks := ollamatest.New(ollamatest.Turns(), ollamatest.WithPullable(ollamatest.Pullable{Name: pullModel, Digest: tt.pulled, Layers: []int64{3e6, 2e3}}))
			defer lacks.Close()
			p := newPool(t, ollamaEndpoint(t, has, 1), ollamaEndpoint(t, lacks, 1))
			var out bytes.Buffer
			got, err := p.PullMissing(context.Background(), pullModel, endpoint.NewPullProgress(&out, false))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || got[0] != lacks.URL {
				t.Errorf("pulled onto %v, want only %s", got, lacks.URL)
			}
			if has.Pulls(pullModel) != 0 || lacks.Pulls(pullModel) != 1 {
				t.Errorf("pull requests: %d to the one that has it, %d to the other", has.Pulls(pullModel), lacks.Pulls(pullModel))
			}
			// A line per stage, not per update, and one at the end.
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			want := []string{"pulling manifest", "(3 MB)", "(2 KB)", "verifying sha256 digest", "writing manifest", "success", "pulled qwen3:0.6b (3 MB) onto " + lacks.URL}
			if len(lines) != len(want) {
				t.Fatalf("progress lines:\n%s\nwant %d lines", out.String(), len(want))
			}
			for i, w := range want {
				if !strings.Contains(lines[i], w) {
					t.Errorf("line %d %q, want %q", i, lines[i], w)
				}
			}
			_, _, err = p.Check(context.Background(), pullModel, false)
			if (err == nil) != (tt.wantErr == "") || err != nil && !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Check after the pull: %v, want %q", err, tt.wantErr)
			}
			// Pulled once: a second preflight pulls nothing.
			if got, err := p.PullMissing(context.Background(), pullModel, nil); err != nil || len(got) != 0 {
				t.Errorf("second PullMissing: %v, %v", got, err)
			}
		})
	}
}

// A pull that fails says so in one line with the server's reason, and
// leaves the model not pulled.
func TestPullFailures(t *testing.T) {
	for _, tt := range []struct {
		name     string
		model    string
		registry ollamatest.Pullable
		want     []string
		requests int
	}{
		{"unknown to the registry", "qwen3:nope", ollamatest.Pullable{Name: pullModel},
			[]string{"pull qwen3:nope on", ollamatest.ManifestMissing, "ollama.com/library"}, 1},
		{"an invalid name", "Bad Name!", ollamatest.Pullable{Name: pullModel},
			[]string{"pull Bad Name! on", "invalid model name", "qwen3:0.6b"}, 0},
		{"an error midway", pullModel, ollamatest.Pullable{Name: pullModel, Layers: []int64{1e6}, FailAfter: 3e5, Error: "write /root/.ollama/models/blobs/x: no space left on device"},
			[]string{"after 200 KB of 1 MB", "no space left on device"}, 1},
		{"a connection cut midway", pullModel, ollamatest.Pullable{Name: pullModel, Layers: []int64{1e6}, FailAfter: 5e5},
			[]string{"ended the pull before it finished", "pulling "}, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := ollamatest.New(ollamatest.Turns(), ollamatest.WithPullable(tt.registry))
			defer srv.Close()
			p := newPool(t, ollamaEndpoint(t, srv, 1))
			var out bytes.Buffer
			_, err := p.PullMissing(context.Background(), tt.model, endpoint.NewPullProgress(&out, true))
			var pe *endpoint.PullError
			if !errors.As(err, &pe) {
				t.Fatalf("PullMissing: %v, want a *PullError", err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("more than one line: %q", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if n := srv.Pulls(tt.model); n != tt.requests {
				t.Errorf("%d pull requests, want %d", n, tt.requests)
			}
			if strings.Contains(out.String(), "pulled ") {
				t.Errorf("a failed pull said it pulled: %q", out.String())
			}
			if _, _, err := p.Check(context.Background(), tt.model, false); err == nil {
				t.Error("the model is there after a failed pull")
			}
		})
	}
}

// On a terminal the pull is one bar, redrawn, and one line at the end.
func TestPullProgressBar(t *testing.T) {
	srv := ollamatest.New(ollamatest.Turns(), ollamatest.WithPullable(ollamatest.Pullable{Name: pullModel, Layers: []int64{5e6}, Step: 5e5, Delay: 15 * time.Millisecond}))
	defer srv.Close()
	p := newPool(t, ollamaEndpoint(t, srv, 1))
	var out bytes.Buffer
	if _, err := p.PullMissing(context.Background(), pullModel, endpoint.NewPullProgress(&out, true)); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	if !strings.Contains(s, "\r") || !strings.Contains(s, "pulling qwen3:0.6b") || !strings.Contains(s, "MB") {
		t.Errorf("no bar drawn: %q", s)
	}
	if !strings.HasSuffix(s, "pulled qwen3:0.6b (5.0 MB) onto "+srv.URL+" in 0s\n") && !strings.Contains(s, "pulled qwen3:0.6b (5 MB) onto "+srv.URL) {
		t.Errorf("last line of %q", s)
	}
	if strings.Count(s, "\n") != 1 {
		t.Errorf("a bar, then one line: %q", s)
	}
}

// What answers at Ollama's default address decides what EnsureLocal does:
// an Ollama server is used, something else is refused in one line, and
// nothing with no ollama command says how to install it.
func TestEnsureLocal(t *testing.T) {
	ollama := ollamatest.New(ollamatest.Turns())
	defer ollama.Close()
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "<html>It works!</html>", http.StatusNotFound)
	}))
	defer web.Close()
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close() // accepts (the kernel does), never answers
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	nothing := "http://" + closed.Addr().String()
	closed.Close()

	for _, tt := range []struct {
		name, url string
		want      string // "" for a server used as it is
	}{
		{"an Ollama server", ollama.URL, ""},
		{"a web server", web.URL, "something that is not Ollama answers at " + web.URL + " (GET /api/version: HTTP 404 <html>It works!</html>)"},
		{"a silent listener", "http://" + silent.Addr().String(), "gives no HTTP answer"},
		{"nothing and no command", nothing, "no `bench-no-such-ollama` command is on PATH"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l, err := endpoint.EnsureLocal(context.Background(), endpoint.LocalOptions{URL: tt.url, Command: "bench-no-such-ollama", LogPath: t.TempDir() + "/log", Then: "bench run --model m"})
			if l != nil {
				l.Stop()
				t.Fatal("started a server")
			}
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %v, want one line with %q", err, tt.want)
			}
			if strings.Contains(tt.want, "PATH") && (!strings.Contains(err.Error(), "install.sh") || !strings.Contains(err.Error(), "`bench run --model m`")) {
				t.Errorf("does not say how to install Ollama and what then to run: %v", err)
			}
		})
	}
}
