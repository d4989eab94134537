package agent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/benchhq/bench/internal/procio"
)

// Limits of the file tools. They keep one observation small enough for a
// local model's context.
const (
	// fileOutputCap bounds the text read_file and search return.
	fileOutputCap = 64 << 10
	// maxLineBytes bounds one line as read_file shows it.
	maxLineBytes = 4096
	// maxSearchLineBytes bounds one matching line as search shows it.
	maxSearchLineBytes = 500
	// maxEditBytes bounds the size of a file edit_file loads, and of the
	// file it would make: the result is refused before it is built.
	maxEditBytes = 8 << 20
	// maxSearchFileBytes: larger files are skipped by search.
	maxSearchFileBytes = 8 << 20
	// maxListEntries bounds the entries list_dir returns.
	maxListEntries = 1000
	// maxSearchMatches bounds the matches search returns.
	maxSearchMatches = 200
	// sniffBytes is how much of a file is checked for NUL bytes to tell
	// binary files from text, as git does.
	sniffBytes = 8000
)

// fileTool holds what every file tool shares.
type fileTool struct {
	ws *Workspace
}

// target resolves a path argument and opens the workspace as an os.Root, so
// that the operation itself cannot leave the workspace either, even if a
// link appeared after the check. It returns the path relative to the root
// (in the host's form) or an error observation.
func (t fileTool) target(p string) (root *os.Root, rel string, fail *Result) {
	real, err := t.ws.Resolve(p)
	if err != nil {
		return nil, "", errResult("%v", err)
	}
	rel, err = filepath.Rel(t.ws.Root(), real)
	if err != nil {
		return nil, "", errResult("path %s: %v", p, err)
	}
	root, err = os.OpenRoot(t.ws.Root())
	if err != nil {
		return nil, "", errResult("the workspace cannot be opened: %v", errors.Unwrap(err))
	}
	return root, rel, nil
}

// show returns a path relative to the root as the model is shown it.
func show(rel string) string { return filepath.ToSlash(rel) }

// errResult is an error observation.
func errResult(format string, args ...any) *Result {
	return &Result{Text: fmt.Sprintf(format, args...), IsError: true}
}

// osError words an error from a file operation for the model, without the
// host's paths.
func osError(what, name string, err error) *Result {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errResult("%s %s: no such file or folder", what, name)
	case errors.Is(err, fs.ErrPermission):
		return errResult("%s %s: permission denied", what, name)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return errResult("%s %s: %v", what, name, err)
}

// objectSchema is the input schema of a tool: an object with the given
// properties, in order, and nothing else.
func objectSchema(order []string, props map[string]*jsonschema.Schema, required ...string) *jsonschema.Schema {
	return &jsonschema.Schema{
		Type:                 "object",
		Properties:           props,
		PropertyOrder:        order,
		Required:             required,
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
	}
}

func stringArg(args map[string]any, name string) (string, error) {
	v, ok := args[name]
	if !ok || v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("argument %s must be a string", name)
	}
	return s, nil
}

func boolArg(args map[string]any, name string) (bool, error) {
	v, ok := args[name]
	if !ok || v == nil {
		return false, nil
	}
	b, ok := v.(bool)
	if !ok {
		return false, fmt.Errorf("argument %s must be true or false", name)
	}
	return b, nil
}

// intArg reads an integer argument, whichever Go type the JSON decoder gave it.
func intArg(args map[string]any, name string, def int) (int, error) {
	v, ok := args[name]
	if !ok || v == nil {
		return def, nil
	}
	var f float64
	switch n := v.(type) {
	case int:
		return n, nil
	case int64:
		f = float64(n)
	case float64:
		f = n
	case json.Number:
		var err error
		if f, err = n.Float64(); err != nil {
			return 0, fmt.Errorf("argument %s must be an integer", name)
		}
	default:
		return 0, fmt.Errorf("argument %s must be an integer", name)
	}
	if f != math.Trunc(f) || f > math.MaxInt32 || f < math.MinInt32 {
		return 0, fmt.Errorf("argument %s must be an integer", name)
	}
	return int(f), nil
}

// isBinary reports whether the start of a file holds a NUL byte.
func isBinary(head []byte) bool { return bytes.IndexByte(head, 0) >= 0 }

