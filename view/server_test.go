package view

import (
	"net/http"
	"strings"
	"testing"
)

func TestPagesRender(t *testing.T) {
	hs := testServer(t, fixtureDB)
	for _, path := range []string{"/", "/runs/" + mainRun, "/runs/" + mainRun + "/attempts", "/attempts/1", "/compare?a=" + mainRun} {
		code, body := get(t, hs.URL+path)
		if code != http.StatusOK {
			t.Errorf("GET %s: %d\n%s", path, code, body)
		}
		if !strings.Contains(body, "</html>") {
			t.Errorf("GET %s: no whole page", path)
		}
	}
}
