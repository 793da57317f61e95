package eval

import (
	"bufio"
	"bytes"
	"fmt"
	"io"

	"github.com/batchprep/batchprep/internal/plural"
)

// Triple is one edge by names.
type Triple struct{ Lhs, Rel, Rhs string }

// Columns say where the fields are: 0-based columns (Rel -1: every edge
// has the config's first relation) and the separator: "tab" (one tab),
// "comma" or "space" (runs of blanks), as batchprep import reads them.
type Columns struct {
	Lhs, Rel, Rhs int
	Delimiter     string
}

// DefaultColumns read head<TAB>relation<TAB>tail lines.
func DefaultColumns() Columns { return Columns{Lhs: 0, Rel: 1, Rhs: 2, Delimiter: "tab"} }

// ParseError is a bad line of a triple file.
type ParseError struct {
	File         string
	Line, Column int
	Msg          string
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("eval: %s:%d:%d: %s", e.File, e.Line, e.Column, e.Msg)
}

// ReadTriples parses r (named file in errors) into triples (invariant 5).
func ReadTriples(file string, r io.Reader, c Columns) ([]Triple, error) {
	if c.Delimiter != "tab" && c.Delimiter != "comma" && c.Delimiter != "space" {
		return nil, fmt.Errorf("eval: delimiter %q is not one of tab, comma, space", c.Delimiter)
	}
	if c.Lhs < 0 || c.Rhs < 0 || c.Rel < -1 {
		return nil, fmt.Errorf("eval: columns lhs %d, rel %d, rhs %d: want lhs, rhs >= 0 and rel >= -1", c.Lhs, c.Rel, c.Rhs)
	}
	need := max(c.Lhs, c.Rel, c.Rhs)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var out []Triple
	for line := 1; sc.Scan(); line++ {
		text := bytes.TrimRight(sc.Bytes(), "\r")
		if len(bytes.TrimSpace(text)) == 0 || text[0] == '#' {
			continue
		}
		fields, cols := split(text, c.Delimiter)
		if len(fields) <= need {
			return nil, &ParseError{file, line, len(text) + 1, fmt.Sprintf("%s, need at least %d", plural.Count(len(fields), "field"), need+1)}
		}
		t := Triple{Lhs: string(fields[c.Lhs]), Rhs: string(fields[c.Rhs])}
		if c.Rel >= 0 {
			t.Rel = string(fields[c.Rel])
		}
		for _, k := range []int{c.Lhs, c.Rhs, c.Rel} {
			if k >= 0 && len(fields[k]) == 0 {
				return nil, &ParseError{file, line, cols[k] + 1, fmt.Sprintf("field %d is empty", k)}
			}
		}
		out = append(out, t)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("eval: %s: %w", file, err)
	}
	return out, nil
}

// split cuts a line into fields and their 0-based starting columns.
func split(b []byte, delim string) (fields [][]byte, cols []int) {
	if delim == "space" {
		i := 0
		for i < len(b) {
			for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
				i++
			}
			if i == len(b) {
				break
			}
			j := i
			for j < len(b) && b[j] != ' ' && b[j] != '\t' {
				j++
			}
			fields, cols = append(fields, b[i:j]), append(cols, i)
			i = j
		}
		return fields, cols
	}
	sep := byte('\t')
	if delim == "comma" {
		sep = ','
	}
	start := 0
	for i := 0; i <= len(b); i++ {
		if i == len(b) || b[i] == sep {
			fields, cols = append(fields, b[start:i]), append(cols, start)
			start = i + 1
		}
	}
	return fields, cols
}
