package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// bench mcp call connects as a run would, checks the arguments against the
// schema the model is shown, says the class and the profile's decision,
// then shows the result and the time: over stdio and over --url.
func TestMCPCall(t *testing.T) {
	bin := benchBinary(t)
	stdio := []string{"--", bin, "mcp", "serve", "issues", "--file", issuesFile(t)}
	web := issuesHTTP(t).URL
	runFile := filepath.Join(t.TempDir(), "run.toml")
	os.WriteFile(runFile, []byte("model = \"m\"\n[[arms]]\nname = \"locked\"\nprofile = \"no-exec\"\n"), 0o644)
	tests := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"stdio, allowed", append([]string{"call", "--name", "issues", "--class", "list_issues=read", "list_issues"}, stdio...), 0,
			[]string{"server      issues (stdio", "tool        issues__list_issues", "class       read", "decision    allow (profile standard, rule class read)", "result      (took "}},
		{"stdio, by the model's name", append([]string{"call", "--name", "issues", "--default-class", "read", "issues__list_issues", `{}`}, stdio...), 0,
			[]string{"tool        issues__list_issues", "result"}},
		{"no class: denied, called anyway", append([]string{"call", "--name", "issues", "list_issues"}, stdio...), 0,
			[]string{"class       (none)", "decision    deny (profile standard, rule no class): a run would not call it", "result"}},
		{"a profile of a run file's arm", append([]string{"call", "--name", "issues", "--class", "list_issues=exec", "--config", runFile, "--arm", "locked", "list_issues"}, stdio...), 0,
			[]string{"decision    deny (profile no-exec"}},
		{"an error result", append([]string{"call", "--name", "issues", "--default-class", "read", "get_issue", `{"id": 999}`}, stdio...), 1,
			[]string{"error       tool_error (took "}},
		{"url", []string{"call", "--url", web, "--default-class", "read", "search_issues", `{"query": "crash"}`}, 0,
			[]string{"server      server (http", "tool        server__search_issues", "decision    allow", "result"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, stderr := runMCP(tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, out, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s\nstderr: %s", w, out, stderr)
				}
			}
		})
	}
	bad := []struct {
		name string
		args []string
		want string
	}{
		{"arguments off the schema", append([]string{"call", "--name", "issues", "get_issue", `{"id": "seven"}`}, stdio...), "do not match the schema"},
		{"arguments not JSON", append([]string{"call", "--name", "issues", "get_issue", `{id: 7}`}, stdio...), "arguments"},
		{"no such tool", append([]string{"call", "--name", "issues", "nope"}, stdio...), `no tool "nope" (it offers: `},
		{"no tool given", append([]string{"call"}, stdio...), "expected TOOL"},
		{"command without --", []string{"call", "list_issues", "{}", bin}, "after --"},
		{"arm without config", append([]string{"call", "--arm", "x", "list_issues"}, stdio...), "--arm needs --config"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			code, out, stderr := runMCP(tt.args...)
			if code != 2 || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q, want 2 and %q (stdout %s)", code, stderr, tt.want, out)
			}
		})
	}
}
