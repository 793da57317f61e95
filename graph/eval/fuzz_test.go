package eval

import (
	"bytes"
	"errors"
	"testing"
)

// Invariant 5: any input parses or fails with a ParseError naming a line;
// parsed triples have non-empty fields.
func FuzzReadTriples(f *testing.F) {
	f.Add([]byte("a\tr\tb\n# c\n\nx\ty\tz\r\n"), 0)
	f.Add([]byte("a,r\n"), 1)
	f.Add([]byte("  a   r  b  \n"), 2)
	f.Fuzz(func(t *testing.T, data []byte, d int) {
		delim := []string{"tab", "comma", "space"}[uint(d)%3]
		c := DefaultColumns()
		c.Delimiter = delim
		ts, err := ReadTriples("f", bytes.NewReader(data), c)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Line < 1 || pe.Column < 1 {
				if !bytes.Contains([]byte(err.Error()), []byte("token too long")) {
					t.Fatalf("error without position: %v", err)
				}
			}
			return
		}
		for _, tr := range ts {
			if tr.Lhs == "" || tr.Rel == "" || tr.Rhs == "" {
				t.Fatalf("empty field in %+v", tr)
			}
		}
	})
}

// Bad lines name file, line and column; comments and blank lines are
// skipped.
func TestReadTriplesErrors(t *testing.T) {
	ts, err := ReadTriples("f", bytes.NewReader([]byte("# h\n\na\tr\tb\n")), DefaultColumns())
	if err != nil || len(ts) != 1 || ts[0] != (Triple{"a", "r", "b"}) {
		t.Fatalf("got %v %v", ts, err)
	}
	_, err = ReadTriples("f.tsv", bytes.NewReader([]byte("a\tr\tb\na\tr\n")), DefaultColumns())
	if err == nil || err.Error() != "eval: f.tsv:2:4: 2 fields, need at least 3" {
		t.Fatalf("got %v", err)
	}
	_, err = ReadTriples("f.tsv", bytes.NewReader([]byte("a\t\tb\n")), DefaultColumns())
	if err == nil || err.Error() != "eval: f.tsv:1:3: field 1 is empty" {
		t.Fatalf("got %v", err)
	}
}
