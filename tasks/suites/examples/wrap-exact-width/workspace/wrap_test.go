package textwrap

import (
	"reflect"
	"testing"
)

func TestWrap(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		width int
		want  []string
	}{
		{"empty", "", 10, nil},
		{"spaces only", "   ", 10, nil},
		{"short", "hello world", 20, []string{"hello world"}},
		{"two lines", "one two three four", 9, []string{"one two", "three", "four"}},
		{"long word", "a verylongword b", 5, []string{"a", "verylongword", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Wrap(tt.in, tt.width); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Wrap(%q, %d) = %q, want %q", tt.in, tt.width, got, tt.want)
			}
		})
	}
}
