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
	// "FAIL: test_x (mod.Class.test_x)": heading a failure's traceback,
	// after the results.
	unittestFailure = regexp.MustCompile(`^(?:FAIL|ERROR|UNEXPECTED SUCCESS): (\w+) \(([\w.]+)\)`)
	// The lines of = or - that open the details and the summary.
	unittestRule = regexp.MustCompile(`^(?:={20,}|-{20,})$`)
)

// unittestHeadAt matches the line that starts a test's result at lines[i]:
// "name (id)" where id is mod.Class or mod.Class.name, followed by " ... "
// on the line or on the docstring line after it, or a doctest's module
// followed by its "Doctest: mod.name ... " line. A line a test prints that merely looks like "total (approx.)"
// starts nothing.
func unittestHeadAt(lines []string, i int) []string {
	m := unittestHead.FindStringSubmatch(lines[i])
	if m == nil || strings.HasPrefix(m[2], ".") || strings.HasSuffix(m[2], ".") {
		return nil
	}
	if !strings.Contains(m[2], ".") && (m[3] != "" || i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "Doctest: "+m[2]+"."+m[1]+" ... ")) {
		// A doctest's id is its module alone, and its result follows on
		// a "Doctest: module.name ... " line.
		return nil
	}
	if strings.HasPrefix(m[3], " ... ") || (m[3] == "" && i+1 < len(lines) && strings.Contains(lines[i+1], " ... ")) {
		return m
	}
	return nil
}

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

// unittestID is the id of a test from its name and what the parentheses
// hold: the full id (3.11+) or the class (older).
func unittestID(name, id string) string {
	if !strings.HasSuffix(id, "."+name) {
		id += "." + name
	}
	return id
}

// parseUnittest reads the verbose (-v) output of Python's unittest, which
// it writes on standard error. The count of tests it reports ("Ran N
// tests") must match the cases found: a run cut short, or output that
// only looks like a report, is an error.
//
// What a test prints lands on the same stream, between its name and its
// result, so a test's result is the worst result word found anywhere
// before the next test's name: code under test that prints "ok" cannot
// hide the "FAIL" that unittest writes after it. A test named in the
// details of a failure ("FAIL: test_x (...)") fails too.
func parseUnittest(b []byte) ([]Case, error) {
	lines := strings.Split(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n")
	var cases []Case
	ran := -1
	var failed []string
	for i := 0; i < len(lines); i++ {
		if m := unittestRan.FindStringSubmatch(lines[i]); m != nil {
			ran, _ = strconv.Atoi(m[1])
			continue
		}
		if m := unittestFailure.FindStringSubmatch(lines[i]); m != nil {
			failed = append(failed, unittestID(m[1], m[2]))
			continue
		}
		m := unittestHeadAt(lines, i)
		if m == nil {
			continue
		}
		id, rest := unittestID(m[1], m[2]), m[3]
		outcome := Outcome("")
		// The result follows " ... " on this line, on the docstring line
		// after it, or alone after what the test printed; the test's
		// output ends at the next test, or where the details begin.
		j := i
		for ; j < len(lines); j++ {
			s := lines[j]
			if j == i {
				s = rest
			} else if unittestHeadAt(lines, j) != nil || unittestRan.MatchString(s) || unittestRule.MatchString(s) || unittestFailure.MatchString(s) {
				break
			}
			if k := strings.LastIndex(s, " ... "); k >= 0 {
				if o, ok := unittestResult(s[k+5:]); ok {
					outcome = worse(outcome, o)
				}
			} else if j > i {
				if o, ok := unittestResult(s); ok {
					outcome = worse(outcome, o)
				}
			}
		}
		if outcome == "" {
			return nil, fmt.Errorf("test %s: no result found after it", id)
		}
		i = j - 1
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
	for _, id := range failed {
		msg := messages[id]
		if msg == "" {
			msg = "named in the details of a failure"
		}
		cases = append(cases, Case{ID: id, Outcome: Fail, Message: msg})
	}
	return cases, nil
}

// unittestMessages reads the tracebacks unittest prints after the
// results, by test id: each under a "FAIL: name (id)" heading, between a
// line of dashes and the next line of equal signs or dashes.
func unittestMessages(lines []string) map[string]string {
	out := map[string]string{}
	for i := 0; i < len(lines); i++ {
		m := unittestFailure.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		id := unittestID(m[1], m[2])
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
