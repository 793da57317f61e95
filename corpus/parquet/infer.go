package parquet

import (
	"fmt"
	"os"
	"strings"

	"github.com/batchprep/batchprep/corpus"
	pq "github.com/parquet-go/parquet-go"
)

// Inference is what Infer finds in a file: its streams and, when they are
// inferred from the schema, the columns that are not streams and why.
type Inference struct {
	Streams []corpus.Stream
	// Exact: the streams are the ones Writer recorded (StreamsKey), not
	// inferred, and LeftOut is empty.
	Exact bool
	// LeftOut lists, in schema order, every top-level column that is
	// neither a stream, nor the id column, nor a sparse stream's values
	// column, with the reason: the message Open gives when the column is
	// named as a stream, or why its shape is not one inference takes.
	LeftOut []LeftOut
}

// LeftOut is a column inference did not take as a stream.
type LeftOut struct {
	Column string
	Reason string
}

// InferStreams is Infer without the columns left out.
func InferStreams(path string) (streams []corpus.Stream, exact bool, err error) {
	inf, err := Infer(path)
	if err != nil {
		return nil, false, err
	}
	return inf.Streams, inf.Exact, nil
}

// InferStreamsBlob is InferStreams of the Parquet data in f.
func InferStreamsBlob(f corpus.Blob, path string) (streams []corpus.Stream, exact bool, err error) {
	inf, err := InferBlob(f, path)
	if err != nil {
		return nil, false, err
	}
	return inf.Streams, inf.Exact, nil
}

// Infer names the streams of the Parquet corpus at path. A file written by
// Writer records them (StreamsKey) and they are returned as written
// (Exact). Otherwise every top-level column of numbers nested one or two
// lists deep is a stream, except "id" and a sparse stream's values column:
// integers make a sparse stream whose dimension is the largest index + 1,
// other numbers a dense stream whose dimension is the longest inner list
// (1 for a flat list). Those dimensions are lower bounds: the largest seen
// in this file. Other columns are listed in LeftOut with the reason; when
// no column is a stream, the error lists them too.
func Infer(path string) (inf *Inference, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("parquet: %w", err)
	}
	defer f.Close()
	return InferBlob(f, path)
}

// InferBlob is Infer of the Parquet data in f (a local file or an
// object) that path names. Only the footer and the candidate columns are
// read.
func InferBlob(f corpus.Blob, path string) (inf *Inference, err error) {
	defer func() {
		if p := recover(); p != nil {
			inf, err = nil, damaged(path, -1, -1)
		}
	}()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("parquet: %w", err)
	}
	if err := checkFrame(f, st.Size(), path, ErrNotParquet); err != nil {
		return nil, err
	}
	pf, err := pq.OpenFile(f, st.Size(), pq.SkipBloomFilters(true))
	if err != nil {
		return nil, &Error{File: path, RowGroup: -1, Row: -1, Msg: "not a readable Parquet file", Err: ErrNotParquet}
	}
	inf = &Inference{}
	if v, ok := pf.Lookup(StreamsKey); ok {
		for _, flag := range strings.Fields(v) {
			s, err := parseStreamFlag(flag)
			if err != nil {
				return nil, &Error{File: path, RowGroup: -1, Row: -1, Msg: fmt.Sprintf("metadata %s: %v", StreamsKey, err), Err: ErrColumnType}
			}
			inf.Streams = append(inf.Streams, s)
		}
		inf.Exact = true
		return inf, nil
	}
	shapes, leftOut := candidates(pf.Schema(), path)
	inf.LeftOut = leftOut
	first := []int64{0}
	for _, rg := range pf.RowGroups() {
		first = append(first, first[len(first)-1]+rg.NumRows())
	}
	if err := checkCodecs(pf, path, first, shapes); err != nil {
		return nil, err
	}
	for _, sh := range shapes {
		dim, err := inferDim(pf, path, sh)
		if err != nil {
			return nil, err
		}
		inf.Streams = append(inf.Streams, corpus.Stream{Name: sh.name, Dim: dim, Sparse: isInt(sh.kind)})
	}
	if len(inf.Streams) == 0 {
		msg := "no column holds lists of numbers; cannot infer streams"
		if len(leftOut) > 0 {
			msg += "; the columns left out:"
			for _, l := range leftOut {
				msg += fmt.Sprintf("\n  column %q %s", l.Column, l.Reason)
			}
		}
		return nil, &Error{File: path, RowGroup: -1, Row: -1, Msg: msg, Err: ErrMissingColumn}
	}
	return inf, nil
}

