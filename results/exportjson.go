package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"
)

// The JSON of an export line, written by hand: byte for byte what
// json.Encoder (with SetEscapeHTML(false)) writes for an ExportLine, at a
// fraction of the cost. The encoder compacts and checks again every
// json.RawMessage of every line, the 4 KB tool list included, and reaches
// every field by reflection; an export writes a gigabyte of these lines.
// TestExportLineJSON and FuzzExportLineJSON hold the two to the same
// bytes.

// lineWriter writes export lines, keeping what every line of a run shares.
type lineWriter struct {
	buf []byte
	// options is the run's options as the encoder writes them: every line
	// of a run has the same (setOptions).
	options []byte
	// compacted caches the compacted form of raw JSON seen before (the
	// tool lists), by its text.
	compacted map[string][]byte
	scratch   bytes.Buffer
}

// setOptions encodes the options of the run whose lines come next.
func (w *lineWriter) setOptions(opts map[string]any) error {
	o, err := encodeOptions(opts)
	if err != nil {
		return fmt.Errorf("encode options: %w", err)
	}
	w.options = o
	return nil
}

// encodeOptions is the JSON of an options map as the encoder writes it.
func encodeOptions(opts map[string]any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(opts); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// line returns l's JSON line (with its newline), valid until the next
// call. l.Options must be the map given to setOptions.
func (w *lineWriter) line(l *ExportLine) ([]byte, error) {
	b := w.buf[:0]
	b = append(b, `{"run_id":`...)
	b = appendString(b, l.RunID)
	b = append(b, `,"arm":`...)
	b = appendString(b, l.Arm)
	b = append(b, `,"task_id":`...)
	b = appendString(b, l.TaskID)
	b = append(b, `,"index":`...)
	b = strconv.AppendInt(b, int64(l.Index), 10)
	b = append(b, `,"attempt_id":`...)
	b = strconv.AppendInt(b, l.AttemptID, 10)
	b = append(b, `,"group_id":`...)
	b = appendString(b, l.GroupID)
	b = append(b, `,"group_size":`...)
	b = strconv.AppendInt(b, int64(l.GroupSize), 10)
	b = append(b, `,"model":`...)
	b = appendString(b, l.Model)
	b = append(b, `,"options":`...)
	b = append(b, w.options...)
	b = append(b, `,"seed":`...)
	b = strconv.AppendInt(b, l.Seed, 10)
	b = append(b, `,"messages":`...)
	if l.Messages == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range l.Messages {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = w.appendMessage(b, &l.Messages[i]); err != nil {
				return nil, err
			}
		}
		b = append(b, ']')
	}
	b = append(b, `,"tools":`...)
	var err error
	if b, err = w.appendRaw(b, l.Tools, true); err != nil {
		return nil, fmt.Errorf("tools: %w", err)
	}
	b = append(b, `,"reward":`...)
	if b, err = appendFloat(b, l.Reward); err != nil {
		return nil, err
	}
	b = append(b, `,"tests_passed":`...)
	if l.TestsPassed == nil {
		b = append(b, "null"...)
	} else if b, err = appendFloat(b, *l.TestsPassed); err != nil {
		return nil, err
	}
	b = append(b, `,"isolation":`...)
	b = appendString(b, l.Isolation)
	b = append(b, `,"reward_basis":`...)
	b = appendString(b, l.RewardBasis)
	b = append(b, `,"verdict":`...)
	b = appendString(b, l.Verdict)
	b = append(b, `,"cases_passed":`...)
	if l.CasesPassed == nil {
		b = append(b, "null"...)
	} else if b, err = appendFloat(b, *l.CasesPassed); err != nil {
		return nil, err
	}
	b = append(b, `,"flags":`...)
	if l.Flags == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, f := range l.Flags {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, f)
		}
		b = append(b, ']')
	}
	b = append(b, `,"advantage":`...)
	if b, err = appendFloat(b, l.Advantage); err != nil {
		return nil, err
	}
	b = append(b, `,"advantage_method":`...)
	b = appendString(b, l.AdvantageMethod)
	b = append(b, `,"turns":`...)
	b = strconv.AppendInt(b, int64(l.Turns), 10)
	b = append(b, `,"tool_calls":`...)
	b = strconv.AppendInt(b, int64(l.ToolCalls), 10)
	b = append(b, `,"prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(l.PromptTokens), 10)
	b = append(b, `,"completion_tokens":`...)
	b = strconv.AppendInt(b, int64(l.CompletionTokens), 10)
	b = append(b, `,"stop_reason":`...)
	b = appendString(b, l.StopReason)
	b = append(b, `,"wall_ms":`...)
	if b, err = appendFloat(b, l.WallMS); err != nil {
		return nil, err
	}
	b = append(b, "}\n"...)
	w.buf = b
	return b, nil
}

func (w *lineWriter) appendMessage(b []byte, m *ExportMessage) ([]byte, error) {
	b = append(b, `{"role":`...)
	b = appendString(b, m.Role)
	b = append(b, `,"content":`...)
	b = appendString(b, m.Content)
	if m.ReasoningContent != "" {
		b = append(b, `,"reasoning_content":`...)
		b = appendString(b, m.ReasoningContent)
	}
	if len(m.ToolCalls) > 0 {
		b = append(b, `,"tool_calls":[`...)
		for i, c := range m.ToolCalls {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '{')
			if c.ID != "" {
				b = append(b, `"id":`...)
				b = appendString(b, c.ID)
				b = append(b, ',')
			}
			b = append(b, `"type":`...)
			b = appendString(b, c.Type)
			b = append(b, `,"function":{"name":`...)
			b = appendString(b, c.Function.Name)
			b = append(b, `,"arguments":`...)
			var err error
			if b, err = w.appendRaw(b, c.Function.Arguments, false); err != nil {
				return nil, fmt.Errorf("tool call arguments: %w", err)
			}
			b = append(b, "}}"...)
		}
		b = append(b, ']')
	}
	if m.Name != "" {
		b = append(b, `,"name":`...)
		b = appendString(b, m.Name)
	}
	if m.ToolCallID != "" {
		b = append(b, `,"tool_call_id":`...)
		b = appendString(b, m.ToolCallID)
	}
	return append(b, '}'), nil
}

// appendRaw appends raw JSON compacted, as the encoder writes a
// json.RawMessage ("null" for nil). With cache, the compacted form is
// kept for the next line that holds the same text.
func (w *lineWriter) appendRaw(b []byte, raw json.RawMessage, cache bool) ([]byte, error) {
	if raw == nil {
		return append(b, "null"...), nil
	}
	if cache {
		if c, ok := w.compacted[string(raw)]; ok {
			return append(b, c...), nil
		}
	}
	start := len(b)
	w.scratch.Reset()
	if err := json.Compact(&w.scratch, raw); err != nil {
		return nil, err
	}
	b = append(b, w.scratch.Bytes()...)
	if cache {
		if w.compacted == nil {
			w.compacted = map[string][]byte{}
		}
		w.compacted[string(raw)] = bytes.Clone(b[start:])
	}
	return b, nil
}

// appendFloat writes a float64 as the encoder does (ES6 number form), and
// refuses what it refuses.
func appendFloat(b []byte, f float64) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, fmt.Errorf("json: unsupported value: %s", strconv.FormatFloat(f, 'g', -1, 64))
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}

const hexDigits = "0123456789abcdef"

// plain marks the ASCII bytes a JSON string holds as they are (without
// HTML escaping): printable, not '"' nor '\\'.
var plain = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// appendString writes s as a JSON string exactly as the encoder does
// without HTML escaping: invalid UTF-8 as \ufffd, U+2028 and U+2029
// escaped, control characters as \n, \t... or \u00XX.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if plain[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
