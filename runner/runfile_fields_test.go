package runner_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchhq/bench/runner"
)

func TestRunFileFieldErrorsOfNestedTables(t *testing.T) {
	tests := []struct {
		name, doc   string
		field, want string
		not         string
	}{
		{"arm key", "model = \"m\"\n[[arms]]\nname = \"a\"\n[[arms]]\nnam = \"b\"\n",
			"arms[1].nam", "expected one of: name, tools, [[servers]], profile, approver", "attempts"},
		{"server of an arm", "model = \"m\"\n[[arms]]\nname = \"a\"\n[[arms.servers]]\nname = \"s\"\ncommand = \"x\"\ncolour = 1\n",
			"arms[0].servers[0].colour", "expected one of: name, command", "model"},
		{"limits key", "model = \"m\"\n[limits]\nmax_turn = 3\n", "limits.max_turn", "expected one of: max_turns, max_tokens, wall_time", "model"},
		{"top level", "modle = \"m\"\n", "modle", "expected one of: name, model", ""},
		{"tasks as a string", "model = \"m\"\ntasks = \"recipe\"\n", "tasks", "expected an array", "destination"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "run.toml")
			os.WriteFile(p, []byte(tt.doc), 0o644)
			_, err := runner.LoadRunFile(p)
			if err == nil {
				t.Fatal("accepted")
			}
			msg := err.Error()
			if !strings.Contains(msg, "field "+tt.field+":") || !strings.Contains(msg, tt.want) || (tt.not != "" && strings.Contains(msg, tt.not)) {
				t.Errorf("error %q: want field %s, %q, and not %q", msg, tt.field, tt.want, tt.not)
			}
		})
	}
	// Anything goes under [options] and [profiles.X] as far as keys go.
	p := filepath.Join(t.TempDir(), "run.toml")
	os.WriteFile(p, []byte("model = \"m\"\n[options]\ntop_k = 20\n[profiles.mine]\nextends = \"standard\"\n"), 0o644)
	if _, err := runner.LoadRunFile(p); err != nil {
		t.Errorf("free tables: %v", err)
	}
}
