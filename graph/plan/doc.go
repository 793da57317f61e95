// Package plan is the batch schedule of PyTorch-BigGraph-style training
// (SPEC B2, B3): for each epoch, for each edge set, for each edge chunk, for
// each bucket in that pass's bucket order, it loads the bucket's chunk,
// holds out evaluation edges, shuffles the rest, splits them among the
// Hogwild workers and cuts each worker's share into batches. It trains
// nothing; it says which edges go together, in which order, and can stop
// after any batch and resume from a small JSON state.
//
// Every random choice is drawn from internal/mix streams keyed by a purpose
// tag and the coordinates it may depend on (docs/determinism-graph.md):
//
//	bucket order   (seed, tagOrder, epoch, set, chunk); the buffer order
//	               also depends on PartitionBuffer (c), which the state's
//	               fingerprint then records
//	holdout        (seed, tagHoldout, set, chunk, lhs, rhs)         no epoch
//	shuffle        (seed, tagShuffle, epoch, set, chunk, lhs, rhs [, block])
//	relation pick  (seed, tagRelation, epoch, set, chunk, lhs, rhs, worker)
//
// Invariants (tests cite them by number):
//
//  1. Loop order: epochs, then edge sets in config order, then chunks
//     (every bucket's chunk 0, then every bucket's chunk 1, ...), then
//     buckets in the pass's order; each pass yields every bucket once.
//  2. Chunks: chunk i of a bucket of n edges is the contiguous storage
//     range [floor(i*n/C), floor((i+1)*n/C)); sizes differ by at most one.
//     C = NumEdgeChunks, or when 0, ceil(largest bucket over all buckets
//     and edge sets / MaxEdgesPerChunk), at least 1.
//  3. Holdout: floor(n*EvalFraction) distinct edges of the chunk, a uniform
//     sample without replacement that depends only on (seed, set, chunk,
//     bucket): the same in every epoch and after a resume; never trained.
//  4. Coverage: in every epoch each edge is either held out or in exactly
//     one batch.
//  5. Shares: the training edges are uniformly shuffled per (epoch, set,
//     chunk, bucket) and split into Workers contiguous parts whose sizes
//     differ by at most one, the first parts the larger.
//  6. Batches: with DynamicRelations, a worker's part is cut into
//     contiguous batches of BatchSize (the last smaller). Otherwise the
//     worker repeatedly picks a relation with probability proportional to
//     its edges left in the part and takes the next BatchSize (or fewer) of
//     them in shuffled order; every batch holds one relation.
//  7. Determinism: the records are a function of (Options, store contents)
//     only: not of GOMAXPROCS, goroutine scheduling, or where a run was
//     stopped and resumed.
//  8. Resume: an iterator started from the State taken after any record
//     yields exactly the records that followed it, except that a bucket
//     interrupted between batches is announced again with Resumed set.
//  9. A State whose fingerprint differs from the plan's is refused with an
//     error naming every differing field; a malformed State is an error.
//  10. Per bucket: PrepareBucket(epoch, set, chunk, bucket) gives the same
//     holdout and, through Share(w), the same batches of every worker as
//     the Iter's records of that bucket, whatever was prepared before; the
//     shares may be walked concurrently (a Hogwild trainer gives each
//     worker goroutine its own Share).
//
// Memory: per bucket chunk of n edges the iterator holds the columns (lhs,
// rhs, rel: 4 bytes each, ordinal 8, weight 4 when present) and two uint32
// index arrays (the permutation and a scratch array that first holds the
// holdout bitmap, then the per-relation grouping): at most 32 bytes per edge
// plus buffers that do not grow with n. Nothing is allocated per batch.
//
// Pipeline: while a large chunk loads, the holdout and the shuffle's
// counting pass (the whole shuffle in dynamic mode) run beside the read,
// since they depend on the chunk's size only; with a RelationFirstReader
// (edgestore.Store) the relation check and the shuffle's second pass start
// once the relation column is in, while the other columns load. Each step
// writes buffers the others do not touch and draws from its own streams, so
// the records do not depend on which finishes first (invariant 7). The next
// chunk is not loaded ahead: its columns would need a second set of column
// buffers (20 more bytes per edge), beyond the 32-byte budget.
package plan
