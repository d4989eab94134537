package overhead_test

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/benchhq/bench/overhead"
)

// sample is a report of two sets, with numbers chosen for the tests.
func sample() *overhead.Report {
	return &overhead.Report{
		Arm: "with-issues", Model: "qwen3:0.6b", NumCtx: 8192, Requests: 9,
		Baseline: overhead.Count{PromptTokens: 18},
		All:      overhead.Count{PromptTokens: 18 + 700},
		Sets: []overhead.SetCost{
			{Name: "builtin", Count: overhead.Count{PromptTokens: 18 + 500}, Tokens: 500, Tools: []overhead.ToolCost{
				{Name: "read_file", Count: overhead.Count{PromptTokens: 18 + 200}, Tokens: 200},
				{Name: "run_command", Count: overhead.Count{PromptTokens: 18 + 400}, Tokens: 400},
			}},
			{Name: "issues", Count: overhead.Count{PromptTokens: 18 + 300}, Tokens: 300, Tools: []overhead.ToolCost{
				{Name: "issues__<list>&", Count: overhead.Count{PromptTokens: 18 + 300}, Tokens: 300},
			}},
		},
	}
}

func TestWriteTable(t *testing.T) {
	var b bytes.Buffer
	if err := overhead.WriteTable(&b, sample(), overhead.View{Turns: 12.5}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"arm with-issues: model qwen3:0.6b, num_ctx 8,192",
		"no tools (baseline): 18 prompt tokens; 9 requests sent",
		"PER ATTEMPT",
		"builtin (2 tools)",
		"issues (1 tool)",
		"all tools (3)",
		"about 100 tokens once per request", // (200+400+300-700)/(3-1)
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	lines := strings.Split(out, "\n")
	row := func(label string) []string {
		for _, l := range lines {
			if f := strings.Fields(l); len(f) > 0 && strings.HasPrefix(strings.TrimSpace(l), label) {
				return strings.Fields(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), label)))
			}
		}
		t.Fatalf("no row %q in:\n%s", label, out)
		return nil
	}
	checks := map[string][]string{
		"builtin (2 tools)": {"500", "6.1%", "6,250", "600", "-100"},
		"run_command":       {"400", "4.9%", "5,000"},
		"all tools (3)":     {"700", "8.5%", "8,750", "900", "-200"},
	}
	for label, want := range checks {
		if got := row(label); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("row %s: %q, want %q", label, got, want)
		}
	}
	// Tools are listed from the most expensive.
	if strings.Index(out, "run_command") > strings.Index(out, "read_file") {
		t.Errorf("run_command (400) should come before read_file (200):\n%s", out)
	}
	// The number columns line up on their last digit.
	var ends []int
	for _, l := range lines {
		if strings.Contains(l, "4.9%") || strings.Contains(l, "6.1%") || strings.Contains(l, "NUM_CTX") {
			i := strings.Index(l, "%")
			if i < 0 {
				i = strings.Index(l, "NUM_CTX") + len("NUM_CTX") - 1
			}
			ends = append(ends, utf8.RuneCountInString(l[:i]))
		}
	}
	if len(ends) != 3 || ends[0] != ends[1] || ends[1] != ends[2] {
		t.Errorf("NUM_CTX column not aligned (%v):\n%s", ends, out)
	}
}

func TestWriteTableWithoutTurnsOrTools(t *testing.T) {
	var b bytes.Buffer
	r := sample()
	if err := overhead.WriteTable(&b, r, overhead.View{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "PER ATTEMPT") {
		t.Errorf("no turns, yet a PER ATTEMPT column:\n%s", b.String())
	}
	b.Reset()
	r.Sets, r.All = nil, r.Baseline
	if err := overhead.WriteTable(&b, r, overhead.View{Turns: 3}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "no tools offered") {
		t.Errorf("empty report:\n%s", b.String())
	}
}

func TestWriteTableMarksTruncation(t *testing.T) {
	r := sample()
	r.All = overhead.Count{PromptTokens: 8192, Truncated: true}
	var b bytes.Buffer
	if err := overhead.WriteTable(&b, r, overhead.View{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "≥8,174") || !strings.Contains(b.String(), "was cut") {
		t.Errorf("truncated total not marked:\n%s", b.String())
	}
	if strings.Contains(b.String(), "once per request") {
		t.Errorf("a framing estimate from truncated numbers:\n%s", b.String())
	}
}

func TestWriteLegend(t *testing.T) {
	var b bytes.Buffer
	if err := overhead.WriteLegend(&b, overhead.View{Turns: 7, TurnsFrom: "mean of run r1"}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"TOKENS", "NUM_CTX", "PER ATTEMPT  TOKENS × 7 turns (mean of run r1)", "FRAMING"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("legend lacks %q:\n%s", want, b.String())
		}
	}
}

func TestWriteBarsScale(t *testing.T) {
	for _, width := range []int{8, 20, 40} {
		var b bytes.Buffer
		if err := overhead.WriteBars(&b, sample(), overhead.View{Width: width}); err != nil {
			t.Fatal(err)
		}
		// In eighths of a cell: full blocks count 8, partial ones by their level.
		cells := map[string]float64{}
		for _, l := range strings.Split(strings.TrimRight(b.String(), "\n"), "\n") {
			label := strings.Fields(l)[0]
			n := 0
			for _, r := range l {
				switch {
				case r == '█':
					n += 8
				case r >= '▉' && r <= '▏':
					n += int('▏'-r) + 1
				}
			}
			cells[label] = float64(n) / 8
		}
		want := map[string]float64{
			"all":         float64(width), // 700, the largest
			"builtin":     float64(width) * 500 / 700,
			"run_command": float64(width) * 400 / 700,
			"read_file":   float64(width) * 200 / 700,
		}
		for label, w := range want {
			got, ok := cells[label]
			if !ok {
				t.Fatalf("width %d: no bar for %s:\n%s", width, label, b.String())
			}
			if d := got - w; d > 0.0625 || d < -0.0625 {
				t.Errorf("width %d: %s is %.3f cells, want %.3f", width, label, got, w)
			}
		}
		// Every line is as wide: the numbers line up.
		var lens []int
		for _, l := range strings.Split(strings.TrimRight(b.String(), "\n"), "\n") {
			lens = append(lens, utf8.RuneCountInString(l))
		}
		for _, n := range lens {
			if n != lens[0] {
				t.Errorf("width %d: lines of %v runes, want equal:\n%s", width, lens, b.String())
				break
			}
		}
	}
}

func TestWriteBarsSmallValueShows(t *testing.T) {
	r := sample()
	r.Sets[0].Tools[0].Tokens = 1
	var b bytes.Buffer
	if err := overhead.WriteBars(&b, r, overhead.View{Width: 10}); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.Contains(l, "read_file") && !strings.Contains(l, "▏") {
			t.Errorf("a 1-token tool should get the thinnest bar: %q", l)
		}
	}
}

