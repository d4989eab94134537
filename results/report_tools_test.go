package results_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchhq/bench/results"
)

// The TOOLS column says what it covers per arm, and names the servers a
// task attaches itself, which no arm's figure includes (the issues server
// of a task added 149 tokens that the report left out silently).
func TestReportSaysWhatToolTokensCover(t *testing.T) {
	ctx := context.Background()
	s, err := results.Open(ctx, filepath.Join(t.TempDir(), "bench.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	run := &results.Run{ID: "r", CreatedAt: fixtureStart, Model: "m", AttemptsPerTask: 2, Status: results.RunFinished,
		Arms:  []results.Arm{{Name: "plain", Index: 0}, {Name: "with-web", Index: 1}},
		Tasks: []results.TaskInfo{{ID: "local"}, {ID: "tracker"}}}
	if err := s.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	for _, o := range []*results.Overhead{
		{Arm: "plain", Model: "m", NumCtx: 8192, Tokens: 546, Items: []results.OverheadItem{{Kind: results.OverheadSet, Name: "builtin", Set: "builtin"}}},
		{Arm: "with-web", Model: "m", NumCtx: 8192, Tokens: 700, Items: []results.OverheadItem{
			{Kind: results.OverheadSet, Name: "builtin", Set: "builtin"}, {Kind: results.OverheadSet, Name: "web", Set: "web"}}},
	} {
		if err := s.SaveOverhead(ctx, "r", o); err != nil {
			t.Fatal(err)
		}
	}
	for _, arm := range []string{"plain", "with-web"} {
		for _, task := range []string{"local", "tracker"} {
			for i := range 2 {
				r := (i + len(arm)) % 2
				a := &results.Attempt{RunID: "r", Key: results.AttemptKey{Arm: arm, Task: task, Index: i}, Status: results.StatusFinished,
					Reward: &r, Trajectory: fixtureTrajectory(arm, task, i), StartedAt: fixtureStart, FinishedAt: fixtureStart.Add(time.Minute)}
				if task == "tracker" {
					a.Servers = append(a.Servers, results.ServerLog{Name: "issues"})
				}
				if arm == "with-web" {
					a.Servers = append(a.Servers, results.ServerLog{Name: "web"})
				}
				if _, err := s.SaveAttempt(ctx, a); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	rep, err := s.Report(ctx, "r", results.ReportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.TaskServers) != 1 || rep.TaskServers[0].Task != "tracker" || strings.Join(rep.TaskServers[0].Servers, ",") != "issues" {
		t.Errorf("TaskServers = %+v, want tracker: issues", rep.TaskServers)
	}
	for _, f := range []results.Format{results.FormatTable, results.FormatMarkdown} {
		var b bytes.Buffer
		if err := rep.Write(&b, f); err != nil {
			t.Fatal(err)
		}
		out := strings.Join(strings.Fields(b.String()), " ") // across wrapped lines
		for _, want := range []string{"plain: builtin; with-web: builtin + web", "tracker (issues)", "(p 1.000)"} {
			if !strings.Contains(out, strings.Join(strings.Fields(want), " ")) {
				t.Errorf("%s report lacks %q:\n%s", f, want, b.String())
			}
		}
		if strings.Contains(b.String(), "(p\n") {
			t.Errorf("%s report breaks the line inside (p ...):\n%s", f, b.String())
		}
		if f == results.FormatTable {
			checkWidth(t, b.String())
		}
	}
}

// A run without measurements (stored before schema version 2) has no tool
// tokens: [] in JSON, as docs/export.md says, not null.
func TestReportJSONToolTokensEmptyNotNull(t *testing.T) {
	var b bytes.Buffer
	if err := fixtureReport(t).Write(&b, results.FormatJSON); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"tool_tokens": []`, `"task_servers": []`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("JSON lacks %s", want)
		}
	}
}
