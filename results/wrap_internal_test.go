package results

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// wrap never breaks a line inside "(p 1.000)", whatever the width, and
// keeps every line within it.
func TestWrapKeepsNonBreakingSpaces(t *testing.T) {
	text := "with-issues: its tools cost 546 tokens a turn (+149 against baseline) and move the pass rate by -12.5pp (p" + nbsp + "1.000)."
	for width := 20; width <= 120; width++ {
		out := wrap(text, width)
		if strings.Contains(out, nbsp) {
			t.Fatalf("width %d: the non-breaking marker is left in %q", width, out)
		}
		if !strings.Contains(out, "(p 1.000)") {
			t.Errorf("width %d: %q breaks inside (p 1.000)", width, out)
		}
		for _, l := range strings.Split(out, "\n") {
			if utf8.RuneCountInString(l) > width {
				t.Errorf("width %d: line %q is wider", width, l)
			}
		}
	}
}
