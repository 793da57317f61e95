package parquet

import (
	"fmt"
	"io"
	"strconv"

	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"
)

// shape is how one leaf column nests: its path from a top-level field down
// through groups of one field each, and what each definition level means.
type shape struct {
	name   string // the top-level field's name
	col    int    // the leaf's column index
	kind   pq.Kind
	depth  int    // repeated levels on the path: 0 (a scalar), 1 or 2
	maxDef int    // the definition level of a present leaf value
	repDef [3]int // repDef[k]: definition level at which repeated level k has an element
	// nullAt[d], for d < maxDef: a value at definition level d is a null
	// (an optional node is absent) rather than an empty list.
	nullAt []bool
}

// typeName describes a leaf kind for messages.
func typeName(k pq.Kind) string {
	switch k {
	case pq.Boolean:
		return "booleans"
	case pq.Int32:
		return "int32"
	case pq.Int64:
		return "int64"
	case pq.Int96:
		return "int96"
	case pq.Float:
		return "float"
	case pq.Double:
		return "double"
	case pq.ByteArray:
		return "strings or bytes"
	case pq.FixedLenByteArray:
		return "fixed-length bytes"
	}
	return "an unknown type"
}

func isInt(k pq.Kind) bool    { return k == pq.Int32 || k == pq.Int64 }
func isNumber(k pq.Kind) bool { return isInt(k) || k == pq.Float || k == pq.Double }

// findShape resolves the top-level column name of schema s.
func findShape(s *pq.Schema, file, name string) (*shape, error) {
	var node pq.Node
	for _, f := range s.Fields() {
		if f.Name() == name {
			node = f
			break
		}
	}
	if node == nil {
		return nil, &Error{File: file, RowGroup: -1, Row: -1, Column: name, Msg: "no such column in the file", Err: ErrMissingColumn}
	}
	sh := &shape{name: name}
	path := []string{name}
	for {
		switch {
		case node.Optional():
			sh.maxDef++
			sh.nullAt = append(sh.nullAt, true)
		case node.Repeated():
			sh.maxDef++
			sh.nullAt = append(sh.nullAt, false)
			sh.depth++
			if sh.depth > 2 {
				return nil, &Error{File: file, RowGroup: -1, Row: -1, Column: name, Msg: "lists nested more than two deep; want a list of numbers or a list of lists of numbers", Err: ErrColumnType}
			}
			sh.repDef[sh.depth] = sh.maxDef
		}
		if node.Leaf() {
			break
		}
		fs := node.Fields()
		if len(fs) != 1 {
			return nil, &Error{File: file, RowGroup: -1, Row: -1, Column: name, Msg: fmt.Sprintf("a group of %d fields; want a list of numbers or a list of lists of numbers", len(fs)), Err: ErrColumnType}
		}
		node = fs[0]
		path = append(path, fs[0].Name())
	}
	leaf, ok := s.Lookup(path...)
	if !ok {
		return nil, &Error{File: file, RowGroup: -1, Row: -1, Column: name, Msg: "column not found in the schema", Err: ErrMissingColumn}
	}
	sh.col = leaf.ColumnIndex
	sh.kind = node.Type().Kind()
	if isDecimal(node) {
		return nil, &Error{File: file, RowGroup: -1, Row: -1, Column: name, Msg: "holds decimals; want float, double or integers (cast the column when writing it)", Err: ErrColumnType}
	}
	return sh, nil
}

// colData is the decoded content of a run of rows of one column: row i
// has rowItems[i] level-1 elements; with depth 2, element j holds
// itemLen[j] leaf values, and with depth 1 the elements are the leaf
// values. Leaf values are in ints, floats or strs, as the column's role
// asks.
type colData struct {
	rowItems []int32
	itemLen  []int32
	ints     []int64
	floats   []float32
	strs     []string
}

func (d *colData) reset() {
	d.rowItems, d.itemLen = d.rowItems[:0], d.itemLen[:0]
	d.ints, d.floats, d.strs = d.ints[:0], d.floats[:0], d.strs[:0]
}

// role is what a column's leaves are read as.
type role int

const (
	asFloats role = iota
	asInts
	asStrings
)

// colReader decodes one column chunk (one row group's part of a column)
// row by row, from a given row on.
type colReader struct {
	sh    *shape
	role  role
	file  string
	group int
	row   int64 // file row of the next row to start
	pages pq.Pages
	page  pq.Page
	vr    pq.ValueReader
	buf   []pq.Value
	bi    int
	bn    int
	// endAtPage: the rows to read end where a page ends, so next stops at
	// that page's end instead of reading the next page's first value.
	endAtPage bool
}

const valueBuffer = 1024

// newColReader reads column sh of row group rg from row from on, as ld
// says when it is set (a chunk's load).
func newColReader(file string, rg pq.RowGroup, group int, groupFirst, from int64, sh *shape, r role, ld *load) (*colReader, error) {
	var pages pq.Pages
	endAtPage := false
	if fc, ok := rg.ColumnChunks()[sh.col].(*pq.FileColumnChunk); ok && ld != nil {
		pages = fc.PagesFrom(ld.src)
		endAtPage = ld.endsPage[sh.col]
	} else {
		pages = rg.ColumnChunks()[sh.col].Pages()
	}
	if from > groupFirst {
		if err := pages.SeekToRow(from - groupFirst); err != nil {
			pages.Close()
			return nil, &Error{File: file, RowGroup: group, Row: from, Column: sh.name, Msg: "a damaged page index: the row cannot be found", Err: ErrDamaged}
		}
	}
	return &colReader{sh: sh, role: r, file: file, group: group, row: from, pages: pages,
		buf: make([]pq.Value, valueBuffer), endAtPage: endAtPage}, nil
}

