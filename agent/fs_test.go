package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// toolCase is one call of a tool and what its observation must (not) say.
type toolCase struct {
	name    string
	args    map[string]any
	wantErr bool     // an error observation
	want    []string // parts the text must contain
	exact   string   // the whole text, when set
	notWant []string // parts the text must not contain (besides secrets and host paths)
}

// testRegistry returns a registry with the builtins of fx's workspace.
func testRegistry(t *testing.T, fx wsFixture, opts BuiltinOptions) *Registry {
	t.Helper()
	reg := NewRegistry()
	for _, tool := range Builtins(fx.ws, opts) {
		if err := reg.Add(tool); err != nil {
			t.Fatal(err)
		}
	}
	return reg
}

// callTool validates arguments as the loop does, then calls the tool.
func callTool(t *testing.T, reg *Registry, name string, args map[string]any) Result {
	t.Helper()
	if err := reg.Validate(name, args); err != nil {
		return Result{Text: err.Error(), IsError: true}
	}
	tool, _ := reg.Lookup(name)
	res, err := tool.Call(context.Background(), args)
	if err != nil {
		t.Fatalf("%s(%v): Go error %v; failures should be error observations", name, args, err)
	}
	return res
}

func runToolCases(t *testing.T, fx wsFixture, reg *Registry, tool string, tests []toolCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := callTool(t, reg, tool, tt.args)
			if res.IsError != tt.wantErr {
				t.Errorf("IsError = %v, want %v; text:\n%s", res.IsError, tt.wantErr, res.Text)
			}
			if tt.exact != "" && res.Text != tt.exact {
				t.Errorf("text:\n%s\nwant:\n%s", res.Text, tt.exact)
			}
			for _, w := range tt.want {
				if !strings.Contains(res.Text, w) {
					t.Errorf("text does not contain %q:\n%s", w, res.Text)
				}
			}
			hidden := append([]string{secret}, tt.notWant...)
			if !strings.Contains(fmt.Sprint(tt.args), fx.tmp) {
				hidden = append(hidden, fx.tmp) // the host path, unless the model wrote it
			}
			for _, w := range hidden {
				if strings.Contains(res.Text, w) {
					t.Errorf("text contains %q:\n%s", w, res.Text)
				}
			}
		})
	}
}

// writeFiles creates files under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// checkOutsideUntouched fails if anything outside the workspace changed.
func checkOutsideUntouched(t *testing.T, fx wsFixture) {
	t.Helper()
	for _, dir := range []string{"outside", "ws2", "tests"} {
		entries, err := os.ReadDir(filepath.Join(fx.tmp, dir))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		want := "secret.txt"
		if dir == "tests" {
			want = "hidden.txt"
		}
		if strings.Join(names, ",") != want {
			t.Errorf("%s now holds %v", dir, names)
		}
		data, err := os.ReadFile(filepath.Join(fx.tmp, dir, want))
		if err != nil || string(data) != secret+"\n" {
			t.Errorf("%s/%s changed: %q, %v", dir, want, data, err)
		}
	}
	if entries, _ := os.ReadDir(fx.tmp); len(entries) != 4 {
		t.Errorf("the temp folder now holds %d entries, want 4", len(entries))
	}
}

// escapes are paths every file tool must refuse.
func escapes(fx wsFixture) map[string]string {
	return map[string]string{
		"dotdot":             "../outside/secret.txt",
		"sibling tests":      "../tests/hidden.txt",
		"sibling prefix":     "../ws2/secret.txt",
		"absolute outside":   filepath.Join(fx.outside, "secret.txt"),
		"link in the middle": "out_link/secret.txt",
		"link as the final":  "out_file_link",
		"dangling link out":  "dangling_out",
		"link to /":          "root_link" + fx.outside + "/secret.txt",
	}
}