// readLine reads one line of br without its newline, keeping at most limit
// bytes of it (in keep's storage) and counting the bytes it dropped. ok is
// false at the end of the input. Inside a line longer than br's buffer it
// checks ctx at every buffer's worth, so that a line of gigabytes ends with
// the attempt; the error is then ctx's.
func readLine(ctx context.Context, br *bufio.Reader, limit int, keep []byte) (line []byte, cut int, ok bool, err error) {
	line = keep[:0]
	n := 0
	for {
		if n > 0 {
			if err := ctx.Err(); err != nil {
				return nil, 0, false, err
			}
		}
		chunk, rerr := br.ReadSlice('\n')
		n += len(chunk)
		if rerr == nil {
			chunk = chunk[:len(chunk)-1]
		}
		take := min(max(limit-len(line), 0), len(chunk))
		line = append(line, chunk[:take]...)
		cut += len(chunk) - take
		switch {
		case errors.Is(rerr, bufio.ErrBufferFull):
			continue
		case rerr == nil:
			return line, cut, true, nil
		case errors.Is(rerr, io.EOF):
			return line, cut, n > 0, nil
		default:
			return nil, 0, false, rerr
		}
	}
}

// ---------------------------------------------------------------- read_file

type readFileTool struct{ fileTool }

func (t readFileTool) Spec() Spec {
	return Spec{
		Name: "read_file",
		Description: "Read a text file of the workspace. Lines are numbered like cat -n (number, tab, text). " +
			"Output is cut at 64 KiB and lines longer than 4096 bytes are cut; read a long file in parts with start_line and end_line. " +
			"Binary files are refused.",
		InputSchema: objectSchema([]string{"path", "start_line", "end_line"}, map[string]*jsonschema.Schema{
			"path":       {Type: "string", MinLength: jsonschema.Ptr(1), Description: "File path, relative to the workspace root (e.g. src/main.go)."},
			"start_line": {Type: "integer", Minimum: jsonschema.Ptr(1.0), Description: "First line to show, counting from 1. Default: 1."},
			"end_line":   {Type: "integer", Minimum: jsonschema.Ptr(1.0), Description: "Last line to show, included. Default: the end of the file."},
		}, "path"),
		Class:  ClassRead,
		Origin: OriginBuiltin,
	}
}

func (t readFileTool) Call(ctx context.Context, args map[string]any) (Result, error) {
	p, err := stringArg(args, "path")
	if err != nil {
		return *errResult("%v", err), nil
	}
	start, err := intArg(args, "start_line", 1)
	if err != nil {
		return *errResult("%v", err), nil
	}
	end, err := intArg(args, "end_line", 0)
	if err != nil {
		return *errResult("%v", err), nil
	}
	if start < 1 {
		return *errResult("start_line must be 1 or more, not %d", start), nil
	}
	if end != 0 && end < start {
		return *errResult("end_line %d is before start_line %d", end, start), nil
	}
	root, rel, fail := t.target(p)
	if fail != nil {
		return *fail, nil
	}
	defer root.Close()
	name := show(rel)
	// Stat before opening: opening a named pipe would block.
	fi, err := root.Stat(rel)
	switch {
	case err != nil:
		return *osError("cannot read", name, err), nil
	case fi.IsDir():
		return *errResult("%s is a folder, not a file: use list_dir to see what it holds", name), nil
	case !fi.Mode().IsRegular():
		return *errResult("%s is %v", name, notRegularError{fi.Mode()}), nil
	}
	f, fi, err := openRegular(root, rel, os.O_RDONLY, 0)
	if err != nil {
		return *osError("cannot read", name, err), nil
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	head, err := br.Peek(sniffBytes)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return *osError("cannot read", name, err), nil
	}
	if isBinary(head) {
		return *errResult("%s is a binary file (%d bytes): read_file shows text only", name, fi.Size()), nil
	}

	var out strings.Builder
	var keep []byte
	lineNo, first, last := 0, 0, 0
	full := false // the output cap was reached; the rest only counts lines
	for {
		if lineNo%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return Result{}, fmt.Errorf("read %s: %w", name, err)
			}
		}
		line, cut, ok, err := readLine(ctx, br, maxLineBytes, keep)
		if err != nil && ctx.Err() != nil {
			return Result{}, fmt.Errorf("read %s: %w", name, ctx.Err())
		}
		if err != nil {
			return *osError("cannot read", name, err), nil
		}
		if !ok {
			break
		}
		keep = line
		lineNo++
		if full || lineNo < start || (end != 0 && lineNo > end) {
			continue
		}
		var text string
		if cut > 0 {
			text = fmt.Sprintf("%6d\t%s [... line cut: %d more bytes; see it with run_command, e.g. cut -c]", lineNo, procio.TrimLastRune(line), cut)
		} else {
			text = fmt.Sprintf("%6d\t%s", lineNo, line)
		}
		if out.Len()+len(text)+1 > fileOutputCap {
			full = true
			continue
		}
		if first == 0 {
			first = lineNo
		}
		last = lineNo
		out.WriteString(text)
		out.WriteByte('\n')
	}
	total := lineNo
	switch {
	case total == 0:
		return Result{Text: fmt.Sprintf("(%s is empty)", name)}, nil
	case start > total:
		return *errResult("start_line %d is past the end of %s, which has %d lines", start, name, total), nil
	case full:
		fmt.Fprintf(&out, "[output cut at %d KiB: showed lines %d-%d of %d; read the rest with start_line=%d]\n",
			fileOutputCap>>10, first, last, total, last+1)
	case first != 1 || last != total:
		fmt.Fprintf(&out, "[showed lines %d-%d of %d]\n", first, last, total)
	}
	return Result{Text: out.String()}, nil
}

