package parquet

import (
	"github.com/batchprep/batchprep/corpus"
	"github.com/parquet-go/parquet-go/format"
)

// checkPages reads the header of every page of the configured columns and
// checks each against its column chunk's totals in the footer (walkPages).
// It reads only the headers: one small read per page.
func (r *Reader) checkPages() error {
	md := r.pf.Metadata()
	cols := r.neededCols()
	st, err := r.f.Stat()
	if err != nil {
		return err
	}
	r.hintColumns(md, cols, st.Size())
	for g := range md.RowGroups {
		for _, sh := range cols {
			if sh.col >= len(md.RowGroups[g].Columns) {
				return damaged(r.path, g, r.first[g])
			}
			m := &md.RowGroups[g].Columns[sh.col].MetaData
			start, end := chunkSpan(m)
			if start < 0 || m.TotalCompressedSize < 0 || end > st.Size() || m.TotalUncompressedSize < 0 ||
				!r.walkPages(m, start, end) {
				return r.damagedColumn(g, sh)
			}
		}
	}
	return nil
}

// neededCols are the columns the configured streams (and ids) read.
func (r *Reader) neededCols() []*shape {
	var cols []*shape
	for _, c := range r.cols {
		cols = append(cols, c.main)
		if c.vals != nil {
			cols = append(cols, c.vals)
		}
	}
	if r.id != nil {
		cols = append(cols, r.id)
	}
	return cols
}

// chunkSpan is the byte range [start, end) of a column chunk: from its
// dictionary page, when it has one, over its compressed size.
func chunkSpan(m *format.ColumnMetaData) (start, end int64) {
	start = m.DataPageOffset
	if m.DictionaryPageOffset > 0 && m.DictionaryPageOffset < start {
		start = m.DictionaryPageOffset
	}
	return start, start + m.TotalCompressedSize
}

// hintColumns asks an object (a corpus.Hinter) for the column chunks of
// cols in every row group, adjacent ones as one range, before the page
// headers and the counts read them: those reads then wait for a few
// concurrent fetches instead of a round trip per block, one after another.
func (r *Reader) hintColumns(md *format.FileMetaData, cols []*shape, size int64) {
	h, ok := r.f.(corpus.Hinter)
	if !ok {
		return
	}
	var lo, hi int64 = -1, -1
	for g := range md.RowGroups {
		for _, sh := range cols {
			if sh.col >= len(md.RowGroups[g].Columns) {
				continue // checkPages reports it
			}
			start, end := chunkSpan(&md.RowGroups[g].Columns[sh.col].MetaData)
			if start < 0 || end > size || start >= end {
				continue
			}
			if start != hi {
				if hi > lo {
					h.Hint(lo, hi-lo)
				}
				lo = start
			}
			hi = end
		}
	}
	if hi > lo {
		h.Hint(lo, hi-lo)
	}
}

func (r *Reader) damagedColumn(g int, sh *shape) error {
	return &Error{File: r.path, RowGroup: g, Row: r.first[g], Column: sh.name, Msg: "a damaged Parquet file: a page header does not fit its column chunk", Err: ErrDamaged}
}
