package textwrap

import (
	"reflect"
	"strings"
	"testing"
)

func TestHiddenWrapExactWidth(t *testing.T) {
	tests := []struct {
		in    string
		width int
		want  []string
	}{
		{"aaaa bbbbb cc", 10, []string{"aaaa bbbbb", "cc"}},
		{"aaaa bbbbbb cc", 10, []string{"aaaa", "bbbbbb cc"}},
		{"ab cd", 5, []string{"ab cd"}},
		{"ab cd", 4, []string{"ab", "cd"}},
		{"abcde", 5, []string{"abcde"}},
		{"one two three four", 9, []string{"one two", "three", "four"}},
		{"  lots   of   space  here ", 7, []string{"lots of", "space", "here"}},
		{"x verylongword y", 5, []string{"x", "verylongword", "y"}},
		{"", 10, nil},
	}
	for _, tt := range tests {
		if got := Wrap(tt.in, tt.width); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Wrap(%q, %d) = %q, want %q", tt.in, tt.width, got, tt.want)
		}
	}
}

func TestHiddenWrapNeverTooLong(t *testing.T) {
	text := "the quick brown fox jumps over the lazy dog and keeps on running far away"
	for width := 5; width <= 30; width++ {
		lines := Wrap(text, width)
		if got := strings.Join(lines, " "); got != text {
			t.Fatalf("width %d: words changed: %q", width, got)
		}
		for i, l := range lines {
			if len(l) > width && strings.Contains(l, " ") {
				t.Errorf("width %d: line %q is %d long", width, l, len(l))
			}
			if i+1 < len(lines) {
				next := strings.Fields(lines[i+1])[0]
				if len(l)+1+len(next) <= width {
					t.Errorf("width %d: %q would fit on line %q", width, next, l)
				}
			}
		}
	}
}

func TestHiddenFillAndIndent(t *testing.T) {
	if got, want := Fill("aaaa bbbbb cc", 10), "aaaa bbbbb\ncc"; got != want {
		t.Errorf("Fill = %q, want %q", got, want)
	}
	if got, want := Indent("aaaa bbbbb cc", "> ", 12), "> aaaa bbbbb\n> cc"; got != want {
		t.Errorf("Indent = %q, want %q", got, want)
	}
}
