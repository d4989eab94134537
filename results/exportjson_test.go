package results

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// encoderLine is what json.Encoder writes for l, as Export wrote it
// before it wrote lines by hand.
func encoderLine(t testing.TB, l *ExportLine) (string, error) {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	err := enc.Encode(l)
	return b.String(), err
}

func handLine(l *ExportLine) (string, error) {
	var w lineWriter
	if err := w.setOptions(l.Options); err != nil {
		return "", err
	}
	b, err := w.line(l)
	return string(b), err
}

// awkward are strings that JSON encoders tend to write differently.
var awkward = []string{"", "plain", `quote " and \ backslash`, "<html> & 'x'", "tab\tnew\nline\rcr\b\f",
	"\x00\x01\x1f\x7f", "é ü 漢字 🙂", "\u2028\u2029", "bad \xff\xfe utf8 \xe2\x80", "\ufffd", "</script>"}

func sampleLine(rng *rand.Rand) *ExportLine {
	str := func() string {
		if rng.IntN(3) == 0 {
			return awkward[rng.IntN(len(awkward))]
		}
		var b strings.Builder
		for range rng.IntN(20) {
			b.WriteString(awkward[rng.IntN(len(awkward))])
			b.WriteByte(byte(rng.IntN(256)))
		}
		return b.String()
	}
	floats := []float64{0, math.Copysign(0, -1), 1, -1, 0.5, 1e-7, -3.2e-9, 1e21, 1.5e300, 123456789.125, 1.0 / 3, -0.7071067811865476, 1e20}
	num := func() float64 { return floats[rng.IntN(len(floats))] }
	l := &ExportLine{RunID: str(), Arm: str(), TaskID: str(), Index: rng.IntN(100), AttemptID: rng.Int64(),
		GroupID: str(), GroupSize: rng.IntN(16), Model: str(),
		Options: map[string]any{"num_ctx": 8192.0, "temperature": num(), str(): str(), "nested": map[string]any{"a<b": []any{1.0, "x&y"}}},
		Seed:    rng.Int64() - rng.Int64(), Tools: json.RawMessage(`[ {"type" : "function", "function": {"name":"a<b", "description":"x\u003cy &amp;"}} ]`),
		Reward: num(), Advantage: num(), AdvantageMethod: str(), Turns: rng.IntN(50), ToolCalls: rng.IntN(50),
		PromptTokens: rng.IntN(1 << 20), CompletionTokens: rng.IntN(1 << 16), StopReason: str(), WallMS: num()}
	if rng.IntN(10) > 0 {
		l.Messages = []ExportMessage{}
	}
	for range rng.IntN(6) {
		m := ExportMessage{Role: str(), Content: str(), ReasoningContent: str(), Name: str(), ToolCallID: str()}
		if rng.IntN(2) == 0 {
			l.Verdict, l.Flags = str(), append(l.Flags, str())
			f := rng.Float64()
			l.CasesPassed = &f
		}
		for range rng.IntN(3) {
			m.ToolCalls = append(m.ToolCalls, ExportToolCall{ID: str(), Type: "function",
				Function: ExportFunction{Name: str(), Arguments: json.RawMessage(`{ "path" : "a <b>",  "n": [1, 2.50, {}] }`)}})
		}
		l.Messages = append(l.Messages, m)
	}
	return l
}

// The hand-written lines are the encoder's, byte for byte.
func TestExportLineJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		l := sampleLine(rng)
		want, werr := encoderLine(t, l)
		got, gerr := handLine(l)
		if (werr != nil) != (gerr != nil) {
			t.Fatalf("line %d: error %v, encoder's %v", i, gerr, werr)
		}
		if got != want {
			t.Fatalf("line %d:\n got %q\nwant %q", i, got, want)
		}
	}
	for _, f := range []float64{math.NaN(), math.Inf(1)} {
		l := sampleLine(rng)
		l.Advantage = f
		if _, err := handLine(l); err == nil {
			t.Errorf("advantage %v encoded; the encoder refuses it", f)
		}
	}
	l := sampleLine(rng)
	l.Tools = json.RawMessage(`[1,`)
	if _, err := handLine(l); err == nil {
		t.Error("invalid tools JSON encoded; the encoder refuses it")
	}
}

func FuzzExportLineJSON(f *testing.F) {
	for _, s := range awkward {
		f.Add(s, s, 0.5, `{"a":1}`)
	}
	f.Fuzz(func(t *testing.T, content, name string, adv float64, args string) {
		l := &ExportLine{RunID: name, Options: map[string]any{name: content}, Advantage: adv, Tools: json.RawMessage(`[]`),
			Messages: []ExportMessage{{Role: "tool", Content: content, Name: name, ToolCalls: []ExportToolCall{{Type: "function",
				Function: ExportFunction{Name: name, Arguments: json.RawMessage(args)}}}}}}
		want, werr := encoderLine(t, l)
		got, gerr := handLine(l)
		if (werr != nil) != (gerr != nil) {
			t.Fatalf("error %v, encoder's %v", gerr, werr)
		}
		if werr == nil && got != want {
			t.Fatalf("\n got %q\nwant %q", got, want)
		}
	})
}

// Tool calls read by hand are those encoding/json reads.
func FuzzToolCalls(f *testing.F) {
	for _, s := range []string{
		`[{"id":"call_0","function":{"index":0,"name":"read_file","arguments":{"path":"a.txt"}}}]`,
		`[{"function":{"index":0,"name":"run","arguments":{"command":"ls \"x\" \\ y","n":[1,{"a":"}"}]}}},{"id":"c2","function":{"index":1,"name":"nope","arguments":{}}}]`,
		`[{"function":{"index":0,"name":"x","arguments":null}}]`,
		`[]`, `[{"function":{"name":"x","index":0,"arguments":{}}}]`, `[{"id":"\u00e9","function":{"index":0,"name":"x","arguments":"s"}}]`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, stored string) {
		fast, ok := fastToolCalls(stored, nil)
		if !ok {
			return
		}
		slow, err := decodeToolCalls(stored)
		if err != nil {
			// The hand reader leaves checking the arguments to the
			// export's compaction, which must refuse them then.
			for _, c := range fast {
				if json.Valid(c.Function.Arguments) {
					continue
				}
				return
			}
			t.Fatalf("%q: read by hand as %+v, encoding/json says %v", stored, fast, err)
		}
		if len(fast) != len(slow) {
			t.Fatalf("%q: %d calls, encoding/json %d", stored, len(fast), len(slow))
		}
		for i := range fast {
			a, b := fast[i], slow[i]
			if a.ID != b.ID || a.Type != b.Type || a.Function.Name != b.Function.Name || string(a.Function.Arguments) != string(b.Function.Arguments) {
				t.Fatalf("%q: call %d %+v, encoding/json %+v", stored, i, a, b)
			}
		}
	})
}

func TestFastToolCallsTakesTheStoredShape(t *testing.T) {
	stored := `[{"id":"call_0","function":{"index":0,"name":"read_file","arguments":{"path":"a.txt","n":[1,2]}}},{"function":{"index":1,"name":"x","arguments":{}}}]`
	if _, ok := fastToolCalls(stored, nil); !ok {
		t.Errorf("the shape json.Marshal writes is left to encoding/json: %s", stored)
	}
}
