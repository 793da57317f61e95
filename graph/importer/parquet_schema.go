package importer

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/batchprep/batchprep/internal/pqframe"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// openParquet opens a Parquet file's footer, turning the library's panics
// on malformed input into errors.
func openParquet(f io.ReaderAt, size int64, name string) (pf *parquet.File, err error) {
	// Check the frame first: the library trusts the footer length it
	// reads, and would allocate whatever a corrupt one claims.
	if err := pqframe.Check(f, size); err != nil {
		var fe *pqframe.Error
		switch {
		case !errors.As(err, &fe):
			return nil, fmt.Errorf("importer: %s: %w", name, err)
		case fe.Footer:
			return nil, fmt.Errorf("importer: %s: not a readable Parquet file (%s)", name, fe.Msg)
		default:
			return nil, fmt.Errorf("importer: %s: not a Parquet file (%s)", name, fe.Msg)
		}
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("importer: %s: not a readable Parquet file (its footer cannot be decoded)", name)
		}
	}()
	pf, err = parquet.OpenFile(f, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true), parquet.ReadBufferSize(64<<10))
	if err != nil {
		return nil, fmt.Errorf("importer: %s: not a readable Parquet file (its footer cannot be decoded)", name)
	}
	return pf, nil
}

// parquetColumns finds the chosen columns in the file's schema and checks
// their types.
func (p *parser) parquetColumns(pf *parquet.File, name string) ([roles]*pqCol, error) {
	var cols [roles]*pqCol
	o := p.opts
	top := pf.Root().Columns()
	var names []string
	for _, c := range top {
		names = append(names, c.Name())
	}
	list := strings.Join(names, ", ")
	for role, ch := range [roles]struct {
		idx int
		nm  string
	}{{}, {o.LhsCol, o.LhsName}, {o.RhsCol, o.RhsName}, {o.RelCol, o.RelName}, {o.WeightCol, o.WeightName}} {
		if role == 0 || (ch.nm == "" && ch.idx < 0) {
			continue
		}
		var c *parquet.Column
		if ch.nm != "" {
			c = pf.Root().Column(ch.nm)
			if c == nil {
				return cols, fmt.Errorf("importer: %s: no column %q for the %s (the file's columns: %s)", name, ch.nm, roleWhat[role], list)
			}
		} else {
			if ch.idx >= len(top) {
				return cols, fmt.Errorf("importer: %s: the %s is column %d but the file has %d columns (%s)", name, roleWhat[role], ch.idx, len(top), list)
			}
			c = top[ch.idx]
		}
		col, err := columnOf(c, role)
		if err != nil {
			return cols, fmt.Errorf("importer: %s: %w", name, err)
		}
		for r, other := range cols {
			if other != nil && other.leaf == col.leaf {
				return cols, fmt.Errorf("importer: %s: the %s and %s are both column %q", name, roleWhat[r], roleWhat[role], col.name)
			}
		}
		cols[role] = col
	}
	return cols, nil
}

// columnOf checks that c can hold role's values.
func columnOf(c *parquet.Column, role int) (*pqCol, error) {
	col := &pqCol{role: roleNames[role], name: c.Name()}
	want := "integers or strings"
	if role == roleWeight {
		want = "numbers"
	}
	if !c.Leaf() || c.Repeated() || c.MaxRepetitionLevel() > 0 {
		return nil, fmt.Errorf("column %q is a list or a group: the %s needs a column of %s", col.name, roleWhat[role], want)
	}
	t := c.Type()
	var lv format.LogicalTypeValue
	if lt := t.LogicalType(); lt != nil {
		lv = lt.Value
	}
	it, isInt := lv.(*format.IntType)
	intLogical := lv == nil || isInt
	k, ok := kindOf(t)
	if !ok {
		return nil, fmt.Errorf("column %q is a value column annotated as %s: the %s needs a column of %s", col.name, logicalName(lv), roleWhat[role], want)
	}
	switch k {
	case parquet.Int32:
		col.kind = kindInt32
	case parquet.Int64:
		col.kind = kindInt64
	case parquet.ByteArray:
		col.kind = kindBytes
	case parquet.Float:
		col.kind = kindFloat
	case parquet.Double:
		col.kind = kindDouble
	default:
		return nil, fmt.Errorf("column %q holds %s values: the %s needs a column of %s", col.name, kindName(k), roleWhat[role], want)
	}
	if isInt && !it.IsSigned {
		col.unsigned = true
	}
	switch {
	case (col.kind == kindInt32 || col.kind == kindInt64) && !intLogical:
		return nil, fmt.Errorf("column %q holds %s values: the %s needs a column of %s", col.name, logicalName(lv), roleWhat[role], want)
	case role != roleWeight && (col.kind == kindFloat || col.kind == kindDouble):
		return nil, fmt.Errorf("column %q holds floating-point numbers: the %s needs a column of integers or strings", col.name, roleWhat[role])
	case role == roleWeight && col.kind == kindBytes:
		return nil, fmt.Errorf("column %q holds strings: the weight needs a column of numbers", col.name)
	}
	col.leaf = c.Index()
	col.maxDef = byte(c.MaxDefinitionLevel())
	return col, nil
}

// kindOf returns t's physical kind. parquet-go panics when asked the kind
// of a type that only groups have (a leaf annotated LIST or MAP, which a
// corrupt or hand-made footer can declare): ok is then false.
func kindOf(t parquet.Type) (k parquet.Kind, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return t.Kind(), true
}

func kindName(k parquet.Kind) string {
	switch k {
	case parquet.Boolean:
		return "boolean"
	case parquet.Int96:
		return "INT96 (timestamp)"
	case parquet.FixedLenByteArray:
		return "fixed-length binary"
	}
	return strings.ToLower(k.String())
}

func logicalName(lv format.LogicalTypeValue) string {
	switch lv.(type) {
	case *format.DateType:
		return "date"
	case *format.TimeType:
		return "time"
	case *format.TimestampType:
		return "timestamp"
	case *format.DecimalType:
		return "decimal"
	case *format.ListType:
		return "list"
	case *format.MapType:
		return "map"
	}
	return "non-integer"
}

// ParquetColumns returns the names of a Parquet file's top-level columns.
// The command line uses it to pick the rhs column of a two-column file.
func ParquetColumns(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("importer: %w", err)
	}
	defer f.Close()
	return ParquetColumnsOf(f, path)
}

// ParquetColumnsOf is ParquetColumns of the edge file in, which path
// names; only its footer is read.
func ParquetColumnsOf(in Input, path string) ([]string, error) {
	fi, err := in.Stat()
	if err != nil {
		return nil, fmt.Errorf("importer: %s: %w", path, err)
	}
	pf, err := openParquet(in, fi.Size(), path)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, c := range pf.Root().Columns() {
		names = append(names, c.Name())
	}
	return names, nil
}
