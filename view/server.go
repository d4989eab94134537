// Package view is bench's web view: a local HTTP server over one results
// file that shows runs, arms, tasks and attempts as pages with stable
// URLs, and the same run page written as one self-contained HTML file
// (`bench report --format html`).
//
// It reads the store through the results package, opened read-only, and
// renders with html/template; templates, the style sheet and the little
// JavaScript it has are embedded in the binary, and the plots are SVG
// drawn by the server. Nothing is fetched from anywhere.
//
// The numbers of a run come from results.Report, the computation behind
// `bench report`: this package draws them and never computes them again.
package view

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"log"
	"net/http"
	"strconv"
	"sync"

	"github.com/benchhq/bench/results"
)

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed assets
var assetFiles embed.FS

// Server serves the pages of one bench database. Create it with New.
type Server struct {
	path  string
	pages *template.Template
	mux   *http.ServeMux
	log   *log.Logger

	mu      sync.Mutex
	store   *results.Store
	openErr error

	reports reportCache
}

// New returns a server over the results file at path, opened read-only
// (never created nor migrated). A file that cannot be opened as a bench
// database (another application's, an older schema) does not stop the
// server: every page says what is wrong, with status 500, and the file
// is tried again on the next request. Err reports that state. logger
// receives the errors of requests; nil discards them.
func New(ctx context.Context, path string, logger *log.Logger) (*Server, error) {
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	if logger == nil {
		logger = log.New(io.Discard, "", 0)
	}
	s := &Server{path: path, pages: pages, log: logger}
	s.store, s.openErr = results.OpenReadOnly(ctx, path)
	s.routes()
	return s, nil
}

// Err returns why the file could not be opened, or nil when it is open.
func (s *Server) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.openErr
}

// Close closes the database.
func (s *Server) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.store == nil {
		return nil
	}
	err := s.store.Close()
	s.store = nil
	return err
}

// Handler returns the server's HTTP handler.
func (s *Server) Handler() http.Handler { return s.recoverer(s.mux) }

// openStore returns the store, opening the file again if it failed before.
func (s *Server) openStore(ctx context.Context) (*results.Store, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.store == nil {
		s.store, s.openErr = results.OpenReadOnly(ctx, s.path)
		s.reports.clear()
	}
	return s.store, s.openErr
}

func (s *Server) routes() {
	m := http.NewServeMux()
	m.HandleFunc("GET /{$}", s.handle(s.runsPage))
	m.HandleFunc("GET /runs/{run}", s.handle(s.runPage))
	m.HandleFunc("GET /runs/{run}/attempts", s.handle(s.attemptsPage))
	m.HandleFunc("GET /attempts/{id}", s.handle(s.attemptPage))
	m.HandleFunc("GET /attempts/{id}/text", s.handle(s.attemptText))
	m.HandleFunc("GET /compare", s.handle(s.comparePage))
	assets, _ := fs.Sub(assetFiles, "assets")
	m.Handle("GET /assets/", http.StripPrefix("/assets/", http.FileServerFS(assets)))
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.errorPage(w, r, &pageError{status: http.StatusNotFound, title: "No such page",
			msg: fmt.Sprintf("%s is not a page of bench view. The pages are the runs (/), a run (/runs/RUN), its attempts (/runs/RUN/attempts), an attempt (/attempts/ID) and a comparison (/compare).", r.URL.Path)})
	})
	s.mux = m
}

// page is a page being rendered: its bytes and content type (HTML unless
// set).
type page struct {
	bytes.Buffer
	contentType string
}

// pageFunc renders one page into w, or returns why it cannot.
type pageFunc func(w *page, r *http.Request, store *results.Store) error

