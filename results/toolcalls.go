package results

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// Reading messages.tool_calls_json fast. The column holds what
// json.Marshal writes for Ollama's tool calls, always in one shape:
//
//	[{"id":"call_0","function":{"index":0,"name":"read_file","arguments":{...}}},...]
//
// ("id" only when the model gave one). fastToolCalls reads that shape by
// hand and leaves anything else (another key order, escapes in a name,
// whitespace) to encoding/json: an export decodes a million of these.
// FuzzToolCalls holds the two readers to the same result.

// fastToolCalls reads stored tool calls of the usual shape and appends
// them to dst; ok is false when stored is not of that shape.
func fastToolCalls(stored string, dst []ExportToolCall) ([]ExportToolCall, bool) {
	p := tcParser{s: stored}
	out := dst
	if !p.lit("[") {
		return nil, false
	}
	for first := true; ; first = false {
		if p.lit("]") {
			return out, p.i == len(p.s)
		}
		if !first && !p.lit(",") {
			return nil, false
		}
		var c ExportToolCall
		c.Type = "function"
		if !p.lit("{") {
			return nil, false
		}
		if p.lit(`"id":`) {
			id, ok := p.str()
			if !ok || !p.lit(",") {
				return nil, false
			}
			c.ID = id
		}
		if !p.lit(`"function":{"index":`) || !p.int() || !p.lit(`,"name":`) {
			return nil, false
		}
		name, ok := p.str()
		if !ok || !p.lit(`,"arguments":`) {
			return nil, false
		}
		c.Function.Name = name
		args, ok := p.value()
		if !ok || !p.lit("}}") {
			return nil, false
		}
		if args == "null" {
			args = "{}"
		}
		c.Function.Arguments = json.RawMessage(args)
		out = append(out, c)
	}
}

type tcParser struct {
	s string
	i int
}

// lit consumes t if the input continues with it.
func (p *tcParser) lit(t string) bool {
	if strings.HasPrefix(p.s[p.i:], t) {
		p.i += len(t)
		return true
	}
	return false
}

// int consumes a JSON integer.
func (p *tcParser) int() bool {
	j := p.i
	if j < len(p.s) && p.s[j] == '-' {
		j++
	}
	k := j
	for k < len(p.s) && p.s[k] >= '0' && p.s[k] <= '9' {
		k++
	}
	if k == j || (p.s[j] == '0' && k-j > 1) {
		return false
	}
	p.i = k
	return true
}

// str consumes a JSON string with no escape, no control character and
// valid UTF-8 (what a string decodes to unchanged), and returns its text.
func (p *tcParser) str() (string, bool) {
	if !p.lit(`"`) {
		return "", false
	}
	start := p.i
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			v := p.s[start:p.i]
			p.i++
			return v, utf8.ValidString(v)
		case c == '\\' || c < 0x20:
			return "", false
		}
		p.i++
	}
	return "", false
}

// value consumes one JSON value without checking it (the export compacts
// the arguments, which checks them) and returns its text: an object,
// array, string or bare literal, found by matching brackets outside
// strings.
func (p *tcParser) value() (string, bool) {
	start := p.i
	depth := 0
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch c {
		case '"':
			p.i++
			for p.i < len(p.s) && p.s[p.i] != '"' {
				if p.s[p.i] == '\\' {
					p.i++
				}
				p.i++
			}
			if p.i >= len(p.s) {
				return "", false
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return p.s[start:p.i], p.i > start
			}
			depth--
		case ',':
			if depth == 0 {
				return p.s[start:p.i], p.i > start
			}
		case ' ', '\t', '\n', '\r':
			return "", false
		}
		p.i++
		if depth == 0 && (c == '}' || c == ']' || c == '"') {
			return p.s[start:p.i], true
		}
	}
	return "", false
}
