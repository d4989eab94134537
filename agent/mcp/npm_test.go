package mcp

// Tests against servers published on npm, installed by the test set-up:
//
//	npm install --prefix .ci/npm @modelcontextprotocol/server-filesystem@2026.8.31 \
//	    @modelcontextprotocol/server-everything@2026.8.31 @modelcontextprotocol/server-memory@2026.8.31
//
// They are found in $BENCH_NPM_DIR/node_modules/.bin (default: .ci/npm at the
// repository root). When they are missing the tests skip, unless
// BENCH_REQUIRE_NPM=1, which makes them fail.

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchhq/bench/agent"
	"github.com/benchhq/bench/tasks"
)

// npmBin returns the path of an installed npm server's executable.
func npmBin(t *testing.T, name string) string {
	t.Helper()
	dir := os.Getenv("BENCH_NPM_DIR")
	if dir == "" {
		dir = filepath.Join("..", "..", ".ci", "npm")
	}
	bin, err := filepath.Abs(filepath.Join(dir, "node_modules", ".bin", name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		msg := "npm server " + name + " is not installed (" + bin + "); install it with: npm install --prefix .ci/npm " +
			"@modelcontextprotocol/server-filesystem@2026.8.31 @modelcontextprotocol/server-everything@2026.8.31 @modelcontextprotocol/server-memory@2026.8.31"
		if os.Getenv("BENCH_REQUIRE_NPM") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return bin
}

// checkAllOffered checks that every tool but those in skips (tool: part of
// the reason) is offered, shows to the model and goes into a registry.
func checkAllOffered(t *testing.T, c *Conn, skips map[string]string) *agent.Registry {
	t.Helper()
	for _, s := range c.Skipped() {
		if want, ok := skips[s.Tool]; !ok || !strings.Contains(s.Reason, want) {
			t.Errorf("skipped %s: %s", s.Tool, s.Reason)
		}
		delete(skips, s.Tool)
	}
	for tool := range skips {
		t.Errorf("%s offered, want it skipped", tool)
	}
	reg := agent.NewRegistry()
	for _, tool := range c.Tools() {
		if _, err := agent.OllamaTool(tool.Spec()); err != nil {
			t.Errorf("%s: %v", tool.Spec().Name, err)
		}
		if err := reg.Add(tool); err != nil {
			t.Errorf("%v", err)
		}
	}
	return reg
}

func TestNPMFilesystem(t *testing.T) {
	bin := npmBin(t, "mcp-server-filesystem")
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "hello.txt"), []byte("hello from the workspace\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := tasks.Server{
		Name: "fs", Command: bin, Args: []string{"{workspace}"},
		Classes:      map[string]string{"read_text_file": "read", "list_directory": "read", "write_file": "write"},
		DefaultClass: "",
	}
	c := connect(t, srv, Vars{Workspace: ws}, Options{})
	info := c.Info()
	if info.ProtocolVersion == "" || info.ServerName == "" {
		t.Errorf("Info = %+v", info)
	}
	t.Logf("server-filesystem: %+v", info)
	reg := checkAllOffered(t, c, nil)
	if len(c.Tools()) < 10 {
		t.Errorf("only %d tools", len(c.Tools()))
	}
	for _, tool := range c.Tools() {
		if tool.Spec().Name == "fs__move_file" && tool.Spec().Class != "" {
			t.Errorf("move_file got class %q without one given", tool.Spec().Class)
		}
	}
	if err := reg.Validate("fs__read_text_file", map[string]any{}); err == nil || !strings.Contains(err.Error(), "path") {
		t.Errorf("Validate without path: %v", err)
	}
	if err := reg.Validate("fs__read_text_file", map[string]any{"path": "x", "head": "ten"}); err == nil {
		t.Errorf("Validate with a string head: no error")
	}

	res := call(t, c, "fs__read_text_file", map[string]any{"path": filepath.Join(ws, "hello.txt")})
	if res.IsError || !strings.Contains(res.Text, "hello from the workspace") {
		t.Errorf("read_text_file: %+v", res)
	}
	res = call(t, c, "fs__write_file", map[string]any{"path": filepath.Join(ws, "out.txt"), "content": "written"})
	if res.IsError {
		t.Errorf("write_file: %+v", res)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "out.txt")); err != nil || string(b) != "written" {
		t.Errorf("out.txt = %q, %v", b, err)
	}
	res = call(t, c, "fs__read_text_file", map[string]any{"path": "/etc/hostname"})
	if !res.IsError || !strings.Contains(strings.ToLower(res.Text), "denied") {
		t.Errorf("read outside the workspace: %+v", res)
	}
	res = call(t, c, "fs__list_directory", map[string]any{"path": ws})
	if res.IsError || !strings.Contains(res.Text, "hello.txt") || !strings.Contains(res.Text, "out.txt") {
		t.Errorf("list_directory: %+v", res)
	}
}

