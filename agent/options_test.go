package agent_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/benchhq/bench/agent"
)

func TestCheckOptions(t *testing.T) {
	tests := []struct {
		name    string
		opts    map[string]any
		key     string
		wantMsg string
	}{
		{"flags", map[string]any{"temperature": 0.7, "num_ctx": 8192, "num_predict": -1}, "", ""},
		{"toml", map[string]any{"temperature": int64(1), "top_k": int64(20), "stop": []any{"\n\n"}, "use_mmap": true}, "", ""},
		{"json", map[string]any{"num_ctx": 8192.0, "top_p": json.Number("0.9")}, "", ""},
		{"temperature word", map[string]any{"temperature": "hot"}, "temperature", `expected a number, got the string "hot"`},
		{"temperature negative", map[string]any{"temperature": -0.5}, "temperature", "0 or more"},
		{"num_ctx fraction", map[string]any{"num_ctx": 8192.5}, "num_ctx", "expected an integer"},
		{"num_ctx zero", map[string]any{"num_ctx": 0}, "num_ctx", "positive"},
		{"top_p above 1", map[string]any{"top_p": 1.5}, "top_p", "from 0 to 1"},
		{"stop not strings", map[string]any{"stop": []any{1}}, "stop", "array of strings"},
		{"typo", map[string]any{"temprature": 0.5}, "temprature", "not an Ollama option"},
		{"seed", map[string]any{"seed": 1}, "seed", "run seed"},
	}
	for _, tt := range tests {
		key, msg := agent.CheckOptions(tt.opts)
		if key != tt.key || !strings.Contains(msg, tt.wantMsg) {
			t.Errorf("%s: CheckOptions = %q, %q; want %q, %q", tt.name, key, msg, tt.key, tt.wantMsg)
		}
	}
}
