package plan

import "math/bits"

// ChunkRange returns chunk i of c chunks of a bucket of n edges: the
// storage range [floor(i*n/c), floor((i+1)*n/c)) (invariant 2). The sizes
// differ by at most one, and unlike PBG's ceil-sized chunks no chunk starts
// past the end (PBG fails on n=5, c=4).
func ChunkRange(n, c, i int) (begin, end int) {
	return mulDiv(i, n, c), mulDiv(i+1, n, c)
}

// mulDiv returns floor(a*b/c) without overflow for non-negative a <= c.
func mulDiv(a, b, c int) int {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	q, _ := bits.Div64(hi, lo, uint64(c))
	return int(q)
}

// NumChunksFor is the derived num_edge_chunks: ceil(largest / maxPerChunk),
// at least 1.
func NumChunksFor(largest int, maxPerChunk int64) int {
	if largest <= 0 {
		return 1
	}
	return int((int64(largest) + maxPerChunk - 1) / maxPerChunk)
}

// HoldoutCount is floor(n * fraction), as PBG computes it.
func HoldoutCount(n int, fraction float64) int {
	k := int(float64(n) * fraction)
	return min(max(k, 0), n)
}

// ShareRange returns worker w's part of m shuffled edges split among
// workers: sizes differ by at most one, the first m%workers parts one larger
// (invariant 5). PBG's split makes the first parts ceil(m/workers) and the
// last ones smaller or empty (25/4 -> 7,7,7,4); ours gives 7,6,6,6.
func ShareRange(m, workers, w int) (begin, end int) {
	q, r := m/workers, m%workers
	begin = w*q + min(w, r)
	end = begin + q
	if w < r {
		end++
	}
	return begin, end
}
