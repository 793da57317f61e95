package importer

import (
	"bytes"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// maxPageBytes bounds a page's uncompressed size (writers cut pages at
// about 1 MiB; a corrupt header may claim anything).
const maxPageBytes = 1 << 30

// maxHeaderBytes bounds a page header (statistics included).
const maxHeaderBytes = 16 << 20

// checkPages walks the page headers of a column chunk before the library
// reads it: the chunk must lie inside the file, every page inside the
// chunk and every header field inside the header, so that a corrupt header
// cannot make the reader allocate what it claims (the library sizes its
// buffers from the headers before reading). Headers are decoded from
// bytes, never from a stream, for the same reason. A chunk compressed
// with a codec that has no decoder is refused first (checkCodec).
func checkPages(r io.ReaderAt, size int64, md *format.ColumnMetaData, name string) error {
	if err := checkCodec(md, name); err != nil {
		return err
	}
	start := md.DataPageOffset
	if md.DictionaryPageOffset != 0 {
		start = md.DictionaryPageOffset
	}
	n := md.TotalCompressedSize
	if start < 0 || n < 0 || start > size || n > size-start {
		return fmt.Errorf("column %q: its data (bytes %d to %d) lies outside the %d-byte file: %w", name, start, start+n, size, errCorrupt)
	}
	var proto thrift.CompactProtocol
	buf := make([]byte, 4096)
	for pos := int64(0); pos < n; {
		left := n - pos
		var h format.PageHeader
		hl := int64(-1)
		for want := int64(4096); ; want *= 16 {
			m := min(want, left)
			if int64(cap(buf)) < m {
				buf = make([]byte, m)
			}
			b := buf[:m]
			if _, err := r.ReadAt(b, start+pos); err != nil && err != io.EOF {
				return fmt.Errorf("column %q: %w", name, err)
			}
			br := proto.NewReaderFromBytes(b)
			h = format.PageHeader{}
			if err := thrift.NewDecoder(br).Decode(&h); err == nil {
				hl = m - int64(br.Reader().(*bytes.Reader).Len())
				break
			}
			if m == left || want >= maxHeaderBytes {
				break
			}
		}
		if hl < 0 {
			return fmt.Errorf("column %q: unreadable page header at byte %d: %w", name, start+pos, errCorrupt)
		}
		left -= hl
		if h.CompressedPageSize < 0 || int64(h.CompressedPageSize) > left || h.UncompressedPageSize < 0 || h.UncompressedPageSize > maxPageBytes {
			return fmt.Errorf("column %q: a page header at byte %d claims %d bytes (%d uncompressed) with %d left in the column chunk: %w",
				name, start+pos, h.CompressedPageSize, h.UncompressedPageSize, left, errCorrupt)
		}
		pos += hl + int64(h.CompressedPageSize)
	}
	return nil
}
