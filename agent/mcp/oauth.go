package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/benchhq/bench/tasks"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/auth/extauth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// DefaultRedirectURL is where the authorization server sends the browser
// back to bench, when the declaration names no redirect_url.
const DefaultRedirectURL = "http://127.0.0.1:8976/callback"

// Auth keeps the OAuth handlers of a run's HTTP servers, one per server
// declaration, so that the attempts of a run share one authorization and
// its tokens (refreshed by golang.org/x/oauth2 as they expire) instead of
// authorizing once per attempt. Tokens live in memory only: never in the
// store, a trajectory, or anything the model sees. Safe for concurrent
// use; the zero value is ready.
type Auth struct {
	mu sync.Mutex
	by map[string]auth.OAuthHandler
	// Prompt, when set, is told the URL a person must open to authorize
	// bench (an authorization server that does not redirect at once).
	Prompt func(url string)
}

// handler returns the OAuth handler of srv's declaration, made at the
// first use.
func (a *Auth) handler(srv tasks.Server, endpoint string, client *http.Client, log *capBuffer) (auth.OAuthHandler, error) {
	key := srv.Name + " " + endpoint
	if a != nil {
		a.mu.Lock()
		defer a.mu.Unlock()
		if h := a.by[key]; h != nil {
			return h, nil
		}
	}
	var prompt func(string)
	if a != nil {
		prompt = a.Prompt
	}
	h, err := newOAuthHandler(srv.OAuth, client, log, prompt)
	if err != nil {
		return nil, err
	}
	if a != nil {
		if a.by == nil {
			a.by = map[string]auth.OAuthHandler{}
		}
		h = &serialHandler{h: h}
		a.by[key] = h
	}
	return h, nil
}

// serialHandler lets the connections of a run share one handler: one
// authorization at a time (the SDK's handlers keep their token source in
// a plain field).
type serialHandler struct {
	mu sync.Mutex
	h  auth.OAuthHandler
}

// TokenSource implements auth.OAuthHandler.
func (s *serialHandler) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.h.TokenSource(ctx)
}

// Authorize implements auth.OAuthHandler.
func (s *serialHandler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.h.Authorize(ctx, req, resp)
}

// newOAuthHandler makes the go-sdk's OAuth handler a declaration asks
// for: the client credentials grant for unattended runs, or the
// authorization code grant with PKCE, the client registered in advance
// (client_id), by a client ID metadata document (client_metadata_url) or
// dynamically. Protected-resource metadata, authorization-server
// discovery and the scopes of WWW-Authenticate are the SDK's.
func newOAuthHandler(o *tasks.OAuth, client *http.Client, log *capBuffer, prompt func(string)) (auth.OAuthHandler, error) {
	secret := ""
	if o.ClientSecretEnv != "" {
		var ok bool
		if secret, ok = os.LookupEnv(o.ClientSecretEnv); !ok || secret == "" {
			return nil, fmt.Errorf("oauth.client_secret_env: the environment variable %s is not set", o.ClientSecretEnv)
		}
	}
	var creds *oauthex.ClientCredentials
	if o.ClientID != "" {
		creds = &oauthex.ClientCredentials{ClientID: o.ClientID}
		if secret != "" {
			creds.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: secret}
		}
	}
	if o.Grant == tasks.GrantClientCredentials {
		if creds == nil || secret == "" {
			return nil, errors.New("oauth: the client_credentials grant needs client_id and client_secret_env")
		}
		h, err := extauth.NewClientCredentialsHandler(&extauth.ClientCredentialsHandlerConfig{Credentials: creds, HTTPClient: client})
		if err != nil {
			return nil, fmt.Errorf("oauth: %w", err)
		}
		return h, nil
	}
	redirect := o.RedirectURL
	if redirect == "" {
		redirect = DefaultRedirectURL
	}
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:              redirect,
		AuthorizationCodeFetcher: (&codeFetcher{redirect: redirect, client: client, log: log, prompt: prompt}).fetch,
		Client:                   client,
		RequestRefreshToken:      true,
	}
	switch {
	case creds != nil:
		cfg.PreregisteredClient = creds
	case o.ClientMetadataURL != "":
		cfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: o.ClientMetadataURL}
	default:
		cfg.DynamicClientRegistrationConfig = &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs:            []string{redirect},
			ClientName:              "bench",
			TokenEndpointAuthMethod: "none",
			GrantTypes:              []string{"authorization_code", "refresh_token"},
			ResponseTypes:           []string{"code"},
		}}
	}
	h, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		return nil, fmt.Errorf("oauth: %w", err)
	}
	return h, nil
}

// codeFetcher gets an authorization code: it asks the authorization URL
// itself first (a server that grants at once, for an unattended run or a
// test, redirects straight back), and otherwise has a person open the URL
// and waits for the browser on the redirect URL, which must then be a
// loopback http:// address.
type codeFetcher struct {
	redirect string
	client   *http.Client
	log      *capBuffer
	prompt   func(string)
}

func (f *codeFetcher) fetch(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
	noFollow := &http.Client{Transport: f.client.Transport, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, args.URL, nil)
	if err != nil {
		return nil, fmt.Errorf("authorization URL: %w", err)
	}
	if resp, err := noFollow.Do(req); err == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if loc, err := resp.Location(); err == nil && strings.HasPrefix(loc.String(), f.redirect) {
			return codeFrom(loc)
		}
	}
	return f.browser(ctx, args.URL)
}

// browser has a person open url and waits for the redirect back.
func (f *codeFetcher) browser(ctx context.Context, authURL string) (*auth.AuthorizationResult, error) {
	u, err := url.Parse(f.redirect)
	if err != nil || u.Scheme != "http" || !loopback(u.Hostname()) {
		return nil, fmt.Errorf("the authorization server wants a person to sign in, and the redirect URL %s is not a loopback http:// address bench can listen on", f.redirect)
	}
	ln, err := net.Listen("tcp", u.Host)
	if err != nil {
		return nil, fmt.Errorf("listen for the authorization's redirect on %s: %w", u.Host, err)
	}
	got := make(chan *url.URL, 1)
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != u.Path {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintln(w, "bench is authorized; you may close this page.")
		select {
		case got <- r.URL:
		default:
		}
	})}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	msg := "to authorize bench, open this URL in a browser: " + authURL
	f.log.note("%s", msg)
	if f.prompt != nil {
		f.prompt(authURL)
	}
	select {
	case back := <-got:
		return codeFrom(back)
	case <-ctx.Done():
		return nil, fmt.Errorf("nobody completed the authorization at %s: %w", authURL, ctx.Err())
	}
}

// codeFrom reads the authorization response off the redirect URL.
func codeFrom(u *url.URL) (*auth.AuthorizationResult, error) {
	q := u.Query()
	if e := q.Get("error"); e != "" {
		return nil, fmt.Errorf("the authorization server refused: %s %s", e, q.Get("error_description"))
	}
	if q.Get("code") == "" {
		return nil, errors.New("the authorization server's redirect carries no code")
	}
	return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
