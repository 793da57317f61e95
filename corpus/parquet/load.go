package parquet

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"slices"
	"sort"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/internal/plural"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// A load reads, of each column it needs, the pages that hold its rows, as
// the file's offset index locates them (the whole column chunk without
// one, with one that does not fit it, or when its pages hold more rows
// than a chunk). Those byte ranges (spans) are
// hinted to an object at once, and the library reads them through a
// clipReader, so that no read runs past a span: an object with exact
// reads fetches the spans and nothing else (invariant 6).

// span is bytes [lo, hi) of the file.
type span struct{ lo, hi int64 }

// colSpan is a span of one column chunk's pages.
type colSpan struct {
	span
	sh *shape
	m  *format.ColumnMetaData
}

// load is how a chunk's load reads a row group's part: through src, and
// for the columns in endsPage, whose last row ends a page, without reading
// into the next page (colReader.endAtPage).
type load struct {
	src      io.ReaderAt
	endsPage map[int]bool
}

// loadSpans returns the spans of each column that rows [from, end) of row
// group g need, and all of them sorted and merged where they touch. A
// column chunk the footer places outside the file has none (checkSpans
// and the library report it).
func (r *Reader) loadSpans(g int, from, end int64) (cols []colSpan, merged []span, endsPage map[int]bool) {
	md := r.pf.Metadata()
	endsPage = map[int]bool{}
	for _, sh := range r.neededCols() {
		if sh.col >= len(md.RowGroups[g].Columns) {
			continue
		}
		m := &md.RowGroups[g].Columns[sh.col].MetaData
		lo, hi := chunkSpan(m)
		if lo < 0 || hi > r.fileSize || lo >= hi {
			continue
		}
		if p, first, ends, ok := r.pageRange(g, sh.col, lo, hi, from-r.first[g], end-r.first[g]); ok {
			endsPage[sh.col] = ends
			if first > lo { // a dictionary page before the data pages
				cols = append(cols, colSpan{span{lo, first}, sh, m})
			}
			lo, hi = p.lo, p.hi
		}
		cols = append(cols, colSpan{span{lo, hi}, sh, m})
	}
	for _, c := range cols {
		merged = append(merged, c.span)
	}
	slices.SortFunc(merged, func(a, b span) int { return cmp.Compare(a.lo, b.lo) })
	out := merged[:0]
	for _, s := range merged {
		if n := len(out); n > 0 && s.lo <= out[n-1].hi {
			out[n-1].hi = max(out[n-1].hi, s.hi)
			continue
		}
		out = append(out, s)
	}
	return cols, out, endsPage
}

// pageRange returns the bytes of the data pages of column col in row group
// g that hold the group's rows [from, end), where the first data page
// starts, and whether row end starts a page, from the offset index, when
// the file has one for the column and its pages lie in order inside the
// column chunk [lo, hi).
func (r *Reader) pageRange(g, col int, lo, hi, from, end int64) (p span, first int64, ends, ok bool) {
	oi := r.pf.OffsetIndexes()
	ncols := len(r.pf.Metadata().RowGroups[g].Columns)
	if len(oi) != len(r.pf.Metadata().RowGroups)*ncols {
		return span{}, 0, false, false
	}
	pages := oi[g*ncols+col].PageLocations
	if len(pages) == 0 || pages[0].FirstRowIndex != 0 {
		return span{}, 0, false, false
	}
	at := lo
	for i, pl := range pages {
		if pl.Offset < at || pl.CompressedPageSize <= 0 || pl.Offset+int64(pl.CompressedPageSize) > hi ||
			i > 0 && pl.FirstRowIndex <= pages[i-1].FirstRowIndex {
			return span{}, 0, false, false
		}
		at = pl.Offset + int64(pl.CompressedPageSize)
	}
	if r.pagesOutgrowChunks(g, len(pages)) {
		// Its pages hold more rows than a chunk: the loads of several
		// chunks share each, so one fetch of the whole column chunk
		// serves them all (a small column, or another writer's pages).
		return span{}, 0, false, false
	}
	a := sort.Search(len(pages), func(i int) bool { return pages[i].FirstRowIndex > from }) - 1
	b := sort.Search(len(pages), func(i int) bool { return pages[i].FirstRowIndex >= end }) - 1
	ends = b+1 < len(pages) && pages[b+1].FirstRowIndex == end
	return span{pages[a].Offset, pages[b].Offset + int64(pages[b].CompressedPageSize)}, pages[0].Offset, ends, true
}

// pagesOutgrowChunks tells whether the n pages of a column of row group g
// hold more rows each, on average, than the corpus's chunks do.
func (r *Reader) pagesOutgrowChunks(g, n int) bool {
	rows := r.first[g+1] - r.first[g]
	return rows*int64(r.layout.NumChunks()) > int64(n)*int64(r.layout.NumSequences())
}

