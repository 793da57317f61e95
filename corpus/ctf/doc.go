// Package ctf reads and writes the CNTK Text Format (CTF): one sequence per
// group of consecutive lines sharing a leading id, each line holding samples
// "|name v v v" (dense) or "|name i:v i:v" (sparse).
//
// Reading is two passes, as in CNTK. Open makes one indexing pass over the
// file (sequence boundaries, byte offsets, sample counts, chunks), which
// yields a corpus.Layout; LoadChunk parses one chunk on demand, so memory is
// bounded by the chunks in use, not by the file. A large file is indexed in
// one range per core and the ranges joined into the index a single pass
// builds (index_par.go); on any error the file is indexed again in one
// pass, which reports it. The exact grammar, the
// diagnostics, the error budget, the index cache format and every deliberate
// difference from CNTK are documented in docs/formats-ctf.md.
//
// Reader.Fingerprint identifies the file (size, a hash of both ends) and the
// settings that shape the layout, for the minibatch source's state.
//
// Invariants (tests cite them by number):
//
//  1. Config.Validate rejects: no streams, duplicate or malformed stream
//     names, dim < 1, an unknown defines_mb_size or label stream, both
//     chunk_bytes and chunk_sequences, negative sizes or budgets.
//  2. Indexing: a UTF-8 BOM and leading blank lines are skipped, a UTF-16 BOM
//     is an error; the file is in line mode when Config.LineMode is set or
//     its first data byte is '|' (each line one 1-sample sequence, keyed by
//     its 0-based line number); otherwise a line starting with digits whose
//     id differs from the previous line's starts a sequence and any other
//     line continues the current one. Ids are kept as written (bytes).
//  3. A sequence's sample count is its number of lines, or the number of its
//     lines carrying the defines_mb_size stream; its label count is the
//     number of lines carrying the label stream; Summary.Samples[s] is the
//     number of lines of the indexed sequences carrying stream s, the same
//     whether it was gathered while parsing chunks or by Summary reading
//     the chunks not parsed yet (the index pass looks only at ids and
//     newlines, and at '|' when defines_mb_size or label is set). A sequence
//     without a line of the defines_mb_size stream is left out of the layout
//     and charged to the error budget; in line mode such lines are skipped
//     and counted.
//  4. Chunks: by bytes, a new chunk starts when the next sequence would make
//     the chunk exceed ChunkBytes (a larger sequence is a chunk of its own);
//     by count, every chunk but the last has ChunkSequences sequences.
//     Either way a chunk also ends before a sequence starting 4 GiB or more
//     after the chunk's first sequence (only possible with dropped
//     sequences or skipped lines in between, or huge sequences): the index
//     keeps 32-bit offsets within a chunk, so it holds 8 bytes per sequence
//     besides the layout; line numbers and ids are recovered at parse time.
//  5. Numbers follow [+-]digit+['.'digit*][(e|E)[+-]digit+] with no exponent
//     after a bare '.'; the value is float32, correctly rounded (the same as
//     strconv.ParseFloat(s, 32)).
//  6. A bad sequence (malformed number or entry, sparse index >= dim, dense
//     sample longer than dim, empty row, a stream without samples, a stream
//     twice on one row, sample count mismatch) is reported in Chunk.Bad with
//     no data in any stream; a dense sample shorter than dim is zero-padded
//     with a warning; unknown stream names and comments are skipped.
//  7. Every diagnostic is an *Error with file, 1-based line and byte column,
//     byte offset and the sentinel it unwraps to.
//  8. The error budget counts each bad sequence once over the Reader's life,
//     however often its chunk is loaded: MaxErrors bad sequences are
//     tolerated, the next one makes LoadChunk (and every later call) fail
//     with a *BudgetError. Warnings are reported once per chunk.
//     ParseChunk defers both to the commit function it returns: the
//     accounting then happens when, and in the order, commits are called.
//  9. The index cache is used only when the file's size, mtime, a hash of its
//     first and last 64 KiB and the indexing-relevant config all match; a
//     corrupt or stale cache is ignored with a warning and rewritten.
//  10. Writer output read back with the same streams gives the same ids,
//     samples and values, bit for bit.
//  11. LoadAll parses chunks on several goroutines but reports warnings,
//     charges the budget and calls back in chunk order: what it delivers and
//     reports is what a loop of LoadChunk(0), LoadChunk(1), ... gives.
//  12. InferStreams scans the file in pieces on every core, each starting at
//     a line start; the streams it returns are those of one front-to-back
//     scan, whatever the pieces.
//  13. Stopping. OpenContext checks its context before each block (about
//     1 MiB) that a goroutine of the index pass reads: once the context is
//     done, every goroutine stops at its next block, no serial pass
//     follows, and the error unwraps to the context's. With
//     OpenOptions.File the Reader reads that file and opens nothing by
//     path.
package ctf