// ---------------------------------------------------------------- write_file

type writeFileTool struct{ fileTool }

func (t writeFileTool) Spec() Spec {
	return Spec{
		Name: "write_file",
		Description: "Write a file of the workspace with the given content, replacing it whole if it exists. " +
			"Missing parent folders are created. To change part of a file, prefer edit_file.",
		InputSchema: objectSchema([]string{"path", "content"}, map[string]*jsonschema.Schema{
			"path":    {Type: "string", MinLength: jsonschema.Ptr(1), Description: "File path, relative to the workspace root (e.g. src/main.go)."},
			"content": {Type: "string", Description: "The whole new content of the file."},
		}, "path", "content"),
		Class:  ClassWrite,
		Origin: OriginBuiltin,
	}
}

func (t writeFileTool) Call(ctx context.Context, args map[string]any) (Result, error) {
	p, err := stringArg(args, "path")
	if err != nil {
		return *errResult("%v", err), nil
	}
	content, err := stringArg(args, "content")
	if err != nil {
		return *errResult("%v", err), nil
	}
	root, rel, fail := t.target(p)
	if fail != nil {
		return *fail, nil
	}
	defer root.Close()
	name := show(rel)
	if rel == "." {
		return *errResult("%s is the workspace folder itself: give a file path", p), nil
	}
	existed := false
	if fi, err := root.Stat(rel); err == nil {
		if fi.IsDir() {
			return *errResult("%s is a folder: give a file path", name), nil
		}
		if !fi.Mode().IsRegular() {
			return *errResult("%s is %v", name, notRegularError{fi.Mode()}), nil
		}
		existed = true
	}
	if dir := filepath.Dir(rel); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return *osError("cannot create folder", show(dir), err), nil
		}
	}
	f, _, err := openRegular(root, rel, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return *osError("cannot write", name, err), nil
	}
	defer f.Close()
	if err := f.Truncate(0); err != nil {
		return *osError("cannot write", name, err), nil
	}
	if _, err := f.WriteString(content); err != nil {
		return *osError("cannot write", name, err), nil
	}
	if err := f.Close(); err != nil {
		return *osError("cannot write", name, err), nil
	}
	verb := "created"
	if existed {
		verb = "overwrote"
	}
	return Result{Text: fmt.Sprintf("%s %s: wrote %s", verb, name, plural(len(content), "byte"))}, nil
}

// ---------------------------------------------------------------- edit_file

type editFileTool struct{ fileTool }

