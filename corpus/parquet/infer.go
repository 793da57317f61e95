package parquet

import (
	"fmt"
	"os"
	"strings"

	"github.com/batchprep/batchprep/corpus"
	pq "github.com/parquet-go/parquet-go"
)

// InferStreams names the streams of the Parquet corpus at path. A file
// written by Writer records them (StreamsKey) and they are returned as
// written (exact is true). Otherwise every top-level column of numbers
// nested one or two lists deep is a stream, except "id" and a sparse
// stream's values column: integers make a sparse stream whose dimension is
// the largest index + 1, other numbers a dense stream whose dimension is
// the longest inner list (1 for a flat list). Those dimensions are lower
// bounds: the largest seen in this file.
func InferStreams(path string) (streams []corpus.Stream, exact bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, fmt.Errorf("pqcorpus: %w", err)
	}
	defer f.Close()
	defer func() {
		if p := recover(); p != nil {
			streams, exact, err = nil, false, damaged(path, -1, -1)
		}
	}()
	st, err := f.Stat()
	if err != nil {
		return nil, false, fmt.Errorf("pqcorpus: %w", err)
	}
	pf, err := pq.OpenFile(f, st.Size(), pq.SkipBloomFilters(true))
	if err != nil {
		return nil, false, &Error{File: path, RowGroup: -1, Row: -1, Msg: "not a readable Parquet file", Err: ErrNotParquet}
	}
	if v, ok := pf.Lookup(StreamsKey); ok {
		for _, flag := range strings.Fields(v) {
			s, err := parseStreamFlag(flag)
			if err != nil {
				return nil, false, &Error{File: path, RowGroup: -1, Row: -1, Msg: fmt.Sprintf("metadata %s: %v", StreamsKey, err), Err: ErrColumnType}
			}
			streams = append(streams, s)
		}
		return streams, true, nil
	}
	schema := pf.Schema()
	var shapes []*shape
	for _, fl := range schema.Fields() {
		name := fl.Name()
		if name == IDColumn {
			continue
		}
		sh, err := findShape(schema, path, name)
		if err != nil || sh.depth == 0 || !isNumber(sh.kind) {
			continue
		}
		if base, ok := strings.CutSuffix(name, ValuesSuffix); ok && hasField(schema, base) {
			continue
		}
		shapes = append(shapes, sh)
	}
	for _, sh := range shapes {
		dim := 1
		var groupFirst int64
		for g, rg := range pf.RowGroups() {
			role := asFloats
			if isInt(sh.kind) {
				role = asInts
			}
			cr, err := newColReader(path, rg, g, groupFirst, groupFirst, sh, role)
			if err != nil {
				return nil, false, err
			}
			var d colData
			err = cr.next(int(rg.NumRows()), &d)
			cr.close()
			if err != nil {
				return nil, false, err
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
		streams = append(streams, corpus.Stream{Name: sh.name, Dim: dim, Sparse: isInt(sh.kind)})
	}
	if len(streams) == 0 {
		return nil, false, &Error{File: path, RowGroup: -1, Row: -1, Msg: "no column holds lists of numbers; cannot infer streams", Err: ErrMissingColumn}
	}
	return streams, false, nil
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
