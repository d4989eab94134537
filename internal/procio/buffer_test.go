package procio

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

func TestBuffer(t *testing.T) {
	tests := []struct {
		name        string
		limit, head int
		writes      []string
		want        string
	}{
		{"under", 10, 5, []string{"abc", "de"}, "abcde"},
		{"exactly", 10, 5, []string{"0123456789"}, "0123456789"},
		{"over in one", 10, 5, []string{"0123456789ABCDEF"}, "01234\n[... 6 bytes cut ...]\nBCDEF"},
		{"over in pieces", 10, 5, []string{"012", "345", "678", "9AB", "CDE", "F"}, "01234\n[... 6 bytes cut ...]\nBCDEF"},
		{"ring wraps many times", 4, 2, []string{"ab", "cdefghijklmnopq", "rs", "t"}, "ab\n[... 16 bytes cut ...]\nst"},
		{"no cut rune", 6, 3, []string{"éé", "x", "éé"}, "é\n[... 5 bytes cut ...]\né"},
		{"a quarter head", 8, 2, []string{"hh", "mmmmmmmmmm", "tttttt"}, "hh\n[... 10 bytes cut ...]\ntttttt"},
		{"head only", 5, 5, []string{"0123", "456789"}, "01234\n[... 5 bytes cut ...]"},
		{"head only, no cut rune", 5, 5, []string{"ééé"}, "éé\n[... 2 bytes cut ...]"},
		{"tail only", 4, 0, []string{"0123", "456789"}, "\n[... 6 bytes cut ...]\n6789"},
		{"head clamped to the limit", 3, 9, []string{"abcdef"}, "abc\n[... 3 bytes cut ...]"},
		{"nothing kept", 0, 0, []string{"abc"}, "\n[... 3 bytes cut ...]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := New(tt.limit, tt.head)
			var n int64
			for i, s := range tt.writes {
				var k int
				var err error
				if i%2 == 0 {
					k, err = b.Write([]byte(s))
				} else {
					k, err = b.WriteString(s)
				}
				if err != nil || k != len(s) {
					t.Fatalf("Write(%q) = %d, %v", s, k, err)
				}
				n += int64(k)
			}
			if got := b.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
			if b.Len() != n {
				t.Errorf("Len() = %d, want %d", b.Len(), n)
			}
		})
	}
}

// TestBufferKeepsWholeCharacters writes a three-byte character over and
// over, in writes of every size, and checks that what is kept is valid
// UTF-8 and that the count adds up.
func TestBufferKeepsWholeCharacters(t *testing.T) {
	for _, limit := range []int{64, 65, 66, 100} {
		for _, share := range []int{1, 2, 4} {
			for per := 1; per <= 7; per++ {
				b := New(limit, limit/share)
				for range 50 {
					b.Write([]byte(strings.Repeat("日", per)))
				}
				head, tail, cut := b.Parts()
				if !utf8.ValidString(head) || !utf8.ValidString(tail) || !utf8.ValidString(b.String()) {
					t.Fatalf("limit %d, head %d, %d per write: not UTF-8: %q / %q", limit, limit/share, per, head, tail)
				}
				if int64(len(head)+len(tail))+cut != b.Len() || len(head)+len(tail) > limit {
					t.Errorf("limit %d: kept %d+%d, cut %d, of %d", limit, len(head), len(tail), cut, b.Len())
				}
			}
		}
	}
}

func TestBufferConcurrentWrites(t *testing.T) {
	b := New(1000, 250)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 100 {
				fmt.Fprintf(b, "writer %d line %d\n", i, j)
			}
		})
	}
	wg.Wait()
	head, tail, cut := b.Parts()
	if int64(len(head)+len(tail))+cut != b.Len() || len(head) != 250 || len(tail) != 750 {
		t.Errorf("kept %d+%d, cut %d, of %d", len(head), len(tail), cut, b.Len())
	}
}

func BenchmarkBufferWrite(b *testing.B) {
	line := []byte(strings.Repeat("x", 79) + "\n")
	buf := New(64<<10, 32<<10)
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		buf.Write(line)
	}
}
