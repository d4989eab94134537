package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// One set of rules for a value, wherever it is given: a flag, a run file,
// a task.toml. Each refused value here was accepted by the command line or
// the run file (and a run started) while task.toml refused it.
func TestValuesHaveOneSetOfRules(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "bench.db")
	runFile := func(body string) string {
		p := filepath.Join(t.TempDir(), "run.toml")
		if err := os.WriteFile(p, []byte("model = \"m\"\n"+body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	task := func(limits string) string {
		d := filepath.Join(t.TempDir(), "t")
		os.MkdirAll(filepath.Join(d, "workspace"), 0o755)
		os.WriteFile(filepath.Join(d, "task.toml"), []byte("format = 1\ninstruction = \"x\"\n[limits]\n"+limits+"\n[tests]\ncommand = \"true\"\n"), 0o644)
		return d
	}
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"flag max-turns", []string{"--max-turns", "-1"}, []string{"--max-turns", "got -1"}},
		{"flag max-tokens", []string{"--max-tokens", "-1"}, []string{"--max-tokens", "got -1"}},
		{"flag wall-time negative", []string{"--wall-time", "-5s"}, []string{"--wall-time", "got -5s"}},
		{"flag max-tries", []string{"--max-tries", "0"}, []string{"--max-tries", "at least 1"}},
		{"flag num-ctx", []string{"--num-ctx", "0"}, []string{"--num-ctx", "positive"}},
		{"flag wall-time no unit", []string{"--wall-time", "10"}, []string{"--wall-time", `expected a duration such as "90s"`}},
		{"flag temperature word", []string{"--temperature", "hot"}, []string{"--temperature", `expected a number, got "hot"`}},
		{"flag temperature negative", []string{"--temperature", "-1"}, []string{"--temperature", "0 or more"}},
		{"flag attempts word", []string{"--attempts", "many"}, []string{"--attempts", "expected an integer"}},
		{"run file limits", []string{"--config", runFile("[limits]\nmax_turns = -3\n")}, []string{"run.toml", "limits.max_turns", "got -3"}},
		{"run file wall_time", []string{"--config", runFile("[limits]\nwall_time = \"10\"\n")}, []string{"limits.wall_time", `expected a duration such as "90s"`}},
		{"run file temperature", []string{"--config", runFile("[options]\ntemperature = \"hot\"\n")}, []string{"options.temperature", "expected a number"}},
		{"run file unknown option", []string{"--config", runFile("[options]\ntemprature = 0.5\n")}, []string{"options.temprature", "not an Ollama option"}},
		{"run file max_tries", []string{"--config", runFile("max_tries = 0\n")}, []string{"max_tries", "at least 1"}},
		{"run file attempts", []string{"--config", runFile("attempts = -2\n")}, []string{"attempts", "at least 1"}},
		{"run file request_timeout", []string{"--config", runFile("request_timeout = \"0s\"\n")}, []string{"request_timeout", "positive duration"}},
		{"task.toml limits", []string{"--task", task("max_turns = -3")}, []string{"task.toml", "limits.max_turns", "got -3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"run", "--model", "m", "--db", db}, tt.args...)
			if !strings.Contains(strings.Join(tt.args, " "), "--task") {
				args = append(args, "--task", recipeTask)
			}
			code, _, stderr := bench(t, args...)
			if code != 2 {
				t.Errorf("exit %d, want 2 (stderr %q)", code, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q does not say %q", stderr, w)
				}
			}
			if strings.Contains(stderr, "parse error") {
				t.Errorf("stderr %q says only 'parse error'", stderr)
			}
		})
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Errorf("refused values left %s behind", db)
	}
}
