package issuetracker

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const sample = `{"issues": [
 {"id": 3, "title": "Crash on empty input", "state": "closed", "labels": ["parser"], "body": "fixed long ago"},
 {"id": 1, "title": "Tokenizer drops the last token", "state": "open", "labels": ["parser", "bug"],
  "author": "ana", "created": "2025-03-01", "body": "When the input does not end in a newline the last token is lost.",
  "comments": [{"author": "bo", "created": "2025-03-02", "body": "Seen with 'a b c' too."}]},
 {"id": 2, "title": "Docs typo", "state": "open", "labels": ["docs"], "body": "recieve -> receive"}
]}`

func TestParseRejects(t *testing.T) {
	tests := []struct {
		name, data, want string
	}{
		{"not json", `nope`, "expected {\"issues\""},
		{"unknown field", `{"issues":[{"id":1,"title":"a","state":"open","color":"red"}]}`, "color"},
		{"zero id", `{"issues":[{"id":0,"title":"a","state":"open"}]}`, "issues[0].id"},
		{"duplicate id", `{"issues":[{"id":1,"title":"a","state":"open"},{"id":1,"title":"b","state":"open"}]}`, "appears twice"},
		{"bad state", `{"issues":[{"id":1,"title":"a","state":"wip"}]}`, "issues[0].state"},
		{"no title", `{"issues":[{"id":1,"state":"open"}]}`, "issues[0].title"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.data))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse: got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestListAndSearch(t *testing.T) {
	tr, err := Parse([]byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	ids := func(is []Issue) []int {
		var out []int
		for _, i := range is {
			out = append(out, i.ID)
		}
		return out
	}
	tests := []struct {
		state, label string
		want         []int
	}{
		{"", "", []int{1, 2}},
		{"all", "", []int{1, 2, 3}},
		{"closed", "", []int{3}},
		{"all", "PARSER", []int{1, 3}},
		{"open", "parser", []int{1}},
	}
	for _, tt := range tests {
		got, err := tr.List(tt.state, tt.label)
		if err != nil {
			t.Fatal(err)
		}
		if g := ids(got); !equal(g, tt.want) {
			t.Errorf("List(%q, %q) = %v, want %v", tt.state, tt.label, g, tt.want)
		}
	}
	if _, err := tr.List("wip", ""); err == nil {
		t.Error("List with a bad state: no error")
	}
	m, err := tr.Search("A B C", "")
	if err != nil || len(m) != 1 || m[0].Issue.ID != 1 || m[0].Where[0] != "comment 1" {
		t.Fatalf("Search: %+v, %v", m, err)
	}
	if _, err := tr.Search("  ", ""); err == nil {
		t.Error("Search with an empty query: no error")
	}
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestServerTools(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "issues.json")
	if err := os.WriteFile(path, []byte(sample), 0o644); err != nil {
		t.Fatal(err)
	}
	tr, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := NewServer(tr).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	var names []string
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		if tool.Annotations == nil || !tool.Annotations.ReadOnlyHint {
			t.Errorf("%s: not annotated read-only", tool.Name)
		}
		names = append(names, tool.Name)
	}
	if strings.Join(names, ",") != "get_issue,list_issues,search_issues" {
		t.Fatalf("tools: %v", names)
	}

	tests := []struct {
		tool    string
		args    map[string]any
		want    string
		isError bool
	}{
		{"list_issues", map[string]any{"label": "parser"}, "#1 [open] Tokenizer drops the last token (labels: parser, bug), 1 comment", false},
		{"list_issues", map[string]any{"state": "closed"}, "#3 [closed] Crash on empty input", false},
		{"list_issues", map[string]any{"label": "nope"}, "no issues match", false},
		{"get_issue", map[string]any{"id": 1}, "--- comment 1 by bo on 2025-03-02\nSeen with 'a b c' too.", false},
		{"get_issue", map[string]any{"id": 99}, "no issue #99", true},
		{"search_issues", map[string]any{"query": "receive"}, "#2 [open] Docs typo (labels: docs), 0 comments; matched in body", false},
		{"search_issues", map[string]any{"query": "x", "state": "wip"}, "state", true},
	}
	for _, tt := range tests {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tt.tool, Arguments: tt.args})
		if err != nil {
			t.Fatalf("%s %v: %v", tt.tool, tt.args, err)
		}
		got := res.Content[0].(*mcp.TextContent).Text
		if res.IsError != tt.isError || !strings.Contains(got, tt.want) {
			t.Errorf("%s %v: got isError=%v %q, want isError=%v and %q", tt.tool, tt.args, res.IsError, got, tt.isError, tt.want)
		}
	}
}
