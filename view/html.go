package view

import (
	"bytes"
	"context"
	"fmt"
	"html/template"
	"io"

	"github.com/benchhq/bench/results"
)

// parsePages parses the embedded templates.
func parsePages() (*template.Template, error) {
	t, err := template.New("pages").Funcs(funcs()).ParseFS(templateFiles, "templates/*.html")
	if err != nil {
		return nil, fmt.Errorf("parse the view's templates: %w", err)
	}
	return t, nil
}

// WriteReport writes the run page of run runID in store as one
// self-contained HTML file (styles inlined, no script, no link to a
// server): `bench report --format html`. The numbers are the report's,
// as `bench report` prints them; db names the file in the page's header.
func WriteReport(ctx context.Context, w io.Writer, store *results.Store, runID, db string, opts results.ReportOptions) error {
	rr, err := store.ReportWithAttempts(ctx, runID, opts)
	if err != nil {
		return err
	}
	pages, err := parsePages()
	if err != nil {
		return err
	}
	css, err := assetFiles.ReadFile("assets/style.css")
	if err != nil {
		return fmt.Errorf("read the view's style sheet: %w", err)
	}
	body, err := newRunBody(ctx, memorySource(rr), filter{Page: 1}, true)
	if err != nil {
		return err
	}
	data := pageData{Title: "Run " + rr.Run.ID, DB: db, Standalone: true, CSS: template.CSS(css), Body: body}
	var b bytes.Buffer
	if err := pages.ExecuteTemplate(&b, "run", data); err != nil {
		return fmt.Errorf("write the html report of run %q: %w", rr.Run.ID, err)
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("write the html report of run %q: %w", rr.Run.ID, err)
	}
	return nil
}
