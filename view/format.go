package view

import (
	"encoding/json"
	"fmt"
	"html/template"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/benchhq/bench/results"
)

// funcs are the template functions: formatting only, no computation.
func funcs() template.FuncMap {
	return template.FuncMap{
		"pct":      pct,
		"share":    func(v float64) string { return pct(&v) },
		"pctv":     pctv,
		"ppv":      func(v float64) string { return pp(&v) },
		"atk":      atk,
		"sign":     signClass,
		"sig":      func(p *float64) bool { return p != nil && *p < 0.05 },
		"pvalv":    func(v float64) string { return pval(&v) },
		"q":        func(k, v string) url.Values { return url.Values{k: {v}} },
		"ci":       ci,
		"pp":       pp,
		"pval":     pval,
		"num":      num,
		"fixed":    fixed,
		"tokens":   tokens,
		"ms":       millis,
		"dur":      duration,
		"when":     when,
		"whenp":    whenPtr,
		"raw":      rawValue,
		"outcome":  outcomeOf,
		"markText": markText,
		"fold":     fold,
		"link":     linkText,
		"jsonPretty": func(s string) string {
			return prettyJSON(s)
		},
		"add":       func(a, b int) int { return a + b },
		"query":     func(path string, v url.Values) string { return withQuery(path, v) },
		"armColor":  armColor,
		"diffLines": diffLines,
		"join":      strings.Join,
		"bytes":     func(n int64) string { return byteSize(int(n)) },
	}
}

// pct formats a proportion as a whole percentage, "-" when undefined.
func pct(v *float64) string {
	if v == nil || math.IsNaN(*v) {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100**v)
}

// atk formats pass@k of m (pass^k when hat), "-" when undefined and
// with "*" when averaged over only part of the groups.
func atk(m results.Metrics, k int, hat bool) string {
	for _, a := range m.AtK {
		if a.K != k {
			continue
		}
		v := a.PassAtK
		if hat {
			v = a.PassHatK
		}
		s := pct(v)
		if v != nil && a.Partial {
			s += "*"
		}
		return s
	}
	return "-"
}

// ci formats an interval of proportions, "39–86%".
func ci(v []float64) string {
	if len(v) != 2 {
		return "-"
	}
	return fmt.Sprintf("%.0f–%.0f%%", 100*v[0], 100*v[1])
}

// pp formats a difference of proportions in percentage points, signed.
func pp(v *float64) string {
	if v == nil {
		return "-"
	}
	s := strconv.FormatFloat(100**v, 'f', 1, 64)
	switch {
	case s == "-0.0" || s == "0.0":
		return "0.0pp"
	case *v > 0:
		return "+" + s + "pp"
	}
	return "−" + strings.TrimPrefix(s, "-") + "pp"
}

// pval formats a p-value.
func pval(p *float64) string {
	switch {
	case p == nil:
		return "-"
	case *p < 0.001:
		return "<0.001"
	}
	return strconv.FormatFloat(*p, 'f', 3, 64)
}

// num formats a float with prec decimals, "-" when nil.
func num(v *float64, prec int) string {
	if v == nil {
		return "-"
	}
	return fixed(*v, prec)
}

