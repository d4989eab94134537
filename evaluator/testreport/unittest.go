package testreport

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

var (
	// "test_x (mod.Class.test_x) ... ok" (Python 3.11+) or
	// "test_x (mod.Class) ... ok" (older); the result may follow a
	// docstring line, or output the test printed.
	unittestHead = regexp.MustCompile(`^(\w+) \(([\w.]+)\)(.*)$`)
	unittestRan  = regexp.MustCompile(`^Ran (\d+) tests? in `)
	// "FAIL: test_x (mod.Class.test_x)", heading a failure's traceback.
	unittestFailHead = regexp.MustCompile(`^(?:FAIL|ERROR): (\w+) \(([\w.]+)\)`)
)

// unittestResult reads a verbose unittest result word at the end of s.
func unittestResult(s string) (Outcome, bool) {
	s = strings.TrimSpace(s)
	switch {
	case s == "ok", s == "expected failure":
		return Pass, true
	case s == "FAIL", s == "ERROR", s == "unexpected success":
		return Fail, true
	case strings.HasPrefix(s, "skipped"):
		return Skip, true
	}
	return "", false
}

// parseUnittest reads the verbose (-v) output of Python's unittest, which
// it writes on standard error. The count of tests it reports ("Ran N
// tests") must match the cases found: a run cut short, or output that
// only looks like a report, is an error.
func parseUnittest(b []byte) ([]Case, error) {
	lines := strings.Split(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n")
	var cases []Case
	ran := -1
	for i := 0; i < len(lines); i++ {
		if m := unittestRan.FindStringSubmatch(lines[i]); m != nil {
			ran, _ = strconv.Atoi(m[1])
			continue
		}
		m := unittestHead.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		name, id, rest := m[1], m[2], m[3]
		if !strings.HasSuffix(id, "."+name) {
			id += "." + name
		}
		outcome, found := Outcome(""), false
		// The result follows " ... " on this line, on the docstring line
		// after it, or alone after what the test printed.
		for j := i; j < len(lines) && j <= i+200 && !found; j++ {
			s := lines[j]
			if j == i {
				s = rest
			} else if unittestHead.MatchString(s) || unittestRan.MatchString(s) {
				break
			}
			if k := strings.LastIndex(s, " ... "); k >= 0 {
				outcome, found = unittestResult(s[k+5:])
			} else if j > i {
				outcome, found = unittestResult(s)
			}
			if found {
				i = j
			}
		}
		if !found {
			return nil, fmt.Errorf("test %s: no result found after it", id)
		}
		cases = append(cases, Case{ID: id, Outcome: outcome})
	}
	if ran < 0 {
		return nil, fmt.Errorf("no \"Ran N tests\" line: unittest did not finish, or ran without -v")
	}
	messages := unittestMessages(lines)
	for i := range cases {
		if cases[i].Outcome == Fail {
			cases[i].Message = messages[cases[i].ID]
		}
	}
	if ran != len(cases) {
		return nil, fmt.Errorf("unittest says it ran %d tests, but the report lists %d", ran, len(cases))
	}
	return cases, nil
}

// unittestMessages reads the tracebacks unittest prints after the
// results, by test id: each under a "FAIL: name (id)" heading, between a
// line of dashes and the next line of equal signs or dashes.
func unittestMessages(lines []string) map[string]string {
	out := map[string]string{}
	for i := 0; i < len(lines); i++ {
		m := unittestFailHead.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		id := m[2]
		if !strings.HasSuffix(id, "."+m[1]) {
			id += "." + m[1]
		}
		j := i + 1
		if j < len(lines) && strings.HasPrefix(lines[j], "-----") {
			j++
		}
		var b strings.Builder
		for ; j < len(lines) && !strings.HasPrefix(lines[j], "=====") && !strings.HasPrefix(lines[j], "-----"); j++ {
			b.WriteString(lines[j])
			b.WriteString("\n")
		}
		out[id] = cut(strings.TrimSpace(b.String()))
		i = j - 1
	}
	return out
}