// keepSVG writes a chart into $OVERHEAD_SVG_DIR, when set, for a person
// to look at.
func keepSVG(t *testing.T, name string, data []byte) {
	if dir := os.Getenv("OVERHEAD_SVG_DIR"); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Error(err)
		}
	}
}

// svgDoc is what the tests read of the chart.
type svgDoc struct {
	bars   int
	texts  []string
	titles []string
	width  string
}

func parseSVG(t *testing.T, data []byte) svgDoc {
	t.Helper()
	var doc svgDoc
	d := xml.NewDecoder(bytes.NewReader(data))
	var stack []string
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v\n%s", err, data)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			stack = append(stack, e.Name.Local)
			if len(stack) == 1 {
				if e.Name.Local != "svg" || e.Name.Space != "http://www.w3.org/2000/svg" {
					t.Errorf("root element %v, want svg in the SVG namespace", e.Name)
				}
				for _, a := range e.Attr {
					if a.Name.Local == "width" {
						doc.width = a.Value
					}
				}
			}
			if e.Name.Local == "rect" {
				for _, a := range e.Attr {
					if a.Name.Local == "class" && a.Value == "bar" {
						doc.bars++
					}
				}
			}
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) == 0 {
				continue
			}
			switch stack[len(stack)-1] {
			case "text", "tspan":
				doc.texts = append(doc.texts, string(e))
			case "title":
				doc.titles = append(doc.titles, string(e))
			}
		}
	}
	return doc
}

func TestWriteSVG(t *testing.T) {
	one := sample()
	two := sample()
	two.Arm = "builtins-only"
	two.Sets = two.Sets[:1]
	two.All = two.Sets[0].Count
	var b bytes.Buffer
	if err := overhead.WriteSVG(&b, []*overhead.Report{one, two}, overhead.View{Turns: 10, TurnsFrom: "estimate"}); err != nil {
		t.Fatal(err)
	}
	keepSVG(t, "arms.svg", b.Bytes())
	doc := parseSVG(t, b.Bytes())
	// one: 2 sets + 3 tools + all; two: 1 set + 2 tools.
	if doc.bars != 6+3 {
		t.Errorf("%d bars, want 9 (one per row)", doc.bars)
	}
	all := strings.Join(doc.texts, "\n")
	for _, want := range []string{
		"Prompt tokens per request, by tool",
		"model qwen3:0.6b · num_ctx 8,192",
		"arm with-issues", "arm builtins-only",
		"issues__<list>&", // escaped in the file, intact once parsed
		"700 · 8.5% · 7,000/attempt",
		"run_command",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("chart text lacks %q:\n%s", want, all)
		}
	}
	if !strings.Contains(strings.Join(doc.titles, "\n"), "its tools one by one: 900, framing -200") {
		t.Errorf("tooltips lack the framing: %q", doc.titles)
	}
	if doc.width == "" {
		t.Error("the svg element has no width")
	}
}

func TestWriteSVGEdgeCases(t *testing.T) {
	if err := overhead.WriteSVG(io.Discard, nil, overhead.View{}); err == nil {
		t.Error("no report: no error")
	}
	empty := &overhead.Report{Model: "m", NumCtx: 2048, Baseline: overhead.Count{PromptTokens: 5}, All: overhead.Count{PromptTokens: 5}}
	truncated := sample()
	truncated.Model = "other"
	truncated.Sets[1].Truncated = true
	truncated.Sets[1].Tools[0].Truncated = true
	long := sample()
	long.Sets[0].Tools[0].Name = strings.Repeat("a_very_long_tool_name_", 10)
	var b bytes.Buffer
	if err := overhead.WriteSVG(&b, []*overhead.Report{empty, truncated, long}, overhead.View{}); err != nil {
		t.Fatal(err)
	}
	keepSVG(t, "edge-cases.svg", b.Bytes())
	doc := parseSVG(t, b.Bytes())
	if doc.bars != 12 {
		t.Errorf("%d bars, want 12", doc.bars)
	}
	all := strings.Join(doc.texts, "\n")
	for _, want := range []string{"no tools offered", "models and num_ctx per panel", "model other", "cut at num_ctx", "…"} {
		if !strings.Contains(all, want) {
			t.Errorf("chart text lacks %q:\n%s", want, all)
		}
	}
}
