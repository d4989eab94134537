package issuetracker

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Name and Version identify the server in the MCP handshake.
const (
	Name    = "bench-issuetracker"
	Version = "1.0.0"
)

// ListInput is the argument of list_issues.
type ListInput struct {
	State string `json:"state,omitempty"`
	Label string `json:"label,omitempty"`
}

// GetInput is the argument of get_issue.
type GetInput struct {
	ID int `json:"id"`
}

// SearchInput is the argument of search_issues.
type SearchInput struct {
	Query string `json:"query"`
	State string `json:"state,omitempty"`
}

// Summary is one issue in a list: what list_issues and search_issues return
// as structured content. Its fields are in the order of their JSON names,
// as Issue's.
type Summary struct {
	Comments int      `json:"comments"`
	ID       int      `json:"id"`
	Labels   []string `json:"labels"`
	Matched  []string `json:"matched,omitempty"`
	State    string   `json:"state"`
	Title    string   `json:"title"`
}

// ListOutput is the structured result of list_issues and search_issues.
type ListOutput struct {
	Issues []Summary `json:"issues"`
}

func stateSchema(def, desc string) *jsonschema.Schema {
	return &jsonschema.Schema{
		Type:        "string",
		Enum:        []any{"open", "closed", "all"},
		Description: desc + ` Default "` + def + `".`,
	}
}

func readOnly() *mcp.ToolAnnotations {
	f := false
	return &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: &f}
}

// NewServer returns an MCP server that answers from t.
func NewServer(t *Tracker) *mcp.Server {
	s, _ := newServer(t)
	return s
}

// newServer returns the server and the direct answers to its tool calls
// (direct.go), which give what the SDK gives.
func newServer(t *Tracker) (*mcp.Server, *direct) {
	impl := &mcp.Implementation{Name: Name, Version: Version}
	s := mcp.NewServer(impl, nil)
	d := &direct{impl: impl, tools: map[string]directTool{}}
	d.infoMeta, _ = json.Marshal(mcp.Meta{mcp.MetaKeyServerInfo: impl})

	addTool(s, d, &mcp.Tool{
		Name:        "list_issues",
		Title:       "List issues",
		Description: "List the tracker's issues (id, state, title, labels, number of comments), optionally only those in a state and with a label.",
		Annotations: readOnly(),
		InputSchema: &jsonschema.Schema{
			Type: "object",
			Properties: map[string]*jsonschema.Schema{
				"state": stateSchema("open", "Which issues to list."),
				"label": {Type: "string", Description: "Only issues carrying this label (case does not matter)."},
			},
			PropertyOrder:        []string{"state", "label"},
			AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
		},
	}, func(in ListInput) (*mcp.CallToolResult, ListOutput, error) {
		issues, err := t.List(in.State, in.Label)
		if err != nil {
			return nil, ListOutput{}, err
		}
		out := ListOutput{Issues: []Summary{}}
		for _, is := range issues {
			out.Issues = append(out.Issues, summary(is, nil))
		}
		return text(formatList(out.Issues, "no issues match")), out, nil
	})

	addTool(s, d, &mcp.Tool{
		Name:        "get_issue",
		Title:       "Get an issue",
		Description: "Get one issue by id: its title, state, labels, author, description and every comment.",
		Annotations: readOnly(),
		InputSchema: &jsonschema.Schema{
			Type:                 "object",
			Properties:           map[string]*jsonschema.Schema{"id": {Type: "integer", Description: "The issue's id, as list_issues shows it (without '#').", Minimum: jsonschema.Ptr(1.0)}},
			Required:             []string{"id"},
			AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
		},
	}, func(in GetInput) (*mcp.CallToolResult, Issue, error) {
		is, ok := t.Get(in.ID)
		if !ok {
			return nil, Issue{}, fmt.Errorf("no issue #%d (list_issues with state \"all\" shows every id)", in.ID)
		}
		return text(formatIssue(is)), is, nil
	})

	addTool(s, d, &mcp.Tool{
		Name:        "search_issues",
		Title:       "Search issues",
		Description: "Find issues whose title, description or comments contain a word or phrase (case does not matter).",
		Annotations: readOnly(),
		InputSchema: &jsonschema.Schema{
			Type: "object",
			Properties: map[string]*jsonschema.Schema{
				"query": {Type: "string", Description: "The word or phrase to look for.", MinLength: jsonschema.Ptr(1)},
				"state": stateSchema("all", "Which issues to search."),
			},
			PropertyOrder:        []string{"query", "state"},
			Required:             []string{"query"},
			AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
		},
	}, func(in SearchInput) (*mcp.CallToolResult, ListOutput, error) {
		matches, err := t.Search(in.Query, in.State)
		if err != nil {
			return nil, ListOutput{}, err
		}
		out := ListOutput{Issues: []Summary{}}
		for _, m := range matches {
			out.Issues = append(out.Issues, summary(m.Issue, m.Where))
		}
		return text(formatList(out.Issues, fmt.Sprintf("no issue mentions %q", in.Query))), out, nil
	})
	return s, d
}

// Serve runs the server for the issue file at path over in and out (stdin
// and stdout for a stdio server) until in is closed or ctx is done.
func Serve(ctx context.Context, path string, in io.ReadCloser, out io.WriteCloser) error {
	t, err := Load(path)
	if err != nil {
		return err
	}
	return serve(ctx, t, in, out, true)
}

// serve runs the server for t over in and out; withDirect answers tool
// calls on the reading goroutine (direct.go), as Serve does.
func serve(ctx context.Context, t *Tracker, in io.ReadCloser, out io.WriteCloser, withDirect bool) error {
	srv, d := newServer(t)
	if !withDirect {
		d = nil
	}
	if err := srv.Run(ctx, &lineTransport{in: in, out: out, direct: d}); err != nil && ctx.Err() == nil {
		return fmt.Errorf("serve issues: %w", err)
	}
	return nil
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func summary(is Issue, where []string) Summary {
	labels := is.Labels
	if labels == nil {
		labels = []string{}
	}
	return Summary{ID: is.ID, Title: is.Title, State: is.State, Labels: labels, Comments: len(is.Comments), Matched: where}
}

func formatList(issues []Summary, empty string) string {
	if len(issues) == 0 {
		return empty
	}
	var b strings.Builder
	for _, s := range issues {
		fmt.Fprintf(&b, "#%d [%s] %s", s.ID, s.State, s.Title)
		if len(s.Labels) > 0 {
			fmt.Fprintf(&b, " (labels: %s)", strings.Join(s.Labels, ", "))
		}
		fmt.Fprintf(&b, ", %d comment%s", s.Comments, plural(s.Comments))
		if len(s.Matched) > 0 {
			fmt.Fprintf(&b, "; matched in %s", strings.Join(s.Matched, ", "))
		}
		b.WriteByte('\n')
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func formatIssue(is Issue) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#%d [%s] %s\n", is.ID, is.State, is.Title)
	if len(is.Labels) > 0 {
		fmt.Fprintf(&b, "labels: %s\n", strings.Join(is.Labels, ", "))
	}
	if is.Author != "" || is.Created != "" {
		fmt.Fprintf(&b, "opened by %s on %s\n", orUnknown(is.Author), orUnknown(is.Created))
	}
	if is.Body != "" {
		fmt.Fprintf(&b, "\n%s\n", strings.TrimSpace(is.Body))
	}
	for i, c := range is.Comments {
		fmt.Fprintf(&b, "\n--- comment %d by %s on %s\n%s\n", i+1, orUnknown(c.Author), orUnknown(c.Created), strings.TrimSpace(c.Body))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