func TestReadFile(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	var long strings.Builder
	for i := 1; i <= 10000; i++ {
		fmt.Fprintf(&long, "line number %d of the long file\n", i)
	}
	writeFiles(t, fx.root, map[string]string{
		"ten.txt":      "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n",
		"nonl.txt":     "one\ntwo",
		"empty.txt":    "",
		"bin.dat":      "PK\x03\x04\x00\x00binary",
		"long.txt":     long.String(),
		"wide.txt":     strings.Repeat("é", 5000) + "\nshort\n",
		"crlf.txt":     "a\r\nb\r\n",
		"sub/deep.txt": "deep\n",
	})
	reg := testRegistry(t, fx, BuiltinOptions{})
	tests := []toolCase{
		{name: "whole file", args: map[string]any{"path": "a.txt"}, exact: "     1\talpha\n     2\tbeta\n"},
		{name: "no final newline", args: map[string]any{"path": "nonl.txt"}, exact: "     1\tone\n     2\ttwo\n"},
		{name: "absolute inside", args: map[string]any{"path": filepath.Join(fx.root, "sub/deep.txt")}, exact: "     1\tdeep\n"},
		{name: "through a link inside", args: map[string]any{"path": "in_link/b.txt"}, exact: "     1\tbravo\n"},
		{name: "range", args: map[string]any{"path": "ten.txt", "start_line": 3, "end_line": 4.0},
			exact: "     3\t3\n     4\t4\n[showed lines 3-4 of 10]\n"},
		{name: "from a line", args: map[string]any{"path": "ten.txt", "start_line": 9}, want: []string{"     9\t9\n    10\t10\n[showed lines 9-10 of 10]"}},
		{name: "end past the end", args: map[string]any{"path": "ten.txt", "start_line": 10, "end_line": 99}, want: []string{"    10\t10\n"}},
		{name: "crlf kept", args: map[string]any{"path": "crlf.txt"}, exact: "     1\ta\r\n     2\tb\r\n"},
		{name: "empty", args: map[string]any{"path": "empty.txt"}, exact: "(empty.txt is empty)"},
		{name: "output cap", args: map[string]any{"path": "long.txt"},
			want: []string{"     1\tline number 1 of", "[output cut at 64 KiB: showed lines 1-", "of 10000; read the rest with start_line="}},
		{name: "output cap from a line", args: map[string]any{"path": "long.txt", "start_line": 9990},
			want: []string{"  9990\tline number 9990", "[showed lines 9990-10000 of 10000]"}},
		{name: "long line cut", args: map[string]any{"path": "wide.txt"},
			want: []string{"[... line cut: ", "more bytes", "     2\tshort"}, notWant: []string{"\uFFFD"}},

		{name: "start past the end", args: map[string]any{"path": "ten.txt", "start_line": 11}, wantErr: true,
			want: []string{"start_line 11 is past the end of ten.txt, which has 10 lines"}},
		{name: "end before start", args: map[string]any{"path": "ten.txt", "start_line": 5, "end_line": 2}, wantErr: true, want: []string{"end_line 2 is before start_line 5"}},
		{name: "start zero", args: map[string]any{"path": "ten.txt", "start_line": 0}, wantErr: true, want: []string{"start_line"}},
		{name: "missing", args: map[string]any{"path": "nope.txt"}, wantErr: true, want: []string{"nope.txt: no such file"}},
		{name: "folder", args: map[string]any{"path": "sub"}, wantErr: true, want: []string{"sub is a folder", "list_dir"}},
		{name: "binary", args: map[string]any{"path": "bin.dat"}, wantErr: true, want: []string{"bin.dat is a binary file"}},
		{name: "no path", args: map[string]any{}, wantErr: true, want: []string{"path"}},
		{name: "unknown argument", args: map[string]any{"path": "a.txt", "limit": 3}, wantErr: true, want: []string{"limit"}},
	}
	for name, p := range escapes(fx) {
		tests = append(tests, toolCase{name: "escape " + name, args: map[string]any{"path": p}, wantErr: true, want: []string{"outside the workspace"}})
	}
	runToolCases(t, fx, reg, "read_file", tests)
}