func TestNPMEverything(t *testing.T) {
	bin := npmBin(t, "mcp-server-everything")
	t.Setenv("BENCH_TEST_SECRET", "hunter2")
	c := connect(t, tasks.Server{Name: "every", Command: bin, DefaultClass: "read"}, Vars{Workspace: t.TempDir()}, Options{})
	t.Logf("server-everything: %s %s, protocol %s", c.Info().ServerName, c.Info().ServerVersion, c.Info().ProtocolVersion)
	// A tool that must be called as a task would fail every call: not offered.
	reg := checkAllOffered(t, c, map[string]string{"simulate-research-query": `execution.taskSupport is "required"`})
	if err := reg.Validate("every__get-sum", map[string]any{"a": 1, "b": "two"}); err == nil {
		t.Error("get-sum with a string: no error")
	}

	tests := []struct {
		tool string
		args map[string]any
		want []string
	}{
		{"every__echo", map[string]any{"message": "hi"}, []string{"hi"}},
		{"every__get-sum", map[string]any{"a": 2, "b": 3}, []string{"5"}},
		{"every__get-tiny-image", nil, []string{"[image/png, "}},
		{"every__get-resource-links", map[string]any{"count": 2}, []string{"[resource link "}},
		{"every__get-resource-reference", map[string]any{"resourceType": "Blob", "resourceId": 2}, []string{"[resource ", "bytes]"}},
		{"every__get-resource-reference", map[string]any{"resourceType": "Text", "resourceId": 1}, []string{"[resource "}},
		{"every__get-structured-content", map[string]any{"location": "Chicago"}, []string{"temperature"}},
		{"every__get-env", nil, []string{"PATH"}},
	}
	for _, tt := range tests {
		res := call(t, c, tt.tool, tt.args)
		if res.IsError {
			t.Errorf("%s: error %q", tt.tool, res.Text)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(res.Text, w) {
				t.Errorf("%s: %q lacks %q", tt.tool, clip(res.Text, 500), w)
			}
		}
		if tt.tool == "every__get-env" && strings.Contains(res.Text, "hunter2") {
			t.Errorf("the harness's environment leaked to the server: %s", clip(res.Text, 500))
		}
	}
}

// server-everything's resources: bench offers a reader for them, which
// follows a resource link a tool returned, decodes a blob of a text type
// and lists the resources; a long tool reports progress, stored with the
// call.
func TestNPMEverythingResourcesAndProgress(t *testing.T) {
	bin := npmBin(t, "mcp-server-everything")
	c := connect(t, tasks.Server{Name: "every", Command: bin, DefaultClass: "read"}, Vars{Workspace: t.TempDir()}, Options{})
	reader := toolNamed(t, c, "every__read_resource")
	if s := reader.Spec(); s.Class != agent.ClassRead || s.Origin != "mcp:every" {
		t.Errorf("reader spec %+v", s)
	}
	res := call(t, c, "every__get-resource-links", map[string]any{"count": 1})
	i := strings.Index(res.Text, "[resource link ")
	if i < 0 {
		t.Fatalf("no resource link in %q", clip(res.Text, 500))
	}
	uri := strings.Fields(res.Text[i+len("[resource link "):])[0]
	read := call(t, c, "every__read_resource", map[string]any{"uri": uri})
	if read.IsError || len(read.Text) == 0 || strings.Contains(read.Text, "binary content") && strings.Contains(uri, "text") {
		t.Errorf("read %s: %+v", uri, clipResult(read))
	}
	list := call(t, c, "every__read_resource", nil)
	if list.IsError || !strings.Contains(list.Text, "://") {
		t.Errorf("list: %+v", clipResult(list))
	}
	missing := call(t, c, "every__read_resource", map[string]any{"uri": "demo://resource/static/document/nope.md"})
	if !missing.IsError {
		t.Errorf("a resource that does not exist: %+v", clipResult(missing))
	}
	d := c.Describe(context.Background())
	if d.Capabilities == nil || d.Capabilities.Resources == nil || len(d.Resources) == 0 || len(d.Templates) == 0 || len(d.Prompts) == 0 || len(d.Errors) > 0 {
		t.Errorf("Describe: %d resources, %d templates, %d prompts, errors %v", len(d.Resources), len(d.Templates), len(d.Prompts), d.Errors)
	}
	long := call(t, c, "every__trigger-long-running-operation", map[string]any{"duration": 1, "steps": 3})
	if long.IsError || !strings.Contains(string(long.Details), `"progress"`) {
		t.Errorf("long-running operation: %+v (%s)", clipResult(long), long.Details)
	}
}

func TestNPMMemory(t *testing.T) {
	bin := npmBin(t, "mcp-server-memory")
	dir := t.TempDir()
	srv := tasks.Server{Name: "mem", Command: bin, DefaultClass: "write", Env: map[string]string{"MEMORY_FILE_PATH": "{workspace}/memory.jsonl"}}
	c := connect(t, srv, Vars{Workspace: dir}, Options{})
	checkAllOffered(t, c, nil)
	res := call(t, c, "mem__create_entities", map[string]any{"entities": []any{
		map[string]any{"name": "Ada", "entityType": "person", "observations": []any{"wrote the first program"}},
	}})
	if res.IsError {
		t.Fatalf("create_entities: %+v", res)
	}
	res = call(t, c, "mem__search_nodes", map[string]any{"query": "Ada"})
	if res.IsError || !strings.Contains(res.Text, "wrote the first program") {
		t.Errorf("search_nodes: %+v", res)
	}
	c.Close()
	b, err := os.ReadFile(filepath.Join(dir, "memory.jsonl"))
	if err != nil || !strings.Contains(string(b), "Ada") {
		t.Errorf("memory file (env placeholder expanded?): %q, %v", b, err)
	}
	var line map[string]any
	if err := json.Unmarshal([]byte(strings.SplitN(string(b), "\n", 2)[0]), &line); err != nil {
		t.Errorf("memory file: %v", err)
	}
}
