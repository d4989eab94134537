// Package procio is what the harness's child processes have in common: a
// bounded buffer that keeps the beginning and the end of their output, and
// the process-group plumbing that makes a command's children die with it.
package procio

import (
	"fmt"
	"sync"
	"unicode/utf8"
)

// Buffer keeps the first and the last bytes written to it, up to a limit
// in all, and counts the bytes it drops in between: its memory stays
// bounded whatever the size of the output. The text it gives back never
// starts or ends in the middle of a UTF-8 character where it was cut.
//
// A Buffer is safe for concurrent use: a command's stdout and stderr and
// the harness's own notes may share one.
type Buffer struct {
	mu      sync.Mutex
	headMax int
	head    []byte
	tail    []byte // ring of the last bytes; len == cap once full
	pos     int    // where the ring writes next, once full
	total   int64
}

// New returns a Buffer that keeps at most limit bytes: the first head of
// them, and the last limit-head. head is clamped to [0, limit]; head ==
// limit keeps only the beginning.
func New(limit, head int) *Buffer {
	limit = max(limit, 0)
	head = min(max(head, 0), limit)
	return &Buffer{headMax: head, tail: make([]byte, 0, limit-head)}
}

// Write keeps p, or the parts of it that fit. It never fails.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	write(b, p)
	return len(p), nil
}

// WriteString is Write for a string, without copying it first.
func (b *Buffer) WriteString(s string) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	write(b, s)
	return len(s), nil
}

func write[T string | []byte](b *Buffer, p T) {
	b.total += int64(len(p))
	if room := b.headMax - len(b.head); room > 0 {
		k := min(room, len(p))
		b.head = append(b.head, p[:k]...)
		p = p[k:]
	}
	c := cap(b.tail)
	if c == 0 || len(p) == 0 {
		return
	}
	if len(p) >= c {
		b.tail = append(b.tail[:0], p[len(p)-c:]...)
		b.pos = 0
		return
	}
	if room := c - len(b.tail); room > 0 {
		k := min(room, len(p))
		b.tail = append(b.tail, p[:k]...)
		p = p[k:]
	}
	for len(p) > 0 {
		k := copy(b.tail[b.pos:], p)
		p = p[k:]
		b.pos = (b.pos + k) % c
	}
}

// Len is the number of bytes written, kept or not.
func (b *Buffer) Len() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.total
}

// Parts returns what was kept of the beginning and of the end, and how
// many bytes were dropped between them. When nothing was dropped (cut ==
// 0), head+tail is everything written; otherwise a character split by the
// cut is dropped with it, so head and tail are whole characters. Parts is
// for a caller that words its own note; String has the usual one.
func (b *Buffer) Parts() (head, tail string, cut int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.tail
	if len(t) == cap(t) && b.pos > 0 {
		t = append(append(make([]byte, 0, len(t)), t[b.pos:]...), t[:b.pos]...)
	}
	if b.total == int64(len(b.head)+len(t)) {
		return string(b.head), string(t), 0
	}
	h := TrimLastRune(b.head)
	t = trimFirstRune(t)
	return string(h), string(t), b.total - int64(len(h)+len(t))
}

// String returns what was kept, with a line "[... N bytes cut ...]" where
// bytes were dropped.
func (b *Buffer) String() string {
	head, tail, cut := b.Parts()
	switch {
	case cut == 0:
		return head + tail
	case tail == "":
		return fmt.Sprintf("%s\n[... %d bytes cut ...]", head, cut)
	}
	return fmt.Sprintf("%s\n[... %d bytes cut ...]\n%s", head, cut, tail)
}

// TrimLastRune drops an incomplete character from the end of p, left there
// by a cut.
func TrimLastRune(p []byte) []byte {
	for i := 1; i <= utf8.UTFMax && i <= len(p); i++ {
		if utf8.RuneStart(p[len(p)-i]) {
			if !utf8.FullRune(p[len(p)-i:]) {
				return p[:len(p)-i]
			}
			return p
		}
	}
	return p
}

// trimFirstRune drops the continuation bytes of a character cut at the
// start of p.
func trimFirstRune(p []byte) []byte {
	for i := 0; i < utf8.UTFMax-1 && len(p) > 0 && !utf8.RuneStart(p[0]); i++ {
		p = p[1:]
	}
	return p
}