func (cr *colReader) close() {
	if cr.page != nil {
		pq.Release(cr.page)
		cr.page = nil
	}
	cr.pages.Close()
}

// fill makes at least one value available; false at the end of the chunk,
// or with pageEnd at the end of the page.
func (cr *colReader) fill(pageEnd bool) (bool, error) {
	for cr.bi == cr.bn {
		if cr.vr == nil {
			if pageEnd && cr.page != nil {
				return false, nil
			}
			if cr.page != nil {
				pq.Release(cr.page)
				cr.page = nil
			}
			p, err := cr.pages.ReadPage()
			if err != nil {
				if err == io.EOF {
					return false, nil
				}
				return false, cr.fail(cr.row, "a damaged page: it cannot be decoded", ErrDamaged)
			}
			cr.page, cr.vr = p, p.Values()
		}
		n, err := cr.vr.ReadValues(cr.buf)
		cr.bi, cr.bn = 0, n
		if err != nil && err != io.EOF {
			return false, cr.fail(cr.row, "a damaged page: its values cannot be decoded", ErrDamaged)
		}
		if err != nil || n == 0 { // the page is done (a reader that returns nothing is too)
			cr.vr = nil
		}
	}
	return true, nil
}

func (cr *colReader) fail(row int64, msg string, err error) *Error {
	return &Error{File: cr.file, RowGroup: cr.group, Row: row, Column: cr.sh.name, Msg: msg, Err: err}
}

// next decodes n rows, appending them to out; the first value of the row
// after them stays buffered for the next call.
func (cr *colReader) next(n int, out *colData) error {
	started := 0
	for {
		ok, err := cr.fill(started == n && cr.endAtPage)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		v := &cr.buf[cr.bi]
		r, d := v.RepetitionLevel(), v.DefinitionLevel()
		if r == 0 {
			if started == n {
				break
			}
			out.rowItems = append(out.rowItems, 0)
			started++
			cr.row++
		}
		cr.bi++
		if started == 0 {
			return cr.fail(cr.row, "the column's values do not start at a row boundary", ErrRowCount)
		}
		if err := cr.value(v, r, d, cr.row-1, out); err != nil {
			return err
		}
	}
	if started < n {
		return cr.fail(cr.row, fmt.Sprintf("the column ends %d rows short of the row group's row count", n-started), ErrRowCount)
	}
	return nil
}

// value decodes one leaf-level value at repetition r and definition d.
func (cr *colReader) value(v *pq.Value, r, d int, row int64, out *colData) error {
	sh := cr.sh
	for k := max(r, 1); k <= sh.depth; k++ {
		if d < sh.repDef[k] {
			if sh.nullAt[d] {
				return cr.fail(row, "null where a value or a list is expected", ErrNull)
			}
			return nil // an empty list at level k
		}
		if k == 1 {
			out.rowItems[len(out.rowItems)-1]++
			if sh.depth == 2 {
				out.itemLen = append(out.itemLen, 0)
			}
		}
	}
	if d < sh.maxDef {
		return cr.fail(row, "null where a value or a list is expected", ErrNull)
	}
	if sh.depth == 0 {
		out.rowItems[len(out.rowItems)-1]++
	}
	if sh.depth == 2 {
		out.itemLen[len(out.itemLen)-1]++
	}
	switch cr.role {
	case asInts:
		if sh.kind == pq.Int32 {
			out.ints = append(out.ints, int64(v.Int32()))
		} else {
			out.ints = append(out.ints, v.Int64())
		}
	case asFloats:
		switch sh.kind {
		case pq.Float:
			out.floats = append(out.floats, v.Float())
		case pq.Double:
			out.floats = append(out.floats, float32(v.Double()))
		case pq.Int32:
			out.floats = append(out.floats, float32(v.Int32()))
		default:
			out.floats = append(out.floats, float32(v.Int64()))
		}
	case asStrings:
		switch sh.kind {
		case pq.Int32:
			out.strs = append(out.strs, strconv.FormatInt(int64(v.Int32()), 10))
		case pq.Int64:
			out.strs = append(out.strs, strconv.FormatInt(v.Int64(), 10))
		default:
			out.strs = append(out.strs, string(v.ByteArray()))
		}
	}
	return nil
}

// isDecimal reports whether a leaf holds DECIMAL values (scaled integers or
// bytes, which read as plain numbers would have the wrong scale).
func isDecimal(n pq.Node) bool {
	if lt := n.Type().LogicalType(); lt != nil {
		if _, ok := lt.Value.(*format.DecimalType); ok {
			return true
		}
	}
	ct := n.Type().ConvertedType()
	return ct != nil && *ct == deprecated.Decimal
}
