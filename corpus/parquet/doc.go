// Package parquet reads and writes sequence corpora stored in Parquet: one
// row per sequence, one column (or two) per stream. A Reader is a
// corpus.Source, so the randomizers, the minibatch source, workers, state
// files and the server read it as they read a CTF file.
//
// Schema mapping (docs/formats-parquet-corpus.md has the table):
//
//   - A dense stream NAME of dimension D is a column NAME holding, per row,
//     either a list of lists of numbers (one inner list of exactly D values
//     per sample) or a flat list of numbers whose length is a multiple of D
//     (D values per sample, the shape of Arrow's fixed-size list).
//   - A sparse stream NAME of dimension D is a column NAME of integer
//     indices: a list with one index per sample (a one-hot stream: every
//     value is 1), or a list of lists (one inner list per sample, holding
//     that sample's indices in file order). Values other than 1 are in an
//     optional column NAME_values of the same shape, holding numbers.
//   - The optional column "id" (a string or an integer, not a configured
//     stream) holds each sequence's id; without it the ids are the 0-based
//     row numbers.
//
// Numbers may be stored as float, double, int32 or int64 (they are read as
// float32); indices as int32 or int64. Pages may be uncompressed or
// compressed with snappy, gzip, brotli, zstd or LZ4_RAW (what DuckDB's
// COMPRESSION lz4 writes), in data pages of either format version; a
// column compressed with LZO or the deprecated Hadoop LZ4 is refused by
// name (ErrCodec). Any list encoding Parquet allows is
// accepted (three-level LIST, two-level legacy lists; required or optional
// at any level), and columns that are not configured are ignored.
//
// Invariants (tests cite them by number):
//
//  1. Sequence i is row i of the file (row groups in file order); its
//     sample count in stream S is the number of samples of S in that row.
//  2. A sequence's sample count (corpus.Layout.Samples) is the count of the
//     DefinesMBSize stream when one is named, else the largest count among
//     the streams: the number of lines CTF's writer gives the sequence.
//     Labels, when a label stream is named, are that stream's count.
//  3. Every stream has at least one sample in every row (CTF's rule for a
//     stream missing from a sequence). Nulls at any level, a dense sample
//     whose length is not the dimension, an index outside [0, dim), an
//     index column without integers, or a values column whose shape
//     differs from its indices are errors naming file, row group, row and
//     column. An index pass checks every row, so LoadChunk meets no bad
//     sequence in a file that did not change; a load checks its rows too.
//  4. Chunks are runs of consecutive rows, cut as CTF cuts its chunks:
//     ChunkSequences rows each, or a new chunk when the next row would push
//     the chunk past ChunkBytes (the row's size decoded in memory: 4 bytes
//     per dense value, 8 per sparse entry). Chunks may span row groups, so
//     the same chunking options give the same layout as the CTF file the
//     corpus was converted from.
//  5. A Reader is safe for concurrent LoadChunk calls.
//  6. With Config.CacheDir, the counts an index pass learns are kept in a
//     counts file (CountsPath), and an open that finds one made for the
//     same version of the file and the same settings reads the footer and
//     no rows. Its loads then check the header of every page they read, as
//     an index pass checks them all, and each row's counts against the
//     file's: a counts file that does not match is an error at the first
//     load it misleads, never a chunk that disagrees with the layout. Any
//     load reads, of each column, only the pages that hold its rows (the
//     file's offset index locates them; of a column without one, or whose
//     pages hold more rows than a chunk, the whole column chunk), and
//     stops at the end of the page that ends its last row. A Writer ends the pages of its larger columns where a Reader's
//     chunks end (WriterOptions.ChunkBytes), so a load then reads its own
//     pages and no neighbour's.
package parquet
