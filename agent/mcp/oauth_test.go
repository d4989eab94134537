package mcp

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/benchhq/bench/tasks"
	"github.com/modelcontextprotocol/go-sdk/auth"
)

// freeLoopback returns a redirect URL on a loopback port nobody listens on.
func freeLoopback(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr + "/callback"
}

// The code comes straight back from an authorization server that grants
// at once; from one that wants a person to sign in, it comes back through
// the browser to bench's loopback listener, after bench showed the URL.
func TestCodeFetcher(t *testing.T) {
	redirect := freeLoopback(t)
	as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/at-once":
			http.Redirect(w, r, redirect+"?code=c1&state="+r.URL.Query().Get("state"), http.StatusFound)
		case "/login":
			w.Write([]byte("<form>sign in</form>"))
		case "/refuse":
			http.Redirect(w, r, redirect+"?error=access_denied&error_description=no", http.StatusFound)
		}
	}))
	defer as.Close()
	log := newCapBuffer(4096)
	var shown string
	f := &codeFetcher{redirect: redirect, client: http.DefaultClient, log: log, prompt: func(u string) {
		shown = u
		// The person signs in; the browser comes back with the code.
		go func() {
			resp, err := http.Get(redirect + "?code=c2&state=s2")
			if err == nil {
				resp.Body.Close()
			}
		}()
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := f.fetch(ctx, &auth.AuthorizationArgs{URL: as.URL + "/at-once?state=s1"})
	if err != nil || res.Code != "c1" || res.State != "s1" || shown != "" {
		t.Errorf("at once: %+v %v (shown %q)", res, err, shown)
	}
	res, err = f.fetch(ctx, &auth.AuthorizationArgs{URL: as.URL + "/login"})
	if err != nil || res.Code != "c2" || res.State != "s2" || shown != as.URL+"/login" {
		t.Errorf("through the browser: %+v %v (shown %q)", res, err, shown)
	}
	if !strings.Contains(log.String(), "to authorize bench, open this URL in a browser: "+as.URL+"/login") {
		t.Errorf("log: %s", log.String())
	}
	if _, err := f.fetch(ctx, &auth.AuthorizationArgs{URL: as.URL + "/refuse"}); err == nil || !strings.Contains(err.Error(), "access_denied no") {
		t.Errorf("refused: %v", err)
	}
	remote := &codeFetcher{redirect: "https://bench.example/callback", client: http.DefaultClient, log: log}
	if _, err := remote.fetch(ctx, &auth.AuthorizationArgs{URL: as.URL + "/login"}); err == nil || !strings.Contains(err.Error(), "not a loopback http:// address") {
		t.Errorf("a redirect bench cannot listen on: %v", err)
	}
}

// A declaration that cannot work is refused before anything is sent,
// naming what is missing; the secret comes from the environment only.
func TestOAuthHandlerConfig(t *testing.T) {
	t.Setenv("BENCH_TEST_OAUTH_SECRET", "s3cret")
	for _, tt := range []struct {
		o    tasks.OAuth
		want string
	}{
		{tasks.OAuth{Grant: tasks.GrantClientCredentials, ClientID: "c"}, "needs client_id and client_secret_env"},
		{tasks.OAuth{ClientID: "c", ClientSecretEnv: "BENCH_TEST_OAUTH_UNSET"}, "BENCH_TEST_OAUTH_UNSET is not set"},
		{tasks.OAuth{Grant: tasks.GrantClientCredentials, ClientID: "c", ClientSecretEnv: "BENCH_TEST_OAUTH_SECRET"}, ""},
		{tasks.OAuth{ClientID: "c", ClientSecretEnv: "BENCH_TEST_OAUTH_SECRET"}, ""},
		{tasks.OAuth{}, ""},
		{tasks.OAuth{ClientMetadataURL: "https://bench.example/client.json"}, ""},
	} {
		o := tt.o
		_, err := newOAuthHandler(&o, http.DefaultClient, newCapBuffer(100), nil)
		if (err == nil) != (tt.want == "") || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%+v: %v, want %q", tt.o, err, tt.want)
		}
	}
	// One handler per server of a run, shared by its connections.
	a := &Auth{}
	srv := tasks.Server{Name: "web", URL: "http://127.0.0.1:1/mcp", OAuth: &tasks.OAuth{}}
	h1, err1 := a.handler(srv, srv.URL, http.DefaultClient, newCapBuffer(100))
	h2, err2 := a.handler(srv, srv.URL, http.DefaultClient, newCapBuffer(100))
	if err1 != nil || err2 != nil || h1 != h2 {
		t.Errorf("handlers %p %p (%v, %v): want one shared", h1, h2, err1, err2)
	}
}