func (t editFileTool) Spec() Spec {
	return Spec{
		Name: "edit_file",
		Description: "Replace an exact piece of text in a file of the workspace. old_string must match the file exactly, " +
			"whitespace and indentation included, and only once unless replace_all is true: include enough surrounding lines to make it unique.",
		InputSchema: objectSchema([]string{"path", "old_string", "new_string", "replace_all"}, map[string]*jsonschema.Schema{
			"path":        {Type: "string", MinLength: jsonschema.Ptr(1), Description: "File path, relative to the workspace root (e.g. src/main.go)."},
			"old_string":  {Type: "string", MinLength: jsonschema.Ptr(1), Description: "The exact text to replace."},
			"new_string":  {Type: "string", Description: "The text to put in its place."},
			"replace_all": {Type: "boolean", Description: "Replace every occurrence instead of exactly one. Default: false."},
		}, "path", "old_string", "new_string"),
		Class:  ClassWrite,
		Origin: OriginBuiltin,
	}
}

func (t editFileTool) Call(ctx context.Context, args map[string]any) (Result, error) {
	var p, oldS, newS string
	var all bool
	var err error
	if p, err = stringArg(args, "path"); err == nil {
		if oldS, err = stringArg(args, "old_string"); err == nil {
			if newS, err = stringArg(args, "new_string"); err == nil {
				all, err = boolArg(args, "replace_all")
			}
		}
	}
	if err != nil {
		return *errResult("%v", err), nil
	}
	if oldS == "" {
		return *errResult("old_string is empty: give the exact text to replace (to write a whole file, use write_file)"), nil
	}
	if oldS == newS {
		return *errResult("old_string and new_string are the same: nothing would change"), nil
	}
	root, rel, fail := t.target(p)
	if fail != nil {
		return *fail, nil
	}
	defer root.Close()
	name := show(rel)
	fi, err := root.Stat(rel)
	switch {
	case err != nil:
		return *osError("cannot edit", name, err), nil
	case fi.IsDir():
		return *errResult("%s is a folder, not a file", name), nil
	case !fi.Mode().IsRegular():
		return *errResult("%s is %v", name, notRegularError{fi.Mode()}), nil
	case fi.Size() > maxEditBytes:
		return *tooLargeToEdit(name, fi.Size()), nil
	}
	f, fi, err := openRegular(root, rel, os.O_RDWR, 0)
	if err != nil {
		return *osError("cannot edit", name, err), nil
	}
	defer f.Close()
	if fi.Size() > maxEditBytes { // it grew since the check
		return *tooLargeToEdit(name, fi.Size()), nil
	}
	// One buffer at the size fstat gave, and a byte more to see the file
	// grow meanwhile: never more than maxEditBytes+1 in memory.
	data := make([]byte, fi.Size()+1)
	got, err := io.ReadFull(f, data)
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		data = data[:got]
	case err != nil:
		return *osError("cannot read", name, err), nil
	default:
		return *errResult("%s changed while edit_file read it: read it again and retry", name), nil
	}
	if isBinary(data[:min(len(data), sniffBytes)]) {
		return *errResult("%s is a binary file: edit_file changes text only", name), nil
	}
	oldB, newB := []byte(oldS), []byte(newS)
	n := bytes.Count(data, oldB)
	switch {
	case n == 0:
		msg := fmt.Sprintf("old_string was not found in %s: it must match the file exactly, whitespace and indentation included; read the file again and copy the text", name)
		if containsSqueezed(data, oldS) {
			msg += " (a match that differs only in whitespace exists)"
		}
		return *errResult("%s", msg), nil
	case n > 1 && !all:
		return *errResult("old_string occurs %d times in %s (%s): add surrounding lines to old_string so that it matches exactly once, or set replace_all to true",
			n, name, linesOf(data, oldB, 10)), nil
	}
	// The size of the result, from the count and the lengths, before it is
	// built: replacing every letter of a large file by a long text would
	// take gigabytes.
	if size := int64(len(data)) + int64(n)*(int64(len(newB))-int64(len(oldB))); size > maxEditBytes {
		return *errResult("replacing %s in %s would make it %d bytes, and edit_file writes files of at most %d: make a smaller change, or use run_command (e.g. sed)",
			plural(n, "occurrence"), name, size, maxEditBytes), nil
	}
	lines := linesOf(data, oldB, 10)
	data = bytes.Replace(data, oldB, newB, n)
	if _, err := f.WriteAt(data, 0); err != nil {
		return *osError("cannot write", name, err), nil
	}
	if err := f.Truncate(int64(len(data))); err != nil {
		return *osError("cannot write", name, err), nil
	}
	if err := f.Close(); err != nil {
		return *osError("cannot write", name, err), nil
	}
	if n == 1 {
		return Result{Text: fmt.Sprintf("replaced 1 occurrence in %s (%s)", name, lines)}, nil
	}
	return Result{Text: fmt.Sprintf("replaced %d occurrences in %s (%s)", n, name, lines)}, nil
}

