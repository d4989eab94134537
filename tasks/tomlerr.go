package tasks

import (
	"encoding"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"github.com/BurntSushi/toml"
)

// DecodeError turns an error of decoding the TOML document data (from
// file) into a FieldError, as TOMLError does, except for a syntax error:
// the decoder names with it the last key it read, which is not the
// mistake's ("[limits" on the line after [tests] is not a mistake in the
// field tests). A syntax error is told as one, at its line, with no field.
func DecodeError(file, data string, err error) error {
	var pe toml.ParseError
	if !errors.As(err, &pe) {
		return TOMLError(file, err)
	}
	var raw map[string]any
	if _, perr := toml.Decode(data, &raw); perr == nil {
		// The document parses: the error is a value's (a duration that
		// does not parse), and the key is the value's.
		return TOMLError(file, err)
	}
	line := pe.Position.Line
	if st := pe.Position.Start; st > 0 && st < len(data) {
		// The line of the byte where the error is: the decoder counts the
		// newline that ends a line (a table header left open) as the next.
		line = 1 + strings.Count(data[:st], "\n")
	}
	if line > 0 {
		return &FieldError{File: file, Msg: fmt.Sprintf("line %d: syntax error: %s", line, pe.Message)}
	}
	return &FieldError{File: file, Msg: "syntax error: " + pe.Message}
}

// UnknownField is the error for a key of a TOML document that decoding it
// into target (a pointer to the struct it was decoded into) left
// undecoded: it names the key with the index of each array of tables on
// its way ("arms[1].nam", "servers[0].clases"), and lists the fields the
// table that holds it takes, read from target's toml tags (tables as
// [name], arrays of tables as [[name]]). It returns nil for a key under a
// free map (a run file's [options]), which any key may take.
func UnknownField(file, data string, target any, key toml.Key) error {
	var raw map[string]any
	_, _ = toml.Decode(data, &raw) // data decoded once already
	t := reflect.TypeOf(target)
	var node any = raw
	var path []string
	for i, name := range key {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() == reflect.Map {
			return nil
		}
		if t.Kind() != reflect.Struct {
			break
		}
		f, ok := fieldByTag(t, name)
		if !ok {
			return &FieldError{File: file, Field: strings.Join(append(path, name), "."),
				Msg: fmt.Sprintf("unknown field (expected one of: %s)", strings.Join(tomlFields(t), ", "))}
		}
		t = f.Type
		m, _ := node.(map[string]any)
		node = m[name]
		seg := name
		if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct {
			// An array of tables: the element that holds the rest of the key.
			t = t.Elem()
			if list, ok := node.([]map[string]any); ok {
				for j, el := range list {
					if hasPath(el, key[i+1:]) {
						seg, node = fmt.Sprintf("%s[%d]", name, j), el
						break
					}
				}
			}
		}
		path = append(path, seg)
	}
	return &FieldError{File: file, Field: strings.Join(path, "."), Msg: "unknown field"}
}

// hasPath reports whether the keys lead somewhere in m, through arrays of
// tables.
func hasPath(m map[string]any, key []string) bool {
	if len(key) == 0 {
		return true
	}
	switch v := m[key[0]].(type) {
	case nil:
		return false
	case map[string]any:
		return hasPath(v, key[1:])
	case []map[string]any:
		for _, el := range v {
			if hasPath(el, key[1:]) {
				return true
			}
		}
		return false
	}
	return len(key) == 1
}

// fieldByTag finds the field of a struct with this toml name.
func fieldByTag(t reflect.Type, name string) (reflect.StructField, bool) {
	for _, f := range reflect.VisibleFields(t) {
		if tag, _, _ := strings.Cut(f.Tag.Get("toml"), ","); tag == name && f.IsExported() {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

var textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()

// tomlFields lists the toml names of a struct's fields, tables as [name]
// and arrays of tables as [[name]].
func tomlFields(t reflect.Type) []string {
	var out []string
	for _, f := range reflect.VisibleFields(t) {
		tag, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
		if tag == "" || tag == "-" || !f.IsExported() {
			continue
		}
		ft := f.Type
		switch {
		case reflect.PointerTo(ft).Implements(textUnmarshaler):
			out = append(out, tag)
		case ft.Kind() == reflect.Struct || ft.Kind() == reflect.Map && ft.Elem().Kind() != reflect.String:
			out = append(out, "["+tag+"]")
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
			out = append(out, "[["+tag+"]]")
		default:
			out = append(out, tag)
		}
	}
	return out
}

// typeMismatch matches the TOML decoder's message for a value of the
// wrong type.
var typeMismatch = regexp.MustCompile(`incompatible types: TOML value has type (.+); destination has type (.+)$`)

// typeMessage rewrites the decoder's "incompatible types: TOML value has
// type string; destination has type slice" as what was expected: "expected
// an array (such as ["a", "b"]), got a string". Other messages are
// returned as they are.
func typeMessage(msg string) string {
	m := typeMismatch.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	want := map[string]string{
		"slice": `an array (such as ["a", "b"])`, "map": "a table (such as { key = \"value\" })", "string": "a string",
		"float": "a number", "integer": "an integer", "boolean": "true or false", "primitive (string-like)": "a string",
	}[m[2]]
	if want == "" {
		want = m[2]
	}
	got := m[1]
	switch {
	case got == "string":
		got = "a string"
	case strings.HasPrefix(got, "int"):
		got = "an integer"
	case strings.HasPrefix(got, "float"):
		got = "a number"
	case got == "bool":
		got = "true or false"
	case strings.HasPrefix(got, "[]"):
		got = "an array"
	case strings.HasPrefix(got, "map"):
		got = "a table"
	case strings.Contains(got, "time") || strings.Contains(got, "Local"):
		got = "a date or time"
	}
	return strings.TrimSuffix(msg, m[0]) + "expected " + want + ", got " + got
}

// MapFieldError finds a map field of target that the document gives a
// value other than a table (classes = 3): the TOML decoder leaves such a
// field empty without an error. It returns the error naming the field, or
// nil. target is the pointer the document was decoded into.
func MapFieldError(file, data string, target any) error {
	var raw map[string]any
	if _, err := toml.Decode(data, &raw); err != nil {
		return nil // reported by the decoding proper
	}
	return mapFieldError(file, raw, reflect.TypeOf(target), "")
}

func mapFieldError(file string, raw map[string]any, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	for name, v := range raw {
		f, ok := fieldByTag(t, name)
		if !ok {
			continue // an unknown field: UnknownField's
		}
		field := name
		if path != "" {
			field = path + "." + name
		}
		ft := f.Type
		switch {
		case ft.Kind() == reflect.Map:
			if _, ok := v.(map[string]any); !ok {
				return &FieldError{File: file, Field: field, Msg: typeMessage(fmt.Sprintf("incompatible types: TOML value has type %T; destination has type map", v))}
			}
		case ft.Kind() == reflect.Struct:
			if m, ok := v.(map[string]any); ok {
				if err := mapFieldError(file, m, ft, field); err != nil {
					return err
				}
			}
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
			if list, ok := v.([]map[string]any); ok {
				for i, el := range list {
					if err := mapFieldError(file, el, ft.Elem(), fmt.Sprintf("%s[%d]", field, i)); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}
