// Package pqlz4 makes the Parquet library read every LZ4_RAW page.
//
// LZ4_RAW is the codec DuckDB writes for COMPRESSION lz4 (and lz4_raw).
// The Parquet library (parquet-go v0.32.0) decodes such a page through a
// codec that sizes its output at three times the compressed bytes and
// allocates a new buffer when the one it is given is smaller; the page
// reader keeps its own buffer whenever the decoded length equals the
// page's declared size, so a page that compresses less than threefold
// (random floats, hashed ids) is read as zeros and fails as damaged
// (upstream: parquet-go/parquet-go issue 608). Importing this package
// replaces the library's LZ4_RAW decoder, for every file opened in the
// process, by one that decodes into the buffer it is given.
//
// Invariants (tests cite them by number):
//
//  1. Decode writes the output into dst's memory when it fits dst's
//     capacity, and returns that memory: never the output in other memory
//     with dst's length (the case the library's page reader drops).
//  2. A dst of non-zero length is the page's declared uncompressed size,
//     exact for LZ4_RAW: a block whose output does not fit its capacity
//     fails with ErrDamaged, so a damaged page costs no more memory than
//     its header declares (which the callers bound). With an empty dst
//     the output grows up to the largest an LZ4 block of that size can
//     give (255 bytes a byte, plus a little), never without bound.
//  3. After init, the library's codec for LZ4_RAW is this package's;
//     init panics, naming the library, if the library's codec table is
//     not laid out as this package expects (a new library version), so a
//     change cannot go unnoticed.
//  4. Encode is the library's own LZ4_RAW encoder.
package pqlz4