func fixed(v float64, prec int) string {
	if math.IsNaN(v) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

// tokens formats a token count: 987, 12.3k, 1.23M.
func tokens(v float64) string {
	switch a := math.Abs(v); {
	case math.IsNaN(v):
		return "-"
	case a < 10_000:
		return fmt.Sprintf("%.0f", v)
	case a < 1_000_000:
		return fmt.Sprintf("%.1fk", v/1_000)
	}
	return fmt.Sprintf("%.2fM", v/1_000_000)
}

// millis formats a time in milliseconds.
func millis(ms float64) string { return duration(time.Duration(ms * float64(time.Millisecond))) }

// duration formats a duration to about three digits.
func duration(d time.Duration) string {
	switch {
	case d <= 0:
		return "0"
	case d < time.Millisecond:
		return fmt.Sprintf("%dµs", d.Microseconds())
	case d < 10*time.Millisecond:
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		s := int(math.Round(d.Seconds()))
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	}
	m := int(math.Round(d.Minutes()))
	return fmt.Sprintf("%dh%02dm", m/60, m%60)
}

func when(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

func whenPtr(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return when(*t)
}

// rawValue is a number as a data attribute carries it: every digit, so
// that a test can compare it with the JSON report.
func rawValue(v any) string {
	switch x := v.(type) {
	case *float64:
		if x == nil {
			return ""
		}
		return strconv.FormatFloat(*x, 'g', -1, 64)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case int:
		return strconv.Itoa(x)
	case []float64:
		parts := make([]string, len(x))
		for i, f := range x {
			parts[i] = strconv.FormatFloat(f, 'g', -1, 64)
		}
		return strings.Join(parts, ",")
	}
	return fmt.Sprint(v)
}

// The outcomes of an attempt, as marks and filters name them.
const (
	outcomePass     = results.OutcomePass
	outcomeFail     = results.OutcomeFail
	outcomeInfra    = results.OutcomeInfra
	outcomeCanceled = results.OutcomeCanceled
)

// outcomeOf names an attempt's outcome.
func outcomeOf(status results.AttemptStatus, reward *int) string {
	return results.Outcome(status, reward)
}

// markText is the tooltip of an attempt's mark.
func markText(m results.AttemptMetrics) string {
	s := fmt.Sprintf("#%d %s · %s", m.Key.Index, outcomeOf(m.Status, m.Reward), m.StopReason)
	if m.Status == results.StatusFinished {
		s += fmt.Sprintf(" · %d turns · %s tokens", m.Turns, tokens(float64(m.PromptTokens+m.CompletionTokens)))
		if m.Advantage != nil {
			s += fmt.Sprintf(" · adv %+.2f", *m.Advantage)
		}
	}
	return s
}

// foldLines and foldBytes bound what a text shows unfolded.
const (
	foldLines = 12
	foldBytes = 1500
	// cutBytes is the most of one text a page holds; past it the page
	// says how much more there is and links to the whole text.
	cutBytes = 256 << 10
)

// folded is a text as a page shows it: whole, folded when long, and cut
// at cutBytes with a note that says so.
type folded struct {
	Text  string
	Lines int
	Bytes int
	Long  bool
	// Cut is set when Text holds only the first cutBytes of the text.
	Cut bool
}

func fold(s string) folded {
	f := folded{Text: s, Lines: strings.Count(s, "\n") + 1, Bytes: len(s)}
	if s == "" {
		f.Lines = 0
	}
	f.Long = f.Lines > foldLines || f.Bytes > foldBytes
	if len(s) > cutBytes {
		cut := cutBytes
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		f.Text, f.Cut = s[:cut], true
	}
	return f
}

// linkedText is a folded text with the address of the whole text, for
// a page that had to cut it.
type linkedText struct {
	folded
	Link string
}

// linkText links f to part i of attempt id's texts (none when part is "").
func linkText(f folded, id int64, part string, i int) linkedText {
	t := linkedText{folded: f}
	if part != "" {
		t.Link = fmt.Sprintf("/attempts/%d/text?part=%s&i=%d", id, url.QueryEscape(part), i)
	}
	return t
}

// Head is the text's first line, shortened, for the fold's summary.
func (f folded) Head() string {
	line, _, _ := strings.Cut(f.Text, "\n")
	if utf8.RuneCountInString(line) > 100 {
		line = string([]rune(line)[:100]) + "…"
	}
	return line
}

// Summary says how long a folded text is.
func (f folded) Summary() string {
	return fmt.Sprintf("%d lines, %s", f.Lines, byteSize(f.Bytes))
}

func byteSize(n int) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KB", float64(n)/1024)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
}

// prettyJSON indents a JSON text; anything else is returned as it is.
func prettyJSON(s string) string {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return s
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return s
	}
	return string(b)
}

// withQuery returns path with the non-empty values of v as its query.
func withQuery(path string, v url.Values) string {
	q := url.Values{}
	for k, vs := range v {
		for _, x := range vs {
			if x != "" {
				q.Add(k, x)
			}
		}
	}
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}

// diffLine is one line of a unified diff and its kind: add, del, hunk,
// file or context.
type diffLine struct {
	Kind string
	Text string
}

func diffLines(s string) []diffLine {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	out := make([]diffLine, len(lines))
	for i, l := range lines {
		k := "ctx"
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"), strings.HasPrefix(l, "diff "):
			k = "file"
		case strings.HasPrefix(l, "@@"):
			k = "hunk"
		case strings.HasPrefix(l, "+"):
			k = "add"
		case strings.HasPrefix(l, "-"):
			k = "del"
		}
		out[i] = diffLine{Kind: k, Text: l}
	}
	return out
}

// armColor tells arm i apart in plots (Paul Tol's bright scheme, safe
// for colour-blind readers).
func armColor(i int) string {
	colors := [...]string{"#4477aa", "#ee6677", "#228833", "#ccbb44", "#66ccee", "#aa3377", "#bbbbbb"}
	return colors[i%len(colors)]
}

// signClass is "pos" for a positive difference, "neg" for a negative one.
func signClass(v any) string {
	var f float64
	switch x := v.(type) {
	case *float64:
		if x == nil {
			return ""
		}
		f = *x
	case float64:
		f = x
	}
	switch {
	case f > 0:
		return "pos"
	case f < 0:
		return "neg"
	}
	return ""
}
