package tasks_test

import (
	"strings"
	"testing"

	"github.com/benchhq/bench/tasks"
)

// An unknown or mistyped field of a nested table is named with its index
// and with the keys of its own table, in the words of the file.
func TestFieldErrorsOfNestedTables(t *testing.T) {
	const head = "format = 1\ninstruction = \"x\"\n[tests]\ncommand = \"true\"\n"
	servers := "[[servers]]\nname = \"a\"\ncommand = \"b\"\n[[servers]]\nname = \"c\"\ncommand = \"d\"\n"
	tests := []struct {
		name, doc   string
		field, want string
		not         string
	}{
		{"unknown key of the second server", head + servers + "clases = { x = \"read\" }\n",
			"servers[1].clases", "expected one of: name, command, args", "format"},
		{"unknown key of tests", head + "comand = \"y\"\n", "tests.comand", "expected one of: command, timeout", "instruction"},
		{"tags as a string", "format = 1\ninstruction = \"x\"\ntags = \"python\"\n[tests]\ncommand = \"true\"\n",
			"tags", `expected an array (such as ["a", "b"]), got a string`, "destination"},
		{"classes as a number", head + servers + "classes = 3\n", "servers[1].classes", "expected a table", "destination"},
		{"max_turns as a string", "format = 1\ninstruction = \"x\"\n[limits]\nmax_turns = \"ten\"\n[tests]\ncommand = \"true\"\n",
			"limits.max_turns", "expected an integer, got a string", "last key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tasks.Parse("task.toml", []byte(tt.doc))
			if err == nil {
				t.Fatal("accepted")
			}
			msg := err.Error()
			if !strings.Contains(msg, "field "+tt.field+":") || !strings.Contains(msg, tt.want) || strings.Contains(msg, tt.not) {
				t.Errorf("error %q: want field %s, %q, and not %q", msg, tt.field, tt.want, tt.not)
			}
		})
	}
	_, err := tasks.ParseServer(`name = "x", command = "y", colour = "red"`)
	if err == nil || !strings.Contains(err.Error(), "field colour: unknown field (expected one of: name, command") {
		t.Errorf("--server colour: %v", err)
	}
	_, err = tasks.ParseServer(`name = "x", command = "y", env = 3`)
	if err == nil || !strings.Contains(err.Error(), "field env: expected a table") {
		t.Errorf("--server env = 3: %v", err)
	}
}

// A syntax error is told as one, at its line, and names no field: the
// decoder's "last key" is the last key it read, not the mistake's. A value
// that does not parse still names its field.
func TestSyntaxErrorsNameTheLineNotAField(t *testing.T) {
	const head = "format = 1\ninstruction = \"x\"\n[tests]\ncommand = \"true\"\n"
	tests := []struct {
		name, doc string
		want      string
	}{
		{"broken table header", head + "[limits\nmax_turns = 3\n", "task.toml: line 5: syntax error: expected '.' or ']' to end table name"},
		{"two equals signs", head + "timeout = = \"5m\"\n", "task.toml: line 5: syntax error: expected value"},
		{"unterminated string", "format = 1\ninstruction = \"x\n[tests]\ncommand = \"true\"\n", "task.toml: line 2: syntax error: strings cannot contain newlines"},
		{"a duration that does not parse", head + "timeout = \"soon\"\n", "task.toml: field tests.timeout: line 5: expected a duration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tasks.Parse("task.toml", []byte(tt.doc))
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("error %v, want it to begin %q", err, tt.want)
			}
		})
	}
}