// tooLargeToEdit refuses a file larger than edit_file loads.
func tooLargeToEdit(name string, size int64) *Result {
	return errResult("%s is too large to edit (%d bytes, at most %d): use run_command", name, size, maxEditBytes)
}

// linesOf names the lines where s occurs in content, at most limit of them.
func linesOf(content, s []byte, limit int) string {
	newline := []byte{'\n'}
	var nums []string
	line, pos := 1, 0
	for len(nums) < limit {
		i := bytes.Index(content[pos:], s)
		if i < 0 {
			break
		}
		line += bytes.Count(content[pos:pos+i], newline)
		nums = append(nums, fmt.Sprint(line))
		line += bytes.Count(s, newline)
		pos += i + len(s)
	}
	more := ""
	if bytes.Contains(content[pos:], s) {
		more = ", ..."
	}
	if len(nums) == 1 {
		return "line " + nums[0]
	}
	return "lines " + strings.Join(nums, ", ") + more
}

// squeezeSpace collapses runs of white space to one space.
func squeezeSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

// containsSqueezed reports whether old occurs in content once runs of white
// space (as strings.Fields sees it) are collapsed to one space in both. It
// streams the collapsed content through a Knuth-Morris-Pratt matcher, so
// that its memory is old's, whatever the size of content.
func containsSqueezed(content []byte, old string) bool {
	pat := squeezeSpace(old)
	if pat == "" {
		return true
	}
	// fail[i]: the length of the longest proper prefix of pat[:i+1] that
	// is also its suffix.
	fail := make([]int, len(pat))
	for i, k := 1, 0; i < len(pat); i++ {
		for k > 0 && pat[i] != pat[k] {
			k = fail[k-1]
		}
		if pat[i] == pat[k] {
			k++
		}
		fail[i] = k
	}
	j := 0 // bytes of pat matched so far
	feed := func(c byte) bool {
		for j > 0 && pat[j] != c {
			j = fail[j-1]
		}
		if pat[j] == c {
			j++
		}
		return j == len(pat)
	}
	space := false
	for i := 0; i < len(content); {
		r, size := utf8.DecodeRune(content[i:])
		if unicode.IsSpace(r) {
			space = true
			i += size
			continue
		}
		if space && feed(' ') {
			return true
		}
		space = false
		for _, c := range content[i : i+size] {
			if feed(c) {
				return true
			}
		}
		i += size
	}
	return false
}

// ---------------------------------------------------------------- list_dir

type listDirTool struct {
	fileTool
	limit int // entries at most
}

func (t listDirTool) Spec() Spec {
	return Spec{
		Name: "list_dir",
		Description: "List a folder of the workspace: one entry a line, folders end with /, files show their size in bytes. " +
			fmt.Sprintf("Paths are relative to the workspace root. Recursive listings skip the contents of .git. At most %d entries.", t.limit),
		InputSchema: objectSchema([]string{"path", "recursive"}, map[string]*jsonschema.Schema{
			"path":      {Type: "string", Description: "Folder path, relative to the workspace root. Default: the root."},
			"recursive": {Type: "boolean", Description: "List sub-folders too. Default: false."},
		}),
		Class:  ClassRead,
		Origin: OriginBuiltin,
	}
}

