package testreport

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/benchhq/bench/internal/procio"
)

// goEvent is one line of `go test -json` (cmd/test2json).
type goEvent struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

// parseGoJSON reads `go test -json`. Lines that are not JSON objects (the
// go command's own messages) are skipped; a line that starts as one and
// does not decode is an error. A test that started and never ended (its
// binary crashed or was killed) fails.
func parseGoJSON(b []byte) ([]Case, error) {
	type state struct {
		c    Case
		done bool
		out  *procio.Buffer
	}
	tests := map[string]*state{}
	var order []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	line := 0
	for sc.Scan() {
		line++
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 || raw[0] != '{' {
			continue
		}
		var ev goEvent
		if err := json.Unmarshal(raw, &ev); err != nil {
			return nil, fmt.Errorf("line %d: %v", line, err)
		}
		if ev.Test == "" {
			continue
		}
		id := ev.Package + "::" + ev.Test
		st := tests[id]
		if st == nil {
			st = &state{c: Case{ID: id}, out: newMessage()}
			tests[id] = st
			order = append(order, id)
		}
		switch ev.Action {
		case "output":
			st.out.WriteString(ev.Output)
		case "pass", "fail", "skip":
			// A test that ended twice (framing lines that the code under
			// test printed) keeps the worse of its ends.
			st.c.Outcome, st.done = worse(st.c.Outcome, Outcome(ev.Action)), true
			st.c.Duration = time.Duration(ev.Elapsed * float64(time.Second))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %v", line+1, err)
	}
	var cases []Case
	for _, id := range order {
		st := tests[id]
		if !st.done {
			st.c.Outcome = Fail
			st.out.WriteString("[bench: the test started and never ended]")
		}
		if st.c.Outcome == Fail {
			st.c.Message = st.out.String()
		}
		cases = append(cases, st.c)
	}
	return cases, nil
}
