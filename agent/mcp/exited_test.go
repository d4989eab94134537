package mcp

import (
	"strings"
	"testing"
)

// A server that exits between two calls, after answering the first, is
// not said to have exited during the second, whether its end was seen
// before the second call was sent or only after.
func TestServerExitedBetweenCalls(t *testing.T) {
	for _, reaped := range []bool{false, true} {
		c := connect(t, testServer("raw", "raw", map[string]string{"RAW_ONLY": "echo"}), Vars{}, Options{})
		if res := call(t, c, "raw__echo", map[string]any{"text": "one"}); res.IsError {
			t.Fatalf("first call: %+v", res)
		}
		if err := c.proc.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		if reaped {
			<-c.proc.exited
		}
		res := call(t, c, "raw__echo", map[string]any{"text": "two"})
		if !res.IsError || res.Kind != "transport" || strings.Contains(res.Text, "during the call") ||
			!strings.Contains(res.Text, "(signal: killed)") {
			t.Errorf("reaped before the call %v: %+v", reaped, res)
		}
	}
}
