// Package bucket computes the order in which one pass (one epoch, edge set
// and edge chunk) visits the buckets of an L x R partitioned graph. Every
// order is a pure function of the shape and a random generator; the caller
// derives the generator by mixing (internal/mix), so the same coordinates
// always give the same order.
//
// Orders (SPEC B2.2, the names are PBG's bucket_order values):
//
//	random      all buckets, uniformly shuffled
//	affinity    start at a uniformly random bucket; then its transpose if
//	            not yet visited; then a uniformly random unvisited bucket
//	            that shares a partition with the current one; only when
//	            none is left, a uniformly random unvisited bucket
//	outside_in  layers i = 0, 1, ...: layer i holds the buckets with
//	            min(lhs, rhs) == i; inside a layer a bucket and its
//	            transpose are adjacent (random which first) and the pairs,
//	            with the diagonal bucket (i,i) as a singleton, come in
//	            random order
//	inside_out  the same layers, the last one first (PBG's default)
//	buffer      for a buffer of c partitions (MakeBuffered): a walk
//	            through buffer states, one partition swapped at a time:
//	            a greedy walk (SwapStates) when 2c >= max(L, R) and it
//	            causes no more loads, else one that keeps c-1 partitions
//	            fixed while the others pass through the last slot
//	            (BufferStates, partitions randomly relabelled); each
//	            bucket in the first state holding both its partitions, the
//	            buckets of a state in random order
//
// Partition indices: lhs partition p and rhs partition p are treated as the
// same partition (the usual case of one entity type on both sides, and what
// PBG's affinity order assumes). Two buckets a and b share a partition when
// a.Lhs == b.Lhs, a.Rhs == b.Rhs, a.Lhs == b.Rhs or a.Rhs == b.Lhs. Loads
// counts partition loads in the same model with PBG's two partitions;
// BufferLoads with a buffer of c partitions and Belady eviction (Admit),
// LowerBound the fewest loads any order can cause.
//
// Invariants (tests cite them by number):
//
//  1. Every order yields each of the L*R buckets exactly once, for any
//     L, R >= 1 (L != R and L or R == 1 included).
//  2. Layered orders: the layer index min(lhs, rhs) is non-decreasing
//     (outside_in) or non-increasing (inside_out) along the order, and a
//     bucket and its transpose, when both exist, are adjacent.
//  3. Affinity: each bucket after the first is the transpose of the
//     previous "current" bucket, or shares a partition with it, unless no
//     unvisited bucket shares one at that moment.
//  4. Orders are deterministic functions of (L, R, generator stream); the
//     golden files in testdata pin them for fixed seeds.
//  5. Affinity costs O(L*R) time and memory (uniform choice among
//     candidates by rejection from per-row and per-column sets).
//  6. Buffer: at L = R = 16 the buffer order causes at most 121 loads
//     with c = 2 (LowerBound, and fewer than inside_out), 46 with c = 4
//     and 25 with c = 8 (BufferLoads), for every seed; no order causes
//     fewer than LowerBound.
//  7. Buffer: at L = R = 16 with c = 8 a partition's last bucket comes on
//     average less than 0.09 of the pass before its end (the fixed-group
//     walk: 0.14).
package bucket
