// Package objstore reads objects in S3 or an S3-compatible store, named by
// URLs of the form s3://BUCKET/KEY, with ranged GETs, retries, a bound on
// requests in flight and a local cache shared by the processes of a host.
//
// Open sends a HEAD request and keeps the object's size and ETag; every
// later GET asks for that ETag (If-Match), so all bytes an Object returns
// come from one version of the object. The client is the AWS SDK for Go v2
// with its standard configuration chain (environment, AWS_PROFILE and the
// shared config and credentials files, AWS_REGION, AWS_ENDPOINT_URL or
// AWS_ENDPOINT_URL_S3; path-style addressing when an endpoint is set).
//
// The cache stores an object as blocks of 1 MiB (the last one shorter), one
// file per block, named by a hash of (URL, ETag, size, offset, length), so
// another version of the object never meets the old version's blocks; a
// stream or a fetch writes each aligned run of 4 blocks (fewer at the
// object's end) it holds whole, a segment (SegmentBytes), as one file
// instead: the blocks and their trailers in turn, named likewise. A block is looked for
// in its own file, then in its segment's. A read fetches the blocks it
// needs that are not cached in one GET; with exact reads (Options.Exact)
// it fetches only the parts of them it needs, each cached as a file of its
// own under the hash of its range.
//
// Invariants (tests cite them by number):
//
//  1. ParseURL accepts s3://BUCKET/KEY with a bucket name valid in S3 and
//     a non-empty key not ending in "/"; the parts rebuild the input.
//     Anything else is an error that quotes the input and says what is
//     wrong.
//  2. ReadAt follows io.ReaderAt and returns the object's bytes at the
//     version seen by Open, whether they come from the network, a fetch
//     under way or the cache.
//  3. Every GET carries If-Match with the ETag seen by Open. A 412 (the
//     object was replaced) is not retried: it is an *Error that unwraps to
//     ErrReplaced and names the URL and that it changed during the run.
//  4. Transient failures (connection reset or refused, a body cut short,
//     HTTP 429, 500, 502, 503 including SlowDown, 504) are retried with
//     exponential backoff and jitter while FetchTimeout has not passed
//     since the request's first attempt; a short body is fetched again
//     from where it stopped. The bytes are those of an undisturbed read.
//     When the time is up the error unwraps to ErrTimeout and names the
//     URL.
//  5. 403 and 404 (AccessDenied, NoSuchKey, NoSuchBucket...) are errors
//     that name the bucket, the key and where the credentials came from
//     ("environment (AWS_ACCESS_KEY_ID)", "shared credentials file F,
//     profile P", "none (anonymous)"), end with the store's answer (HTTP
//     status, error code, request ID), and unwrap to ErrDenied or
//     ErrNotFound. No error text contains a secret.
//  6. A ReadAt costs at most one GET; a ReadAt of cached blocks costs none,
//     and neither does one of blocks an earlier Prefetch or ReadAt of the
//     same Object fetched (it waits for that fetch).
//  7. An Object has at most FetchConcurrency ranged GETs in flight (ReadAt
//     and Prefetch together; a NewReader stream is apart).
//  8. Cache files are written atomically (temporary file, rename; no
//     fsync: a file a crash tore fails its check) and carry a trailer
//     (key, length, a CRC-32C of each 64 KiB piece and one of those); a
//     read checks the trailer and the pieces it reads, so a read of part
//     of a block reads only that part's pieces; a bad file is removed and
//     its block fetched again. A segment file holds each of its blocks as
//     a block file would, and is checked and removed as one.
//  9. The files in CacheDir total at most CacheBytes, as far as one process
//     sees: before a write that would pass the bound, the least recently
//     used files (by modification time, which a cache hit renews) are
//     removed. Processes sharing the directory scan it under a file lock,
//     and each rescans after writing an eighth of the bound, so the excess
//     from other processes' writes is bounded by that. Files removed by
//     another process are fetched again, never read half-written.
//  10. NewReader streams the object from an offset in one GET, resumed
//     after transient failures (invariant 4), with If-Match; it does not
//     read the cache, and it writes to it every block it passes whole
//     (none when the object is more than half of CacheBytes): a segment it
//     passes whole as one file, written as it goes and renamed when
//     complete (a stream closed inside a segment leaves no file of it).
//     Close returns once its writes are done.
//     NewRangeReader does the same for a range, whose GETs ask for the
//     range only: the store sends no byte past it. Streams (the
//     FetchConcurrency) is how many a pass over the object runs at once.
//  11. Put stores a local file of at most MaxPutBytes as an object in one
//     PUT request, retried as in invariant 4; the object is the file's
//     bytes, or is left as it was when Put fails. A missing bucket is an
//     error that names the bucket and the key. Get stores an object as a
//     local file, whole or not at all, with GET requests only (no HEAD; a
//     transient failure starts it again, as in invariant 4), around the
//     cache.
//  12. With Options.Exact, a ReadAt or Prefetch fetches of each block it
//     touches only the part it needs, unless the block is cached or on its
//     way: the bytes fetched are those asked for (plus the gaps between
//     the parts one GET spans). Such a part is cached as a file of its own
//     and serves later reads of it or of ranges inside it; invariants 2,
//     3, 6, 7 and 8 hold for it as for blocks.
package objstore