func (t listDirTool) Call(ctx context.Context, args map[string]any) (Result, error) {
	p, err := stringArg(args, "path")
	if err != nil {
		return *errResult("%v", err), nil
	}
	recursive, err := boolArg(args, "recursive")
	if err != nil {
		return *errResult("%v", err), nil
	}
	root, rel, fail := t.target(p)
	if fail != nil {
		return *fail, nil
	}
	defer root.Close()
	name := show(rel)
	fi, err := root.Stat(rel)
	if err != nil {
		return *osError("cannot list", name, err), nil
	}
	if !fi.IsDir() {
		return *errResult("%s is a file, not a folder: use read_file to read it", name), nil
	}
	fsys := walkFS{root}
	var out strings.Builder
	count := 0
	errFull := errors.New("full")
	add := func(p string, d fs.DirEntry) error {
		if count >= t.limit {
			return errFull
		}
		count++
		out.WriteString(t.entry(root, p, d))
		out.WriteByte('\n')
		return nil
	}
	if recursive {
		err = fs.WalkDir(fsys, name, func(p string, d fs.DirEntry, err error) error {
			if cerr := ctx.Err(); cerr != nil {
				return cerr
			}
			if p == name {
				return err
			}
			if err != nil {
				// An unreadable folder: show it, go on with the rest.
				return nil
			}
			if aerr := add(p, d); aerr != nil {
				return aerr
			}
			if d.IsDir() && d.Name() == ".git" {
				return fs.SkipDir
			}
			return nil
		})
	} else {
		var entries []fs.DirEntry
		entries, err = fs.ReadDir(fsys, name)
		for _, d := range entries {
			if err = add(path.Join(name, d.Name()), d); err != nil {
				break
			}
		}
	}
	switch {
	case errors.Is(err, errFull):
		fmt.Fprintf(&out, "[listing cut at %d entries: list a sub-folder", t.limit)
		if recursive {
			out.WriteString(", or without recursive")
		}
		out.WriteString("]\n")
	case err != nil && ctx.Err() != nil:
		return Result{}, fmt.Errorf("list %s: %w", name, ctx.Err())
	case err != nil:
		return *osError("cannot list", name, err), nil
	case count == 0:
		return Result{Text: fmt.Sprintf("(folder %s is empty)", name)}, nil
	}
	return Result{Text: out.String()}, nil
}

// entry formats one listing line.
func (t listDirTool) entry(root *os.Root, p string, d fs.DirEntry) string {
	switch {
	case d.IsDir():
		return p + "/"
	case d.Type()&fs.ModeSymlink != 0:
		real, err := t.ws.Resolve(filepath.FromSlash(p))
		var outside outsideError
		switch {
		case errors.As(err, &outside):
			return p + " (symbolic link leading outside the workspace)"
		case err != nil:
			return p + " (symbolic link that cannot be followed)"
		}
		return p + " -> " + t.ws.Rel(real) + " (symbolic link)"
	}
	info, err := d.Info()
	if err != nil {
		return p
	}
	if !info.Mode().IsRegular() {
		return fmt.Sprintf("%s (%s)", p, kindOf(info.Mode()))
	}
	return fmt.Sprintf("%s  %s", p, plural(int(info.Size()), "byte"))
}

// ---------------------------------------------------------------- search

type searchTool struct{ fileTool }

func (t searchTool) Spec() Spec {
	return Spec{
		Name: "search",
		Description: "Search text files of the workspace for a regular expression (Go RE2 syntax, e.g. func \\w+\\(). " +
			"Output: one match a line as file:line: text, paths relative to the workspace root. " +
			"Binary files, files over 8 MiB and .git are skipped. At most 200 matches.",
		InputSchema: objectSchema([]string{"pattern", "path", "glob"}, map[string]*jsonschema.Schema{
			"pattern": {Type: "string", MinLength: jsonschema.Ptr(1), Description: "Regular expression, Go RE2 syntax; (?i) makes it case-insensitive."},
			"path":    {Type: "string", Description: "Folder or file to search, relative to the workspace root. Default: the root."},
			"glob":    {Type: "string", Description: "Only files whose name matches this pattern, e.g. *.go; a pattern with / matches the path from the workspace root, e.g. src/*.py. No **."},
		}, "pattern"),
		Class:  ClassRead,
		Origin: OriginBuiltin,
	}
}

