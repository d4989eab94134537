package agent_test

import (
	"testing"

	"github.com/benchhq/bench/agent"
)

// --host takes what OLLAMA_HOST takes: 127.0.0.1:1 was refused while
// OLLAMA_HOST=127.0.0.1:47002 worked.
func TestParseHost(t *testing.T) {
	tests := []struct{ in, want string }{
		{"127.0.0.1:1", "http://127.0.0.1:1"},
		{"127.0.0.1:47002", "http://127.0.0.1:47002"},
		{"localhost", "http://localhost:11434"},
		{"0.0.0.0", "http://0.0.0.0:11434"},
		{"http://127.0.0.1:11434", "http://127.0.0.1:11434"},
		{"http://example.com", "http://example.com:80"},
		{"https://example.com/ollama", "https://example.com:443/ollama"},
		{"[::1]:11434", "http://[::1]:11434"},
		{":11434", "http://:11434"},
	}
	for _, tt := range tests {
		u, err := agent.ParseHost(tt.in)
		if err != nil || u.String() != tt.want {
			t.Errorf("ParseHost(%q) = %v, %v; want %s", tt.in, u, err, tt.want)
		}
	}
	for _, bad := range []string{"127.0.0.1:port", "ftp://x", "127.0.0.1:99999", "a b"} {
		if u, err := agent.ParseHost(bad); err == nil {
			t.Errorf("ParseHost(%q) = %v, want an error", bad, u)
		}
	}
}