func TestWriteFile(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	reg := testRegistry(t, fx, BuiltinOptions{})
	tests := []struct {
		toolCase
		file    string // the file that must then hold content
		content string
	}{
		{toolCase{name: "create", args: map[string]any{"path": "new.txt", "content": "hello\n"}, exact: "created new.txt: wrote 6 bytes"}, "new.txt", "hello\n"},
		{toolCase{name: "create with folders", args: map[string]any{"path": "x/y/z.txt", "content": "z"}, exact: "created x/y/z.txt: wrote 1 byte"}, "x/y/z.txt", "z"},
		{toolCase{name: "overwrite", args: map[string]any{"path": "a.txt", "content": ""}, exact: "overwrote a.txt: wrote 0 bytes"}, "a.txt", ""},
		{toolCase{name: "through a link inside", args: map[string]any{"path": "in_link/c.txt", "content": "c"}, want: []string{"created sub/c.txt"}}, "sub/c.txt", "c"},
		{toolCase{name: "dangling link inside", args: map[string]any{"path": "dangling_in", "content": "d"}, want: []string{"created sub/missing.txt"}}, "sub/missing.txt", "d"},
		{toolCase{name: "folder", args: map[string]any{"path": "sub", "content": "x"}, wantErr: true, want: []string{"sub is a folder"}}, "", ""},
		{toolCase{name: "root", args: map[string]any{"path": ".", "content": "x"}, wantErr: true, want: []string{"workspace folder itself"}}, "", ""},
		{toolCase{name: "below a file", args: map[string]any{"path": "a.txt/x", "content": "x"}, wantErr: true, want: []string{"cannot create folder a.txt"}}, "", ""},
		{toolCase{name: "no content", args: map[string]any{"path": "b.txt"}, wantErr: true, want: []string{"content"}}, "", ""},
	}
	for name, p := range escapes(fx) {
		tests = append(tests, struct {
			toolCase
			file    string
			content string
		}{toolCase{name: "escape " + name, args: map[string]any{"path": p, "content": "pwned"}, wantErr: true, want: []string{"outside the workspace"}}, "", ""})
	}
	for _, tt := range tests {
		runToolCases(t, fx, reg, "write_file", []toolCase{tt.toolCase})
		if tt.file != "" {
			data, err := os.ReadFile(filepath.Join(fx.root, tt.file))
			if err != nil || string(data) != tt.content {
				t.Errorf("%s: %s holds %q, %v; want %q", tt.name, tt.file, data, err, tt.content)
			}
		}
	}
	checkOutsideUntouched(t, fx)
}

func TestEditFile(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	writeFiles(t, fx.root, map[string]string{
		"code.go": "package main\n\nfunc f() {\n\treturn 1\n}\n\nfunc g() {\n\treturn 1\n}\n\nfunc h() {\n\treturn 1\n}\n",
		"one.txt": "hello world\n",
		"bin.dat": "\x00\x01hello",
	})
	reg := testRegistry(t, fx, BuiltinOptions{})
	tests := []struct {
		toolCase
		file, content string // what the file must hold after the call
	}{
		{toolCase{name: "one", args: map[string]any{"path": "one.txt", "old_string": "world", "new_string": "there"},
			exact: "replaced 1 occurrence in one.txt (line 1)"}, "one.txt", "hello there\n"},
		{toolCase{name: "not found", args: map[string]any{"path": "one.txt", "old_string": "world", "new_string": "x"},
			wantErr: true, want: []string{"old_string was not found in one.txt", "exactly"}, notWant: []string{"differs only in whitespace"}}, "one.txt", "hello there\n"},
		{toolCase{name: "whitespace differs", args: map[string]any{"path": "one.txt", "old_string": "hello  there", "new_string": "x"},
			wantErr: true, want: []string{"not found", "differs only in whitespace"}}, "one.txt", "hello there\n"},
		{toolCase{name: "many", args: map[string]any{"path": "code.go", "old_string": "\treturn 1\n", "new_string": "\treturn 2\n"},
			wantErr: true, want: []string{"occurs 3 times in code.go (lines 4, 8, 12)", "add surrounding lines", "replace_all"}}, "", ""},
		{toolCase{name: "many made unique", args: map[string]any{"path": "code.go", "old_string": "func g() {\n\treturn 1\n", "new_string": "func g() {\n\treturn 2\n"},
			exact: "replaced 1 occurrence in code.go (line 7)"}, "", ""},
		{toolCase{name: "replace all", args: map[string]any{"path": "code.go", "old_string": "return", "new_string": "yield", "replace_all": true},
			exact: "replaced 3 occurrences in code.go (lines 4, 8, 12)"},
			"code.go", "package main\n\nfunc f() {\n\tyield 1\n}\n\nfunc g() {\n\tyield 2\n}\n\nfunc h() {\n\tyield 1\n}\n"},
		{toolCase{name: "same strings", args: map[string]any{"path": "one.txt", "old_string": "a", "new_string": "a"}, wantErr: true, want: []string{"the same"}}, "", ""},
		{toolCase{name: "empty old", args: map[string]any{"path": "one.txt", "old_string": "", "new_string": "a"}, wantErr: true, want: []string{"old_string"}}, "", ""},
		{toolCase{name: "missing", args: map[string]any{"path": "nope.txt", "old_string": "a", "new_string": "b"}, wantErr: true, want: []string{"nope.txt: no such file"}}, "", ""},
		{toolCase{name: "folder", args: map[string]any{"path": "sub", "old_string": "a", "new_string": "b"}, wantErr: true, want: []string{"sub is a folder"}}, "", ""},
		{toolCase{name: "binary", args: map[string]any{"path": "bin.dat", "old_string": "hello", "new_string": "b"}, wantErr: true, want: []string{"binary"}}, "bin.dat", "\x00\x01hello"},
	}
	for name, p := range escapes(fx) {
		tests = append(tests, struct {
			toolCase
			file, content string
		}{toolCase{name: "escape " + name, args: map[string]any{"path": p, "old_string": secret, "new_string": "pwned"}, wantErr: true, want: []string{"outside the workspace"}}, "", ""})
	}
	for _, tt := range tests {
		runToolCases(t, fx, reg, "edit_file", []toolCase{tt.toolCase})
		if tt.file != "" {
			data, err := os.ReadFile(filepath.Join(fx.root, tt.file))
			if err != nil || string(data) != tt.content {
				t.Errorf("%s: %s holds %q, %v; want %q", tt.name, tt.file, data, err, tt.content)
			}
		}
	}
	checkOutsideUntouched(t, fx)
}

