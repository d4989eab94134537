package agent

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestBuiltinSpecs(t *testing.T) {
	fx := newFixture(t)
	tools := Builtins(fx.ws, BuiltinOptions{})
	want := []struct {
		name     string
		class    Class
		required []string
	}{
		{"read_file", ClassRead, []string{"path"}},
		{"write_file", ClassWrite, []string{"path", "content"}},
		{"edit_file", ClassWrite, []string{"path", "old_string", "new_string"}},
		{"list_dir", ClassRead, nil},
		{"search", ClassRead, []string{"pattern"}},
		{"run_command", ClassExec, []string{"command"}},
	}
	if len(tools) != len(want) {
		t.Fatalf("Builtins gave %d tools, want %d", len(tools), len(want))
	}
	reg := NewRegistry()
	for i, w := range want {
		s := tools[i].Spec()
		if s.Name != w.name || s.Class != w.class || s.Origin != OriginBuiltin {
			t.Errorf("tool %d: %s class %q origin %q, want %s class %q origin %q", i, s.Name, s.Class, s.Origin, w.name, w.class, OriginBuiltin)
		}
		if strings.Join(s.InputSchema.Required, ",") != strings.Join(w.required, ",") {
			t.Errorf("%s: required %v, want %v", s.Name, s.InputSchema.Required, w.required)
		}
		if s.Description == "" {
			t.Errorf("%s: no description", s.Name)
		}
		for name, p := range s.InputSchema.Properties {
			if p.Description == "" {
				t.Errorf("%s: property %s has no description", s.Name, name)
			}
		}
		b, err := json.Marshal(s.InputSchema)
		if err != nil || !strings.Contains(string(b), `"additionalProperties":false`) {
			t.Errorf("%s: schema %s (%v) does not forbid other properties", s.Name, b, err)
		}
		if _, err := OllamaTool(s); err != nil {
			t.Errorf("%s: OllamaTool: %v", s.Name, err)
		}
		if err := reg.Add(tools[i]); err != nil {
			t.Errorf("Add(%s): %v", s.Name, err)
		}
	}
	for _, tc := range []struct {
		tool    string
		args    map[string]any
		wantErr string
	}{
		{"read_file", map[string]any{"path": "a.txt", "start_line": 2, "end_line": 3}, ""},
		{"read_file", map[string]any{"path": "a.txt", "start_line": 1.5}, "integer"},
		{"read_file", map[string]any{"path": ""}, "path"},
		{"read_file", map[string]any{"path": "a.txt", "extra": true}, "extra"},
		{"write_file", map[string]any{"path": "a.txt"}, "content"},
		{"edit_file", map[string]any{"path": "a.txt", "old_string": "a", "new_string": "b", "replace_all": "yes"}, "replace_all"},
		{"list_dir", map[string]any{}, ""},
		{"search", map[string]any{"pattern": "x", "glob": 3}, "glob"},
		{"run_command", map[string]any{"command": "true", "timeout_seconds": 600}, ""},
		{"run_command", map[string]any{"command": "true", "timeout_seconds": 601}, "timeout_seconds"},
	} {
		err := reg.Validate(tc.tool, tc.args)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("Validate(%s, %v): %v", tc.tool, tc.args, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("Validate(%s, %v) = %v, want an error about %s", tc.tool, tc.args, err, tc.wantErr)
		}
	}
}

func TestBuiltinOptionsDefaults(t *testing.T) {
	fx := newFixture(t)
	tests := []struct {
		name                string
		opts                BuiltinOptions
		timeout, maxTimeout time.Duration
		outputCap           int
		wantInDescription   string
	}{
		{"zero", BuiltinOptions{}, time.Minute, 10 * time.Minute, 16 << 10, "cut to 16 KiB"},
		{"set", BuiltinOptions{Timeout: 5 * time.Second, MaxTimeout: 30 * time.Second, OutputCap: 1000}, 5 * time.Second, 30 * time.Second, 1000, "(default 5, at most 30)"},
		{"max below default", BuiltinOptions{Timeout: 90 * time.Second, MaxTimeout: time.Second}, 90 * time.Second, 90 * time.Second, 16 << 10, "at most 90"},
		{"sub-second", BuiltinOptions{Timeout: time.Millisecond}, time.Second, 10 * time.Minute, 16 << 10, "default 1,"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := Builtins(fx.ws, tt.opts)[5].(runCommandTool)
			if rc.timeout != tt.timeout || rc.maxTimeout != tt.maxTimeout || rc.outputCap != tt.outputCap {
				t.Errorf("timeout %v, max %v, cap %d; want %v, %v, %d", rc.timeout, rc.maxTimeout, rc.outputCap, tt.timeout, tt.maxTimeout, tt.outputCap)
			}
			if d := rc.Spec().Description; !strings.Contains(d, tt.wantInDescription) {
				t.Errorf("description %q does not say %q", d, tt.wantInDescription)
			}
		})
	}
}
