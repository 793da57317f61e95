package parquet

import (
	"bufio"
	"io"

	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// checkPages reads the header of every page of the configured columns and
// checks each against its column chunk's totals in the footer: a page may
// neither extend past its chunk nor be larger, uncompressed, than the whole
// chunk. The Parquet library allocates a page's declared uncompressed size
// before it can find the page damaged, so a damaged header could otherwise
// exhaust memory instead of failing (FuzzReader found one). It reads only
// the headers: one small read per page. Before them, it refuses a column
// compressed with a codec that has no decoder (checkCodecs).
func (r *Reader) checkPages() error {
	md := r.pf.Metadata()
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
	if err := checkCodecs(r.pf, r.path, r.first, cols); err != nil {
		return err
	}
	st, err := r.f.Stat()
	if err != nil {
		return err
	}
	br := bufio.NewReaderSize(nil, 512)
	var proto thrift.CompactProtocol
	for g := range md.RowGroups {
		for _, sh := range cols {
			if sh.col >= len(md.RowGroups[g].Columns) {
				return damaged(r.path, g, r.first[g])
			}
			m := &md.RowGroups[g].Columns[sh.col].MetaData
			start := m.DataPageOffset
			if m.DictionaryPageOffset > 0 && m.DictionaryPageOffset < start {
				start = m.DictionaryPageOffset
			}
			end := start + m.TotalCompressedSize
			if start < 0 || m.TotalCompressedSize < 0 || end > st.Size() || m.TotalUncompressedSize < 0 {
				return r.damagedColumn(g, sh)
			}
			for pos := start; pos < end; {
				sec := io.NewSectionReader(r.f, pos, end-pos)
				br.Reset(sec)
				var h format.PageHeader
				if err := thrift.NewDecoder(proto.NewReader(br)).Decode(&h); err != nil {
					return r.damagedColumn(g, sh)
				}
				read, _ := sec.Seek(0, io.SeekCurrent)
				next := pos + read - int64(br.Buffered()) + int64(h.CompressedPageSize)
				if h.CompressedPageSize < 0 || h.UncompressedPageSize < 0 || next > end ||
					int64(h.UncompressedPageSize) > m.TotalUncompressedSize {
					return r.damagedColumn(g, sh)
				}
				pos = next
			}
		}
	}
	return nil
}

func (r *Reader) damagedColumn(g int, sh *shape) error {
	return &Error{File: r.path, RowGroup: g, Row: r.first[g], Column: sh.name, Msg: "a damaged Parquet file: a page header does not fit its column chunk", Err: ErrDamaged}
}
