// Package issuetracker is the project's own example MCP server: a read-only
// issue tracker over a JSON file. Example tasks attach it so that the agent
// must ask it for facts that only the tracker knows (which issue is open,
// what a comment says).
//
// It is served over stdio by `bench mcp serve issues --file PATH`, and offers
// three tools: list_issues, get_issue and search_issues.
//
// The file holds one JSON object:
//
//	{"issues": [
//	  {"id": 7, "title": "...", "state": "open", "labels": ["parser"],
//	   "author": "ana", "created": "2025-03-01", "body": "...",
//	   "comments": [{"author": "bo", "created": "2025-03-02", "body": "..."}]}
//	]}
//
// id is a positive integer unique in the file; state is "open" or "closed".
package issuetracker

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
)

// Issue is one issue of the tracker.
type Issue struct {
	// The fields are in the order of their JSON names: the SDK writes a
	// tool's structured content with its keys sorted, and the direct path
	// (direct.go) writes the value as it is (TestDirectAsTheSDK).
	Author   string    `json:"author,omitempty"`
	Body     string    `json:"body,omitempty"`
	Comments []Comment `json:"comments,omitempty"`
	Created  string    `json:"created,omitempty"`
	ID       int       `json:"id"`
	Labels   []string  `json:"labels,omitempty"`
	State    string    `json:"state"`
	Title    string    `json:"title"`
}

// Comment is one comment on an issue (fields in the order of their JSON
// names, as Issue's).
type Comment struct {
	Author  string `json:"author,omitempty"`
	Body    string `json:"body"`
	Created string `json:"created,omitempty"`
}

// The states an issue may be in.
const (
	StateOpen   = "open"
	StateClosed = "closed"
)

// Tracker is a loaded, validated set of issues, sorted by id.
type Tracker struct {
	issues []Issue
}

// Load reads and validates the issue file at path.
func Load(path string) (*Tracker, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load issues: %w", err)
	}
	t, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("load issues %s: %w", path, err)
	}
	return t, nil
}

// Parse validates the contents of an issue file.
func Parse(data []byte) (*Tracker, error) {
	var f struct {
		Issues []Issue `json:"issues"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf(`expected {"issues": [...]} with fields id, title, state, labels, author, created, body, comments: %w`, err)
	}
	seen := map[int]bool{}
	for i, is := range f.Issues {
		switch {
		case is.ID <= 0:
			return nil, fmt.Errorf("issues[%d].id: expected a positive integer, got %d", i, is.ID)
		case seen[is.ID]:
			return nil, fmt.Errorf("issues[%d].id: issue %d appears twice", i, is.ID)
		case is.State != StateOpen && is.State != StateClosed:
			return nil, fmt.Errorf("issues[%d].state: expected %q or %q, got %q", i, StateOpen, StateClosed, is.State)
		case strings.TrimSpace(is.Title) == "":
			return nil, fmt.Errorf("issues[%d].title: missing", i)
		}
		seen[is.ID] = true
	}
	issues := slices.Clone(f.Issues)
	slices.SortFunc(issues, func(a, b Issue) int { return a.ID - b.ID })
	return &Tracker{issues: issues}, nil
}

// Get returns the issue with the given id.
func (t *Tracker) Get(id int) (Issue, bool) {
	for _, is := range t.issues {
		if is.ID == id {
			return is, true
		}
	}
	return Issue{}, false
}

// List returns the issues in a state ("open", "closed" or "all"; empty means
// "open") that carry label (any label when empty), sorted by id.
func (t *Tracker) List(state, label string) ([]Issue, error) {
	if err := checkState(state); err != nil {
		return nil, err
	}
	var out []Issue
	for _, is := range t.issues {
		if inState(is, state) && (label == "" || hasLabel(is, label)) {
			out = append(out, is)
		}
	}
	return out, nil
}

// Match is an issue found by Search, with the places where the query occurs.
type Match struct {
	Issue Issue
	// Where lists the parts that matched: "title", "body", "comment 2", ...
	Where []string
}

// Search returns the issues in a state ("open", "closed" or "all"; empty
// means "all") whose title, body or comments contain query, ignoring case.
func (t *Tracker) Search(query, state string) ([]Match, error) {
	q := strings.ToLower(strings.TrimSpace(query))
	if q == "" {
		return nil, fmt.Errorf("query is empty: give a word or phrase to look for")
	}
	if state == "" {
		state = "all"
	}
	if err := checkState(state); err != nil {
		return nil, err
	}
	var out []Match
	for _, is := range t.issues {
		if !inState(is, state) {
			continue
		}
		var where []string
		if strings.Contains(strings.ToLower(is.Title), q) {
			where = append(where, "title")
		}
		if strings.Contains(strings.ToLower(is.Body), q) {
			where = append(where, "body")
		}
		for i, c := range is.Comments {
			if strings.Contains(strings.ToLower(c.Body), q) {
				where = append(where, fmt.Sprintf("comment %d", i+1))
			}
		}
		if len(where) > 0 {
			out = append(out, Match{Issue: is, Where: where})
		}
	}
	return out, nil
}

func checkState(state string) error {
	switch state {
	case "", StateOpen, StateClosed, "all":
		return nil
	}
	return fmt.Errorf("state %q: expected \"open\", \"closed\" or \"all\"", state)
}

func inState(is Issue, state string) bool {
	switch state {
	case "", StateOpen:
		return is.State == StateOpen
	case StateClosed:
		return is.State == StateClosed
	}
	return true
}

func hasLabel(is Issue, label string) bool {
	return slices.ContainsFunc(is.Labels, func(l string) bool { return strings.EqualFold(l, label) })
}
