package testreport

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// junitSuite is a <testsuite> (or <testsuites>, which nests them).
type junitSuite struct {
	Name   string       `xml:"name,attr"`
	Cases  []junitCase  `xml:"testcase"`
	Suites []junitSuite `xml:"testsuite"`
}

type junitCase struct {
	Name      string       `xml:"name,attr"`
	Classname string       `xml:"classname,attr"`
	Time      string       `xml:"time,attr"`
	Failures  []junitIssue `xml:"failure"`
	Errors    []junitIssue `xml:"error"`
	Skipped   *junitIssue  `xml:"skipped"`
}

type junitIssue struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// parseJUnit reads a JUnit XML report: <testsuites> or a <testsuite>,
// nested at any depth. A failure or an error fails a case.
func parseJUnit(b []byte) ([]Case, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, errors.New("the report file is missing or empty")
	}
	var root junitSuite
	if err := xml.Unmarshal(b, &root); err != nil {
		return nil, err
	}
	var cases []Case
	var walk func(s junitSuite)
	walk = func(s junitSuite) {
		for _, c := range s.Cases {
			class := c.Classname
			if class == "" {
				class = s.Name
			}
			k := Case{ID: class + "::" + c.Name, Outcome: Pass}
			if secs, err := strconv.ParseFloat(c.Time, 64); err == nil {
				k.Duration = time.Duration(secs * float64(time.Second))
			}
			switch {
			case len(c.Failures)+len(c.Errors) > 0:
				k.Outcome = Fail
				var msg strings.Builder
				for _, f := range append(c.Failures, c.Errors...) {
					msg.WriteString(strings.TrimSpace(f.Message + "\n" + f.Text))
					msg.WriteString("\n")
				}
				k.Message = cut(msg.String())
			case c.Skipped != nil:
				k.Outcome = Skip
			}
			cases = append(cases, k)
		}
		for _, sub := range s.Suites {
			walk(sub)
		}
	}
	walk(root)
	if len(cases) == 0 {
		return nil, fmt.Errorf("no <testcase> in the report")
	}
	return cases, nil
}
