package importer

import (
	"fmt"

	// The LZ4_RAW decoder of the Parquet library loses pages that compress
	// less than threefold; pqlz4 replaces it for the whole process.
	_ "github.com/batchprep/batchprep/internal/pqlz4"
	"github.com/parquet-go/parquet-go/format"
)

// Every codec DuckDB writes is readable: uncompressed, snappy, gzip,
// brotli, zstd and LZ4_RAW (DuckDB's COMPRESSION lz4 and lz4_raw). The
// format's two others, LZO and the Hadoop-framed LZ4 it deprecated, have
// no decoder here: a column chunk compressed with either is refused by
// name before its pages are read (checkPages).

// checkCodec refuses a column chunk whose codec has no decoder.
func checkCodec(md *format.ColumnMetaData, name string) error {
	switch md.Codec {
	case format.Uncompressed, format.Snappy, format.Gzip, format.Brotli, format.Zstd, format.Lz4Raw:
		return nil
	}
	return fmt.Errorf("column %q is compressed with %s, which batchprep cannot decode (it reads uncompressed, snappy, gzip, brotli, zstd and lz4_raw): write the file with one of those", name, md.Codec)
}
