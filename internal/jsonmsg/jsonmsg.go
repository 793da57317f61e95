// Package jsonmsg words the errors of encoding/json for users: the line and
// column, the field and what it wants, instead of the package's own text
// ("json: cannot unmarshal string into Go struct field .version of type
// int", "invalid character 'g' looking for beginning of value").
package jsonmsg

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// Describe returns err, an error of decoding data with encoding/json, in
// words. Errors of other kinds are returned as they are.
func Describe(data []byte, err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		line, col := LineCol(data, se.Offset-1)
		what := "not valid JSON"
		if se.Offset >= 1 && se.Offset <= int64(len(data)) {
			what = fmt.Sprintf("not valid JSON (unexpected %q)", data[se.Offset-1])
		}
		return fmt.Sprintf("line %d, column %d: %s", line, col, what)
	case errors.As(err, &te):
		line, col := LineCol(data, valueStart(data, te.Offset))
		field := strings.TrimPrefix(te.Field, ".")
		if field == "" {
			return fmt.Sprintf("line %d, column %d: %s where %s belongs", line, col, article(te.Value), want(te.Type))
		}
		return fmt.Sprintf("line %d, column %d: field %q holds %s, want %s", line, col, field, article(te.Value), want(te.Type))
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return "truncated or empty JSON"
	}
	msg := err.Error()
	if f, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return "unknown field " + f
	}
	return strings.TrimPrefix(msg, "json: ")
}

// LineCol returns the 1-based line and column of byte offset off in data.
func LineCol(data []byte, off int64) (line, col int) {
	off = max(0, min(off, int64(len(data))))
	before := data[:off]
	line = bytes.Count(before, []byte{'\n'}) + 1
	col = int(off) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}

// valueStart returns the offset of the first byte of the JSON value that
// ends just before end (encoding/json reports a type error there).
func valueStart(data []byte, end int64) int64 {
	i := min(end, int64(len(data))) - 1
	for i > 0 && strings.IndexByte(" \t\r\n", data[i]) >= 0 {
		i--
	}
	if i <= 0 {
		return 0
	}
	switch data[i] {
	case '"':
		for j := i - 1; j >= 0; j-- {
			if data[j] == '"' {
				k := j - 1
				for k >= 0 && data[k] == '\\' {
					k--
				}
				if (j-k-1)%2 == 0 {
					return j
				}
			}
		}
		return 0
	case ']', '}':
		depth := 0
		for j := i; j >= 0; j-- {
			switch data[j] {
			case ']', '}':
				depth++
			case '[', '{':
				depth--
				if depth == 0 {
					return j
				}
			}
		}
		return 0
	}
	j := i
	for j > 0 && strings.IndexByte(" \t\r\n:,[{", data[j-1]) < 0 {
		j--
	}
	return j
}

// article names a JSON value kind as encoding/json reports it ("string",
// "number", "number -1", "bool", "array", "object").
func article(v string) string {
	switch {
	case v == "array" || v == "object":
		return "an " + v
	case v == "bool":
		return "a boolean"
	case strings.HasPrefix(v, "number "):
		return "the number " + strings.TrimPrefix(v, "number ")
	}
	return "a " + v
}

// want names what a Go type accepts, as a JSON value.
func want(t reflect.Type) string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return "another value"
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer >= 0"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "another value"
}
