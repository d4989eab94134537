package tasks_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/benchhq/bench/tasks"
)

// FuzzParse feeds arbitrary bytes to the task-file parser. Whatever the
// input, Parse must not panic, and it either returns a task that satisfies
// the format's invariants or a *FieldError that names the file.
func FuzzParse(f *testing.F) {
	f.Add([]byte(good))
	f.Add([]byte("format = 1\ninstruction = \"x\"\n[tests]\ncommand = \"true\"\n[[servers]]\nname = \"s\"\ncommand = \"{bench}\"\nargs = [\"mcp\"]\n[servers.classes]\nlist = \"read\"\n"))
	f.Add([]byte("format = 1\ninstruction = \"x\"\n[limits]\nwall_time = \"-5s\"\n[tests]\ncommand = \"true\"\n"))
	f.Add([]byte("format = 1\ninstruction = '''\nmulti\n'''\n[tests]\ncommand = \"true\"\ntimeout = \"1h2m3s\"\n"))
	f.Add([]byte("[tests\ncommand = "))
	f.Add([]byte("format = 1\nformat = 2\n"))
	f.Add([]byte("\x00\xff\xfe"))
	f.Fuzz(func(t *testing.T, data []byte) {
		task, err := tasks.Parse("fuzz/task.toml", data)
		if err != nil {
			var fe *tasks.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("error %T %v is not a *tasks.FieldError", err, err)
			}
			if !strings.HasPrefix(err.Error(), "fuzz/task.toml") {
				t.Fatalf("error %q does not start with the file name", err)
			}
			return
		}
		if task.Format != tasks.FormatVersion {
			t.Fatalf("accepted format %d", task.Format)
		}
		if strings.TrimSpace(task.Instruction) == "" || strings.TrimSpace(task.Tests.Command) == "" {
			t.Fatalf("accepted a task without instruction or test command: %+v", task)
		}
		if task.Limits.MaxTurns < 0 || task.Limits.MaxTokens < 0 || task.Limits.WallTime.Duration < 0 || task.Tests.Timeout.Duration < 0 {
			t.Fatalf("accepted negative limits: %+v", task.Limits)
		}
		if task.Limits.MaxTurnsOr() <= 0 || task.Limits.WallTimeOr() <= 0 || task.Tests.TimeoutOr() <= 0 {
			t.Fatalf("defaults not applied: %+v", task.Limits)
		}
		names := map[string]bool{}
		for _, s := range task.Servers {
			if s.Name == "" || strings.Contains(s.Name, "__") || names[s.Name] || (s.Command == "") == (s.URL == "") {
				t.Fatalf("accepted a bad server declaration: %+v", s)
			}
			names[s.Name] = true
		}
	})
}
