// Package corpus holds the shapes shared by every sequence corpus: the
// Layout (how many sequences, how many samples each, how they are grouped in
// chunks) and the Chunk (the parsed data of one chunk). A format package such
// as ctf builds a Layout from one indexing pass and parses Chunks on demand;
// the randomize and source packages see only these types.
//
// Invariants (tests cite them by number):
//
//  1. Sequences are numbered 0..N-1 in file order (their ordinals). Chunk c
//     holds the contiguous ordinals [ChunkStart[c], ChunkStart[c+1]).
//  2. Every sequence has Samples >= 1 (the count that minibatch sizes use).
//     Labels may be 0 (epoch sizes count label samples).
//  3. A Layout never changes once built; it is safe for concurrent readers.
package corpus
