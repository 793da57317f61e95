package parquet

import (
	"fmt"

	// The LZ4_RAW decoder of the Parquet library loses pages that compress
	// less than threefold; pqlz4 replaces it for the whole process.
	_ "github.com/batchprep/batchprep/internal/pqlz4"
	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// Every codec DuckDB writes is readable: uncompressed, snappy, gzip,
// brotli, zstd and LZ4_RAW (DuckDB's COMPRESSION lz4 and lz4_raw). The
// format's two others, LZO and the Hadoop-framed LZ4 it deprecated, have
// no decoder here: a column compressed with either is refused by name
// before any page is read.

// readableCodec tells whether pages compressed with c can be decoded.
func readableCodec(c format.CompressionCodec) bool {
	switch c {
	case format.Uncompressed, format.Snappy, format.Gzip, format.Brotli, format.Zstd, format.Lz4Raw:
		return true
	}
	return false
}

// checkCodecs refuses, naming the column, a column of cols compressed
// with a codec readableCodec rejects in any row group of pf.
func checkCodecs(pf *pq.File, path string, first []int64, cols []*shape) error {
	md := pf.Metadata()
	for g := range md.RowGroups {
		for _, sh := range cols {
			if sh.col >= len(md.RowGroups[g].Columns) {
				return damaged(path, g, first[g])
			}
			if c := md.RowGroups[g].Columns[sh.col].MetaData.Codec; !readableCodec(c) {
				return &Error{File: path, RowGroup: g, Row: first[g], Column: sh.name, Err: ErrCodec,
					Msg: fmt.Sprintf("compressed with %s, which batchprep cannot decode (it reads uncompressed, snappy, gzip, brotli, zstd and lz4_raw): write the file with one of those", c)}
			}
		}
	}
	return nil
}