func TestListDir(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	many := map[string]string{}
	for i := range 15 {
		many[fmt.Sprintf("many/f%04d", i)] = ""
	}
	writeFiles(t, fx.root, many)
	if err := os.Mkdir(filepath.Join(fx.root, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A registry whose list_dir stops at 10 entries, to see the cap.
	reg := NewRegistry()
	for _, tool := range Builtins(fx.ws, BuiltinOptions{}) {
		if tool.Spec().Name == "list_dir" {
			tool = listDirTool{fileTool{fx.ws}, 10}
		}
		if err := reg.Add(tool); err != nil {
			t.Fatal(err)
		}
	}
	tests := []toolCase{
		{name: "sub", args: map[string]any{"path": "sub"},
			exact: "sub/b.txt  6 bytes\nsub/up -> . (symbolic link)\nsub/upup (symbolic link leading outside the workspace)\n"},
		{name: "root", args: map[string]any{},
			want: []string{".git/\n", "a.txt  11 bytes\n", "dangling_in -> sub/missing.txt (symbolic link)\n", "chain1 (symbolic link leading outside the workspace)\n",
				"in_link -> sub (symbolic link)\n", "loop1 (symbolic link that cannot be followed)\n", "[listing cut at 10 entries: list a sub-folder]"},
			notWant: []string{"b.txt", ".git/config", "without recursive", "many"}},
		{name: "recursive", args: map[string]any{"path": "sub", "recursive": true},
			exact: "sub/b.txt  6 bytes\nsub/up -> . (symbolic link)\nsub/upup (symbolic link leading outside the workspace)\n"},
		{name: "recursive root skips .git", args: map[string]any{"path": ".", "recursive": true},
			want: []string{".git/\n", "a.txt  11 bytes\n", "[listing cut at 10 entries: list a sub-folder, or without recursive]"}, notWant: []string{".git/config"}},
		{name: "cap", args: map[string]any{"path": "many"}, want: []string{"many/f0000  0 bytes\n", "many/f0009  0 bytes\n[listing cut at 10 entries"}, notWant: []string{"f0010"}},
		{name: "recursive, all", args: map[string]any{"path": "sub", "recursive": true}, notWant: []string{"[listing cut"}},
		{name: "empty", args: map[string]any{"path": "empty"}, exact: "(folder empty is empty)"},
		{name: "through a link inside", args: map[string]any{"path": "in_link"}, want: []string{"sub/b.txt"}},
		{name: "file", args: map[string]any{"path": "a.txt"}, wantErr: true, want: []string{"a.txt is a file", "read_file"}},
		{name: "missing", args: map[string]any{"path": "nope"}, wantErr: true, want: []string{"nope: no such file"}},
		{name: "escape dotdot", args: map[string]any{"path": ".."}, wantErr: true, want: []string{"outside the workspace"}},
		{name: "escape sibling", args: map[string]any{"path": "../tests"}, wantErr: true, want: []string{"outside the workspace"}},
		{name: "escape link", args: map[string]any{"path": "out_link"}, wantErr: true, want: []string{"outside the workspace"}},
		{name: "escape link to /", args: map[string]any{"path": "root_link", "recursive": true}, wantErr: true, want: []string{"outside the workspace"}},
		{name: "escape absolute", args: map[string]any{"path": "/"}, wantErr: true, want: []string{"outside the workspace"}},
	}
	runToolCases(t, fx, reg, "list_dir", tests)
}

func TestSearch(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	var many strings.Builder
	for range maxSearchMatches + 10 {
		many.WriteString("needle\n")
	}
	writeFiles(t, fx.root, map[string]string{
		"src/main.go":    "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n",
		"src/util.go":    "package main\n\nfunc helper() int { return 1 }\n",
		"src/notes.md":   "func in prose\n",
		"bin/tool":       "\x00func binary",
		"many/hay.txt":   many.String(),
		"wide/w.txt":     "func " + strings.Repeat("x", 2000) + "\n",
		".git/HEAD":      "func in git\n",
		"sub/secret.txt": "",
	})
	if err := os.Symlink("../outside/secret.txt", filepath.Join(fx.root, "src", "leak.go")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("main.go", filepath.Join(fx.root, "src", "alias.go")); err != nil {
		t.Fatal(err)
	}
	reg := testRegistry(t, fx, BuiltinOptions{})
	tests := []toolCase{
		{name: "glob", args: map[string]any{"pattern": `func \w+\(`, "glob": "*.go"},
			exact: "src/alias.go:3: func main() {\nsrc/main.go:3: func main() {\nsrc/util.go:3: func helper() int { return 1 }\n"},
		{name: "path", args: map[string]any{"pattern": `^func`, "path": "src"},
			want: []string{"src/main.go:3: func main() {\n", "src/notes.md:1: func in prose\n"}, notWant: []string{"binary", "in git", "wide/"}},
		{name: "glob with a folder", args: map[string]any{"pattern": "func", "glob": "src/*.md"}, exact: "src/notes.md:1: func in prose\n"},
		{name: "one file", args: map[string]any{"pattern": "(?i)PRINTLN", "path": "src/main.go"}, exact: "src/main.go:4: \tprintln(\"hi\")\n"},
		{name: "long line cut", args: map[string]any{"pattern": "func x", "path": "wide"}, want: []string{"wide/w.txt:1: func xxx", "x [...]\n"}},
		{name: "cap", args: map[string]any{"pattern": "needle"},
			want: []string{"many/hay.txt:200: needle\n[stopped after 200 matches; there are more: narrow the pattern, path or glob]"}, notWant: []string{"hay.txt:201"}},
		{name: "no matches", args: map[string]any{"pattern": "zebra"}, want: []string{`no matches for "zebra" in .`}},
		{name: "secret not followed", args: map[string]any{"pattern": "SECRET"}, want: []string{"no matches"}},
		{name: "invalid regex", args: map[string]any{"pattern": "func("}, wantErr: true, want: []string{`invalid regular expression "func("`, "missing closing )"}},
		{name: "look-around", args: map[string]any{"pattern": "(?=x)"}, wantErr: true, want: []string{"invalid regular expression", "RE2"}},
		{name: "invalid glob", args: map[string]any{"pattern": "x", "glob": "["}, wantErr: true, want: []string{"invalid glob"}},
		{name: "missing path", args: map[string]any{"pattern": "x", "path": "nope"}, wantErr: true, want: []string{"nope: no such file"}},
		{name: "escape sibling", args: map[string]any{"pattern": "SECRET", "path": "../outside"}, wantErr: true, want: []string{"outside the workspace"}},
		{name: "escape link", args: map[string]any{"pattern": "SECRET", "path": "out_link"}, wantErr: true, want: []string{"outside the workspace"}},
		{name: "escape absolute", args: map[string]any{"pattern": "SECRET", "path": fx.tmp}, wantErr: true, want: []string{"outside the workspace"}},
	}
	runToolCases(t, fx, reg, "search", tests)
}

// TestReadFileNamedPipe: a named pipe would block a reader forever.
func TestReadFileNamedPipe(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	if err := mkfifo(filepath.Join(fx.root, "fifo")); err != nil {
		t.Skip("mkfifo:", err)
	}
	reg := testRegistry(t, fx, BuiltinOptions{})
	for _, tc := range []struct{ tool string }{{"read_file"}, {"edit_file"}, {"write_file"}} {
		args := map[string]any{"path": "fifo", "old_string": "a", "new_string": "b"}
		switch tc.tool {
		case "read_file":
			args = map[string]any{"path": "fifo"}
		case "write_file":
			args = map[string]any{"path": "fifo", "content": "x"}
		}
		res := callTool(t, reg, tc.tool, args)
		if !res.IsError || !strings.Contains(res.Text, "not a regular file") {
			t.Errorf("%s on a named pipe: %+v", tc.tool, res)
		}
	}
	res := callTool(t, reg, "search", map[string]any{"pattern": "x"})
	if res.IsError {
		t.Errorf("search with a named pipe around: %+v", res)
	}
}

func mkfifo(path string) error { return syscall.Mkfifo(path, 0o644) }