func (t searchTool) Call(ctx context.Context, args map[string]any) (Result, error) {
	var pattern, p, glob string
	var err error
	if pattern, err = stringArg(args, "pattern"); err == nil {
		if p, err = stringArg(args, "path"); err == nil {
			glob, err = stringArg(args, "glob")
		}
	}
	if err != nil {
		return *errResult("%v", err), nil
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return *errResult("invalid regular expression %q: %v (Go RE2 syntax: no look-around or back-references)", pattern, strings.TrimPrefix(err.Error(), "error parsing regexp: ")), nil
	}
	if _, err := path.Match(glob, ""); err != nil {
		return *errResult("invalid glob %q: %v", glob, err), nil
	}
	root, rel, fail := t.target(p)
	if fail != nil {
		return *fail, nil
	}
	defer root.Close()
	name := show(rel)
	if _, err := root.Stat(rel); err != nil {
		return *osError("cannot search", name, err), nil
	}
	s := searcher{t: t, root: root, re: re, glob: glob}
	err = fs.WalkDir(walkFS{root}, name, func(p string, d fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		switch {
		case err != nil:
			return nil // unreadable: skip
		case d.IsDir():
			if d.Name() == ".git" && p != name {
				return fs.SkipDir
			}
			return nil
		}
		return s.file(ctx, p, d)
	})
	switch {
	case errors.Is(err, errSearchFull):
		fmt.Fprintf(&s.out, "[stopped after %d matches; there are more: narrow the pattern, path or glob]\n", s.matches)
	case err != nil && ctx.Err() != nil:
		return Result{}, fmt.Errorf("search %s: %w", name, ctx.Err())
	case err != nil:
		return *osError("cannot search", name, err), nil
	}
	if s.big > 0 {
		fmt.Fprintf(&s.out, "[skipped %d files larger than %d MiB]\n", s.big, maxSearchFileBytes>>20)
	}
	if s.matches == 0 {
		return Result{Text: fmt.Sprintf("no matches for %q in %s (%d files searched)\n%s", pattern, name, s.files, s.out.String())}, nil
	}
	return Result{Text: s.out.String()}, nil
}

var errSearchFull = errors.New("search output full")

// searcher is one search's state.
type searcher struct {
	t       searchTool
	root    *os.Root
	re      *regexp.Regexp
	glob    string
	out     strings.Builder
	matches int
	files   int
	big     int
	keep    []byte
	br      *bufio.Reader // every file's, its 64 KB buffer taken once a search
}

// file searches one walked file; p is slash-separated, relative to the root.
// A file that is not a regular one (a named pipe a command left) is
// skipped; an error is ctx's or errSearchFull.
func (s *searcher) file(ctx context.Context, p string, d fs.DirEntry) error {
	if s.glob != "" {
		target := d.Name()
		if strings.Contains(s.glob, "/") {
			target = p
		}
		if ok, _ := path.Match(s.glob, target); !ok {
			return nil
		}
	}
	open := filepath.FromSlash(p)
	if d.Type()&fs.ModeSymlink != 0 {
		real, err := s.t.ws.Resolve(open)
		if err != nil {
			return nil // leads outside: not ours to read
		}
		open, _ = filepath.Rel(s.t.ws.Root(), real)
	} else if !d.Type().IsRegular() {
		return nil
	}
	fi, err := s.root.Stat(open)
	if err != nil || !fi.Mode().IsRegular() {
		return nil // opening a named pipe would block
	}
	if fi.Size() > maxSearchFileBytes {
		s.big++
		return nil
	}
	f, fi, err := openRegular(s.root, open, os.O_RDONLY, 0)
	if err != nil {
		return nil // it changed since the check
	}
	defer f.Close()
	if fi.Size() > maxSearchFileBytes {
		s.big++
		return nil
	}
	if s.br == nil {
		s.br = bufio.NewReaderSize(f, 64<<10)
	} else {
		s.br.Reset(f)
	}
	br := s.br
	if head, _ := br.Peek(sniffBytes); isBinary(head) {
		return nil
	}
	s.files++
	for n := 1; ; n++ {
		line, _, ok, err := readLine(ctx, br, maxLineBytes, s.keep)
		if err != nil && ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil || !ok {
			return nil
		}
		s.keep = line
		if !s.re.Match(line) {
			continue
		}
		text := line
		if len(text) > maxSearchLineBytes {
			text = append(procio.TrimLastRune(text[:maxSearchLineBytes:maxSearchLineBytes]), " [...]"...)
		}
		entry := fmt.Sprintf("%s:%d: %s\n", p, n, text)
		if s.matches >= maxSearchMatches || s.out.Len()+len(entry) > fileOutputCap {
			return errSearchFull
		}
		s.matches++
		s.out.WriteString(entry)
	}
}

// plural words a count: "1 byte", "2 bytes".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
