// Package readopts turns the choices of `batchprep read` (SPEC A6) into the
// reader and source configurations, in one place for every front end: the
// command line (cli/read.go) and the gRPC service (serve) build their
// ctf.Config and source.Config here, so the same choices give the same
// minibatches whichever way they arrive.
//
// Invariants (tests cite them by number):
//
//  1. Defaults are those of SPEC A6 (mb 256, epoch size full, 1 epoch,
//     randomize window, 128 window chunks, seed 0, 1 worker) except the
//     chunk size, 1 MiB instead of 32 MiB, and 64 chunks of the next window
//     parsed ahead (DefaultChunkBytes, DefaultPrefetchChunks). With
//     randomize cntk and no chunk size given, chunks are CNTK's 32 MiB
//     (CNTKChunkBytes), so that the order is CNTK's.
//  2. Every rejected choice is a *FieldError naming the field (or both fields
//     of an exclusive pair) and the value given; the caller chooses how a
//     field is spelled (--window-chunks on the command line, window_chunks in
//     a request).
//  3. Build never touches the file system: it checks and converts only.
package readopts