// handle wraps a page: it opens the store, renders into a buffer (so that
// a failure half-way gives an error page, not half a page) and sends it.
func (s *Server) handle(render pageFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		store, err := s.openStore(r.Context())
		if err != nil {
			s.errorPage(w, r, storeError(s.path, err))
			return
		}
		var b page
		if err := render(&b, r, store); err != nil {
			s.errorPage(w, r, err)
			return
		}
		ct := b.contentType
		if ct == "" {
			ct = "text/html; charset=utf-8"
		}
		w.Header().Set("Content-Type", ct)
		w.Header().Set("Content-Length", strconv.Itoa(b.Len()))
		_, _ = w.Write(b.Bytes())
	}
}

// recoverer turns a panic in a page into an error page: the server keeps
// serving.
func (s *Server) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.Printf("%s %s: panic: %v", r.Method, r.URL, v)
				s.errorPage(w, r, &pageError{status: http.StatusInternalServerError, title: "Internal error",
					msg: fmt.Sprintf("bench view failed on this page (%v). The server goes on serving; please report this.", v)})
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// pageError is an error page: its status, title and message.
type pageError struct {
	status int
	title  string
	msg    string
}

func (e *pageError) Error() string { return e.title + ": " + e.msg }

func badRequest(format string, args ...any) *pageError {
	return &pageError{status: http.StatusBadRequest, title: "Bad request", msg: fmt.Sprintf(format, args...)}
}

func notFound(title, format string, args ...any) *pageError {
	return &pageError{status: http.StatusNotFound, title: title, msg: fmt.Sprintf(format, args...)}
}

// storeError is the page for a file that cannot be opened.
func storeError(path string, err error) *pageError {
	title := "Cannot read the results file"
	if errors.Is(err, results.ErrNotBenchDatabase) {
		title = "Not a bench database"
	}
	return &pageError{status: http.StatusInternalServerError, title: title,
		msg: fmt.Sprintf("%v. bench view reads %s read-only and has changed nothing; start it with --db naming a file written by bench run.", err, path)}
}

// errorPage writes the page for err: a *pageError as it says, a missing
// run or attempt as 404, anything else as 500.
func (s *Server) errorPage(w http.ResponseWriter, r *http.Request, err error) {
	var pe *pageError
	var noRun *results.NoRunError
	var noArm *results.NoArmError
	var noAttempt *results.NoAttemptError
	switch {
	case errors.As(err, &pe):
	case errors.As(err, &noRun):
		pe = notFound("No such run", "The store holds no run %q. The list of runs is at /.", noRun.ID)
	case errors.As(err, &noAttempt):
		pe = notFound("No such attempt", "The store holds no attempt %d.", noAttempt.ID)
	case errors.As(err, &noArm):
		pe = badRequest("%v.", noArm)
	case errors.Is(err, context.Canceled):
		return
	default:
		pe = &pageError{status: http.StatusInternalServerError, title: "Error", msg: err.Error()}
	}
	if pe.status >= 500 {
		s.log.Printf("%s %s: %v", r.Method, r.URL, err)
	}
	var b bytes.Buffer
	if terr := s.pages.ExecuteTemplate(&b, "error", pageData{Title: pe.title, DB: s.path, Body: pe}); terr != nil {
		b.Reset()
		fmt.Fprintf(&b, "<!doctype html><title>%s</title><p>%s</p>", template.HTMLEscapeString(pe.title), template.HTMLEscapeString(pe.msg))
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(b.Len()))
	w.WriteHeader(pe.status)
	_, _ = w.Write(b.Bytes())
}

// pageData is what every page template gets: the layout's fields and the
// page's own Body.
type pageData struct {
	Title string
	DB    string
	// Standalone is set for the self-contained file of `bench report
	// --format html`: styles inlined, no links to the server.
	Standalone bool
	CSS        template.CSS
	Body       any
}

func (s *Server) render(w io.Writer, name, title string, body any) error {
	return s.pages.ExecuteTemplate(w, name, pageData{Title: title, DB: s.path, Body: body})
}

// Title, Status and Message are what the error template shows.
func (e *pageError) Title() string   { return e.title }
func (e *pageError) Status() int     { return e.status }
func (e *pageError) Message() string { return e.msg }
