package issuetracker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPOptions are the checks of the server over Streamable HTTP against
// DNS rebinding and cross-site requests: a web page the operator visits
// must not reach a server on loopback through a name it controls.
type HTTPOptions struct {
	// Hosts are the host names (without port) that requests may name in
	// their Host header, besides localhost, 127.0.0.1 and ::1.
	Hosts []string
	// Origins are the origins ("http://localhost:3000") that a request
	// with an Origin header may come from. None by default: a browser's
	// request is refused, a client that sends no Origin (bench, the SDKs)
	// is served.
	Origins []string
}

// maxBody bounds one request's body.
const maxBody = 1 << 20

// Handler serves t over Streamable HTTP, at any path, with the Host and
// Origin checks of opts: a request that fails one is answered 403 with
// the reason.
func Handler(t *Tracker, opts HTTPOptions) http.Handler {
	server := NewServer(t)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{
		SessionTimeout:      10 * time.Minute,
		MaxRequestBodyBytes: maxBody,
	})
	hosts := append([]string{"localhost", "127.0.0.1", "::1"}, opts.Hosts...)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		host = strings.Trim(host, "[]")
		if !slices.ContainsFunc(hosts, func(h string) bool { return strings.EqualFold(h, host) }) {
			http.Error(w, fmt.Sprintf("Forbidden: Host %q is not one this server answers to (allowed: %s)", r.Host, strings.Join(hosts, ", ")), http.StatusForbidden)
			return
		}
		if o := r.Header.Get("Origin"); o != "" && !slices.Contains(opts.Origins, o) {
			http.Error(w, fmt.Sprintf("Forbidden: Origin %q is not allowed", o), http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// ServeHTTP serves the issue file at path over Streamable HTTP on addr
// (host:port; port 0 picks one) until ctx is done; ready, when set, is
// told the endpoint's URL once it listens.
func ServeHTTP(ctx context.Context, path, addr string, opts HTTPOptions, ready func(endpoint string)) error {
	t, err := Load(path)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	srv := &http.Server{Handler: Handler(t, opts), ReadHeaderTimeout: 10 * time.Second}
	if ready != nil {
		ready((&url.URL{Scheme: "http", Host: ln.Addr().String(), Path: "/mcp"}).String())
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve issues over HTTP: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("shut down: %w", err)
	}
	return nil
}
