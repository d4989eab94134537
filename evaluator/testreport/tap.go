package testreport

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

var (
	tapLine = regexp.MustCompile(`^(not )?ok\b\s*(\d+)?\s*(?:-\s*)?([^#]*?)\s*(?:#\s*(.*))?$`)
	tapPlan = regexp.MustCompile(`^1\.\.(\d+)`)
)

// parseTAP reads the Test Anything Protocol: "ok N - description",
// "not ok N - description", directives "# SKIP" and "# TODO" (a TODO
// failure passes), and a plan "1..N" that must match the tests found.
// A test is named by its description, or by its number.
func parseTAP(b []byte) ([]Case, error) {
	var cases []Case
	plan := -1
	for _, line := range strings.Split(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n") {
		line = strings.TrimRight(line, " \t")
		if m := tapPlan.FindStringSubmatch(line); m != nil {
			plan, _ = strconv.Atoi(m[1])
			continue
		}
		m := tapLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		num, desc, directive := m[2], strings.TrimSpace(m[3]), strings.ToUpper(strings.TrimSpace(m[4]))
		if num == "" {
			num = strconv.Itoa(len(cases) + 1)
		}
		id := desc
		if id == "" {
			id = num
		}
		c := Case{ID: id, Outcome: Pass}
		switch {
		case strings.HasPrefix(directive, "SKIP"):
			c.Outcome = Skip
		case strings.HasPrefix(directive, "TODO"):
		case m[1] != "":
			c.Outcome = Fail
		}
		cases = append(cases, c)
	}
	if plan < 0 {
		return nil, fmt.Errorf("no plan line (1..N): the run did not finish")
	}
	if plan != len(cases) {
		return nil, fmt.Errorf("the plan says %d tests, but the report lists %d", plan, len(cases))
	}
	return cases, nil
}