// checkSpans checks the header of every page in the column spans of row
// group g (walkPages), as checkPages does for a whole file.
func (r *Reader) checkSpans(g int, cols []colSpan) error {
	md := r.pf.Metadata()
	for _, sh := range r.neededCols() {
		if sh.col >= len(md.RowGroups[g].Columns) {
			return damaged(r.path, g, r.first[g])
		}
		m := &md.RowGroups[g].Columns[sh.col].MetaData
		lo, hi := chunkSpan(m)
		if lo < 0 || m.TotalCompressedSize < 0 || hi > r.fileSize || m.TotalUncompressedSize < 0 {
			return r.damagedColumn(g, sh)
		}
	}
	for _, c := range cols {
		if !r.walkPages(c.m, c.lo, c.hi) {
			return r.damagedColumn(g, c.sh)
		}
	}
	return nil
}

// walkPages reads the page headers from lo on and reports whether each
// fits the column chunk m and the last one ends at hi: a page may neither
// run past its chunk nor be larger, uncompressed, than the whole chunk.
// The Parquet library allocates a page's declared uncompressed size before
// it can find the page damaged, so a damaged header could otherwise
// exhaust memory instead of failing (FuzzReader found one).
func (r *Reader) walkPages(m *format.ColumnMetaData, lo, hi int64) bool {
	br := bufio.NewReaderSize(nil, 512)
	var proto thrift.CompactProtocol
	for pos := lo; pos < hi; {
		sec := io.NewSectionReader(r.f, pos, hi-pos)
		br.Reset(sec)
		var h format.PageHeader
		if err := thrift.NewDecoder(proto.NewReader(br)).Decode(&h); err != nil {
			return false
		}
		read, _ := sec.Seek(0, io.SeekCurrent)
		next := pos + read - int64(br.Buffered()) + int64(h.CompressedPageSize)
		if h.CompressedPageSize < 0 || h.UncompressedPageSize < 0 || next > hi ||
			int64(h.UncompressedPageSize) > m.TotalUncompressedSize {
			return false
		}
		pos = next
	}
	return true
}

// clipReader reads the file for the library: a read that starts inside a
// span ends at the span's end (a short read, which the library's buffered
// page reader takes as it takes any), so it fetches nothing past it.
type clipReader struct {
	f     io.ReaderAt
	spans []span
}

func (c clipReader) ReadAt(p []byte, off int64) (int, error) {
	i := sort.Search(len(c.spans), func(i int) bool { return c.spans[i].hi > off })
	if i < len(c.spans) && c.spans[i].lo <= off && off+int64(len(p)) > c.spans[i].hi {
		p = p[:c.spans[i].hi-off]
	}
	return c.f.ReadAt(p, off)
}

// Prefetch implements corpus.Prefetcher: the pages chunk c's load reads
// start on their way before the load, so that a window's loads wait for
// fetches made many at once (an object's; a local file is left to the
// kernel's readahead).
func (r *Reader) Prefetch(c int) {
	if _, ok := r.f.(corpus.Hinter); !ok {
		return
	}
	a, b := r.layout.Chunk(c)
	for row := int64(a); row < int64(b); {
		g := r.groupOf(row)
		end := min(int64(b), r.first[g+1])
		cols, _, _ := r.loadSpans(g, row, end)
		r.hint(cols)
		row = end
	}
}

// hint asks an object for the column spans cols before they are read,
// each column's own (its dictionary and data pages as one range): one
// load's spans of two columns are not merged, so that a column's range is
// the same in every load that reads it (a whole column chunk), which an
// object then fetches once.
func (r *Reader) hint(cols []colSpan) {
	h, ok := r.f.(corpus.Hinter)
	if !ok {
		return
	}
	for i := 0; i < len(cols); {
		s := cols[i].span
		for i++; i < len(cols) && cols[i].sh == cols[i-1].sh && cols[i].lo == s.hi; i++ {
			s.hi = cols[i].hi
		}
		h.Hint(s.lo, s.hi-s.lo)
	}
}

// checkCounts checks that the rows of ch, file rows from first on, have
// the sample and label counts the layout gives them: a counts file that
// does not match the rows (invariant 6) is found at the first chunk that
// differs, not used.
func (r *Reader) checkCounts(ch *corpus.Chunk, first int64) error {
	scratch := make([]int64, len(r.cfg.Streams))
	for i := range len(ch.IDs) {
		s, lab, _ := r.count(ch, i, scratch)
		row := first + int64(i)
		var msg string
		switch {
		case s != r.layout.Samples[row]:
			msg = fmt.Sprintf("%s, but the index says %d", plural.Count(s, "sample"), r.layout.Samples[row])
		case r.layout.Labels != nil && lab != r.layout.Labels[row]:
			msg = fmt.Sprintf("%s, but the index says %d", plural.Count(lab, "label"), r.layout.Labels[row])
		default:
			continue
		}
		return &Error{File: r.path, RowGroup: r.groupOf(row), Row: row, Msg: msg + ": the index does not match the file", Err: ErrDamaged}
	}
	return nil
}
