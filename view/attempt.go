package view

import (
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"strconv"
	"strings"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/agent/mcp"
	"github.com/benchhq/bench/results"
)

// attemptBody is the attempt page: the whole trajectory in order and
// everything stored with it.
type attemptBody struct {
	A       *results.StoredAttempt
	Run     *results.Run
	Task    *results.TaskInfo
	Outcome string
	// Group is the attempts of A's group, Pairs A's task and index under
	// the other arms.
	Group, Pairs []results.AttemptMark
	Steps        []step
	Tools        []toolDef
	ToolsSize    int
	Servers      []serverView
	TestOutput   folded
	ErrorText    folded
	// Scoring is what the reward rests on: its basis, the per-test
	// verdicts, the agent's change.
	Scoring *scoringView
	// Time is where the attempt's time went, as stored; TimeBar draws it.
	Time    timeView
	TimeBar template.HTML
	// Isolation says how the run isolated its commands, when that makes
	// its rewards doubtful ("" otherwise); IsolationClass is "bad" for an
	// unisolated run, "warn" for one whose isolation is unknown.
	Isolation, IsolationClass string
	// Extra is what a later schema stores with the attempt, shown as
	// stored.
	Extra []results.ExtraTable
}

// step is one message of the conversation, with what the store holds
// of it: the model turn that produced an assistant message, the tool
// call a tool message answers.
type step struct {
	Index    int
	Role     string
	Name     string
	Content  folded
	Thinking folded
	Turn     *agent.Turn
	// Asked are the calls an assistant message asks for: their indexes
	// into the attempt's calls and their tools.
	Asked []askedCall
	Call  *callView
}

type askedCall struct {
	Index int
	Tool  string
}

// callView is one tool call as the harness handled it.
type callView struct {
	agent.CallRecord
	Args   []argView
	Result folded
}

// argView is one argument of a call: a string as its text (a file's
// content reads as a file), anything else as JSON.
type argView struct {
	Key  string
	Text folded
}

// callArgs splits a call's JSON arguments into its arguments, in the
// order the model sent them; arguments that are not an object are one
// argument without a key.
func callArgs(s string) []argView {
	dec := json.NewDecoder(strings.NewReader(s))
	whole := []argView{{Text: fold(prettyJSON(s))}}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return whole
	}
	var out []argView
	for dec.More() {
		tok, err := dec.Token()
		key, ok := tok.(string)
		if err != nil || !ok {
			return whole
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return whole
		}
		var text string
		if json.Unmarshal(v, &text) != nil {
			text = prettyJSON(string(v))
		}
		out = append(out, argView{Key: key, Text: fold(text)})
	}
	return out
}

// toolDef is one tool offered to the model.
type toolDef struct {
	Name        string
	Description string
	Parameters  string
	Size        int
}

// serverView is one MCP server attached to the attempt.
type serverView struct {
	results.ServerLog
	Tools  []mcp.ToolInfo
	Stderr folded
	// CatalogErr says why the catalog could not be read.
	CatalogErr string
}

func (s *Server) attemptPage(w *page, r *http.Request, store *results.Store) error {
	ctx := r.Context()
	id, err := attemptID(r)
	if err != nil {
		return err
	}
	a, err := store.LoadAttempt(ctx, id)
	if err != nil {
		return err
	}
	run, err := store.GetRun(ctx, a.RunID)
	if err != nil {
		return err
	}
	arms := make([]string, len(run.Arms))
	for i, x := range run.Arms {
		arms[i] = x.Name
	}
	b := &attemptBody{A: a, Run: run, Outcome: outcomeOf(a.Status, a.Reward), ErrorText: fold(a.Error)}
	if b.Group, b.Pairs, err = store.Neighbours(ctx, a, arms); err != nil {
		return err
	}
	for i := range run.Tasks {
		if run.Tasks[i].ID == a.Key.Task {
			b.Task = &run.Tasks[i]
		}
	}
	b.steps(a)
	b.tools(a.Tools)
	for _, sv := range a.Servers {
		v := serverView{ServerLog: sv, Stderr: fold(sv.Stderr)}
		if err := json.Unmarshal([]byte(sv.Catalog), &v.Tools); err != nil {
			v.CatalogErr = fmt.Sprintf("the stored catalog is not a list of tools: %v", err)
		}
		b.Servers = append(b.Servers, v)
	}
	if a.Test != nil {
		b.TestOutput = fold(a.Test.Output)
	}
	b.Scoring = newScoringView(a)
	b.Time = attemptTimes(a.Times)
	if b.Time.Known() {
		b.TimeBar = timeBars([]timeView{b.Time}, 460, "where the attempt's time went")
	}
	switch run.Isolation {
	case "none":
		b.IsolationClass = "bad"
	case "":
		b.IsolationClass = "warn"
	}
	if b.IsolationClass != "" {
		b.Isolation = results.RunHeader{Isolation: run.Isolation}.IsolationNote()
	}
	b.Extra = a.Extra
	return s.render(w, "attempt", fmt.Sprintf("Attempt %d: %s", a.ID, a.Key), b)
}