// candidates sorts the top-level columns of s into the shapes of streams
// and the columns left out with their reasons. A column NAME_values is a
// sparse stream's values when NAME is a candidate of integers, and a
// candidate (or left out) like any other column otherwise.
func candidates(s *pq.Schema, path string) (shapes []*shape, leftOut []LeftOut) {
	type col struct {
		sh     *shape
		reason string
	}
	cols := map[string]col{}
	var names []string
	for _, fl := range s.Fields() {
		name := fl.Name()
		if name == IDColumn {
			continue
		}
		names = append(names, name)
		sh, err := findShape(s, path, name)
		switch {
		case err != nil:
			msg := err.Error()
			if e, ok := err.(*Error); ok {
				msg = e.Msg
			}
			cols[name] = col{reason: msg}
		case !isNumber(sh.kind):
			cols[name] = col{reason: fmt.Sprintf("holds %s; want numbers (float, double, int32 or int64)", typeName(sh.kind))}
		case sh.depth == 0:
			cols[name] = col{reason: "holds one number per row, not a list (named as a stream, it is read as one sample per sequence)"}
		default:
			cols[name] = col{sh: sh}
		}
	}
	for _, name := range names {
		c := cols[name]
		if base, ok := strings.CutSuffix(name, ValuesSuffix); ok {
			if b, found := cols[base]; found && b.sh != nil && isInt(b.sh.kind) {
				continue // the values of sparse stream base
			}
		}
		if c.sh != nil {
			shapes = append(shapes, c.sh)
		} else {
			leftOut = append(leftOut, LeftOut{Column: name, Reason: c.reason})
		}
	}
	return shapes, leftOut
}

// inferDim reads column sh in every row group and returns its dimension:
// the largest index + 1 for integers, the longest inner list for other
// numbers (1 for a flat list).
func inferDim(pf *pq.File, path string, sh *shape) (int, error) {
	dim := 1
	var groupFirst int64
	role := asFloats
	if isInt(sh.kind) {
		role = asInts
	}
	for g, rg := range pf.RowGroups() {
		cr, err := newColReader(path, rg, g, groupFirst, groupFirst, sh, role, nil)
		if err != nil {
			return 0, err
		}
		var d colData
		err = cr.next(int(rg.NumRows()), &d)
		cr.close()
		if err != nil {
			return 0, err
		}
		for _, x := range d.ints {
			if x >= int64(dim) && x < 1<<31-1 {
				dim = int(x) + 1
			}
		}
		for _, n := range d.itemLen {
			dim = max(dim, int(n))
		}
		groupFirst += rg.NumRows()
	}
	return dim, nil
}

// parseStreamFlag parses NAME:DIM[:sparse], as Writer records it.
func parseStreamFlag(s string) (corpus.Stream, error) {
	var st corpus.Stream
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return st, fmt.Errorf("stream %q: want NAME:DIM[:sparse]", s)
	}
	st.Name = parts[0]
	if _, err := fmt.Sscan(parts[1], &st.Dim); err != nil || st.Dim < 1 {
		return st, fmt.Errorf("stream %q: bad dimension", s)
	}
	st.Sparse = len(parts) == 3 && parts[2] == "sparse"
	return st, nil
}
