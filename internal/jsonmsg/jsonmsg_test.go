package jsonmsg

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestDescribe(t *testing.T) {
	type inner struct {
		Epoch *int `json:"epoch"`
	}
	type doc struct {
		Version  *int              `json:"version"`
		Position *uint64           `json:"position"`
		Inner    inner             `json:"inner"`
		Print    map[string]string `json:"print"`
	}
	cases := []struct{ in, want string }{
		{"{\"version\": \"x\"}", `line 1, column 13: field "version" holds a string, want an integer`},
		{"{\n \"position\": -1}", `line 2, column 14: field "position" holds the number -1, want an integer >= 0`},
		{`{"inner": {"epoch": true}}`, `line 1, column 21: field "inner.epoch" holds a boolean, want an integer`},
		{`{"print": [1]}`, `line 1, column 11: field "print" holds an array, want an object`},
		{"garbage", `line 1, column 1: not valid JSON (unexpected 'g')`},
		{"{\"version\": 1,}", `line 1, column 15: not valid JSON (unexpected '}')`},
		{`{"colour": 1}`, `unknown field "colour"`},
		{`{"version": 1`, `truncated or empty JSON`},
		{``, `truncated or empty JSON`},
		{`[1]`, `line 1, column 1: an array where an object belongs`},
	}
	for _, c := range cases {
		dec := json.NewDecoder(bytes.NewReader([]byte(c.in)))
		dec.DisallowUnknownFields()
		var d doc
		err := dec.Decode(&d)
		if err == nil {
			t.Fatalf("%s: no error", c.in)
		}
		got := Describe([]byte(c.in), err)
		if got != c.want {
			t.Errorf("%s: %q (from %v), want %q", c.in, got, err, c.want)
		}
		if strings.Contains(got, "json:") || strings.Contains(got, "Go struct") {
			t.Errorf("%s: library text in %q", c.in, got)
		}
	}
}