func attemptID(r *http.Request) (int64, error) {
	v := r.PathValue("id")
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil || id < 1 {
		return 0, badRequest("attempt id %q: expected a positive number (attempts.id)", v)
	}
	return id, nil
}

// steps pairs each message with its turn or its tool call: the n-th
// assistant message is turn n's reply, and the n-th tool message answers
// call n (the loop appends one observation per call, in order).
func (b *attemptBody) steps(a *results.StoredAttempt) {
	turn, call := 0, 0
	for i, m := range a.Messages {
		st := step{Index: i, Role: m.Role, Name: m.Name, Content: fold(m.Content), Thinking: fold(m.ReasoningContent)}
		switch m.Role {
		case "assistant":
			if turn < len(a.ModelTurns) {
				st.Turn = &a.ModelTurns[turn]
			}
			turn++
			next := call
			for _, tc := range m.ToolCalls {
				st.Asked = append(st.Asked, askedCall{Index: next, Tool: tc.Function.Name})
				next++
			}
		case "tool":
			if call < len(a.Calls) {
				c := a.Calls[call]
				st.Call = &callView{CallRecord: c, Args: callArgs(c.Arguments), Result: fold(c.Result)}
				if c.Result == m.Content {
					// One text, shown once: the call's result.
					st.Content = fold("")
				}
			}
			call++
		}
		b.Steps = append(b.Steps, st)
	}
}

// tools lists the tool definitions as sent.
func (b *attemptBody) tools(raw json.RawMessage) {
	b.ToolsSize = len(raw)
	var defs []struct {
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
	if json.Unmarshal(raw, &defs) != nil {
		return
	}
	for _, d := range defs {
		b.Tools = append(b.Tools, toolDef{Name: d.Function.Name, Description: d.Function.Description,
			Parameters: prettyJSON(string(d.Function.Parameters)), Size: len(d.Function.Description) + len(d.Function.Parameters)})
	}
}

// verdictClass colours a value that reads as a test outcome.
func verdictClass(v string) string {
	switch strings.ToLower(v) {
	case "pass", "passed", "ok", "success", "1", "true":
		return "pass"
	case "fail", "failed", "failure", "error", "0", "false":
		return "fail"
	case "skip", "skipped":
		return "skip"
	case "missing":
		return "missing"
	}
	return ""
}

// attemptText serves one stored text of an attempt whole, as plain text:
// what a page links to where it cut a long text.
func (s *Server) attemptText(w *page, r *http.Request, store *results.Store) error {
	id, err := attemptID(r)
	if err != nil {
		return err
	}
	a, err := store.LoadAttempt(r.Context(), id)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	part := q.Get("part")
	i, ierr := strconv.Atoi(q.Get("i"))
	index := func(n int) error {
		if ierr != nil || i < 0 || i >= n {
			return badRequest("i %q: expected an index from 0 to %d for part %q of attempt %d", q.Get("i"), n-1, part, id)
		}
		return nil
	}
	var text string
	switch part {
	case "message", "thinking":
		if err := index(len(a.Messages)); err != nil {
			return err
		}
		text = a.Messages[i].Content
		if part == "thinking" {
			text = a.Messages[i].ReasoningContent
		}
	case "result", "args":
		if err := index(len(a.Calls)); err != nil {
			return err
		}
		text = a.Calls[i].Result
		if part == "args" {
			text = a.Calls[i].Arguments
		}
	case "stderr":
		if err := index(len(a.Servers)); err != nil {
			return err
		}
		text = a.Servers[i].Stderr
	case "test":
		if a.Test == nil {
			return notFound("No test output", "attempt %d has no hidden-test result", id)
		}
		text = a.Test.Output
	case "error":
		text = a.Error
	case "diff":
		if a.Change == nil {
			return notFound("No change", "attempt %d has no stored change", id)
		}
		text = a.Change.Diff
	case "case":
		if err := index(len(a.Cases)); err != nil {
			return err
		}
		text = a.Cases[i].Message
	default:
		return badRequest("part %q: expected message, thinking, result, args, stderr, test, diff, case or error", part)
	}
	w.contentType = "text/plain; charset=utf-8"
	_, err = w.WriteString(text)
	return err
}
