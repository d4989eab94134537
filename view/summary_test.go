package view

import (
	"context"
	"html"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// A stopped run's pages are laid out from the summary the store keeps;
// without one (a running run, or a file from before summaries) the view
// computes the same summary from every attempt: the pages are the same.
func TestRunPagesSameFromStoredOrComputedSummary(t *testing.T) {
	stored := testServer(t, fixtureDB)
	computedDB := changedFixture(t, `DELETE FROM run_summaries`)
	computed := testServer(t, computedDB)
	for _, path := range []string{"/runs/" + mainRun, "/runs/" + mainRun + "?outcome=fail",
		"/runs/" + mainRun + "?task=recipe-trailing-dot&arm=full", "/runs/" + mainRun + "/attempts",
		"/runs/" + mainRun + "/attempts?outcome=pass,infra_error", "/runs/" + secondRun} {
		codeA, a := get(t, stored.URL+path)
		codeB, b := get(t, computed.URL+path)
		b = strings.ReplaceAll(b, html.EscapeString(computedDB), html.EscapeString(fixtureDB))
		if codeA != 200 || codeB != 200 {
			t.Fatalf("%s: status %d and %d", path, codeA, codeB)
		}
		if a != b {
			i := 0
			for i < min(len(a), len(b)) && a[i] == b[i] {
				i++
			}
			t.Errorf("%s: the page from the stored summary differs from the computed one at byte %d:\n%s\n---\n%s",
				path, i, a[max(0, i-200):min(len(a), i+200)], b[max(0, i-200):min(len(b), i+200)])
		}
	}
}

var (
	attemptLink = regexp.MustCompile(`<td><a href="/attempts/(\d+)">`)
	nextLink    = regexp.MustCompile(`<a href="([^"]+)" rel="next">`)
	prevLink    = regexp.MustCompile(`<a href="([^"]+)" rel="prev">`)
)

// The list of attempts goes page by page from each page's last attempt
// (keyset pagination): following its next links shows every attempt the
// filter keeps once, and a previous link shows the page before again.
func TestAttemptsPagesFollowTheirLinks(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a store of 640 attempts")
	}
	path := filepath.Join(t.TempDir(), "big.db")
	const n = 640
	if err := writeBigStore(context.Background(), path, n); err != nil {
		t.Fatal(err)
	}
	hs := testServer(t, path)
	for _, tt := range []struct {
		query string
		want  int
	}{
		{"", n},
		{"?arm=arm-1", n / 2},
		{"?outcome=pass", -1},
	} {
		url := "/runs/" + bigRun + "/attempts" + tt.query
		var seen []string
		var pages [][]string
		for url != "" {
			code, page := get(t, hs.URL+html.UnescapeString(url))
			if code != 200 {
				t.Fatalf("%s: status %d: %s", url, code, page)
			}
			var ids []string
			for _, m := range attemptLink.FindAllStringSubmatch(page, -1) {
				ids = append(ids, m[1])
			}
			if len(ids) == 0 || len(ids) > attemptsPerPage {
				t.Fatalf("%s: %d attempts on the page", url, len(ids))
			}
			if len(pages) > 0 {
				m := prevLink.FindStringSubmatch(page)
				if m == nil {
					t.Fatalf("%s: no previous link", url)
				}
				_, back := get(t, hs.URL+html.UnescapeString(m[1]))
				var backIDs []string
				for _, m := range attemptLink.FindAllStringSubmatch(back, -1) {
					backIDs = append(backIDs, m[1])
				}
				if !slices.Equal(backIDs, pages[len(pages)-1]) {
					t.Errorf("%s: the previous page shows %d attempts, not the %d of the page before", url, len(backIDs), len(pages[len(pages)-1]))
				}
			}
			pages = append(pages, ids)
			seen = append(seen, ids...)
			url = ""
			if m := nextLink.FindStringSubmatch(page); m != nil {
				url = m[1]
			}
		}
		total := len(seen)
		if tt.want > 0 && total != tt.want {
			t.Errorf("%q: %d attempts over %d pages, want %d", tt.query, total, len(pages), tt.want)
		}
		sorted := slices.Clone(seen)
		slices.Sort(sorted)
		if len(slices.Compact(sorted)) != total {
			t.Errorf("%q: an attempt shown twice", tt.query)
		}
		_, first := get(t, hs.URL+"/runs/"+bigRun+"/attempts"+tt.query)
		if !strings.Contains(first, `id="match-count">`+strconv.Itoa(total)+` of `+strconv.Itoa(n)+` attempts`) {
			t.Errorf("%q: the count does not say %d of %d", tt.query, total, n)
		}
	}
}
