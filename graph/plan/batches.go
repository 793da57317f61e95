package plan

import (
	"math/bits"
	"math/rand/v2"
)

// batch is one batch of a worker: rows[off:off+n] of the bucket's index
// array, all of relation rel (-1 in dynamic mode).
type batch struct {
	off, n int
	rel    int32
}

// dynamicBatches cuts part [begin, end) into contiguous batches of size bs,
// the last smaller (invariant 6).
func dynamicBatches(dst []batch, begin, end, bs int) []batch {
	for o := begin; o < end; o += bs {
		dst = append(dst, batch{off: o, n: min(bs, end-o), rel: -1})
	}
	return dst
}

// relationBatches groups part (a segment of the shuffled index array, whose
// offset in that array is base) by relation, keeping the shuffled order
// inside each relation, in place with tmp (same length) as scratch; then it
// draws batches: a relation with probability proportional to its edges left,
// and the next bs (or fewer) of them (invariant 6). counts must have one
// entry per relation id.
func relationBatches(dst []batch, part, tmp []uint32, base int, rel []uint32, counts []int, bs int, rng *rand.Rand) []batch {
	for r := range counts {
		counts[r] = 0
	}
	idxBits := bits.Len32(uint32(len(rel)))
	relBits := bits.Len32(uint32(len(counts) - 1))
	if idxBits+relBits <= 32 {
		// Pack (rel, index) in tmp so the scatter reads rel sequentially:
		// one random access into rel per edge instead of two.
		for i, x := range part {
			r := rel[x]
			tmp[i] = r<<idxBits | x
			counts[r]++
		}
		next := prefix(counts)
		mask := uint32(1)<<idxBits - 1
		for _, v := range tmp {
			r := v >> idxBits
			part[next[r]] = v & mask
			next[r]++
		}
	} else {
		copy(tmp, part)
		for _, x := range tmp {
			counts[rel[x]]++
		}
		next := prefix(counts)
		for _, x := range tmp {
			r := rel[x]
			part[next[r]] = x
			next[r]++
		}
	}
	// counts still holds each relation's size; start[r] its first row.
	left := counts
	total := len(part)
	start := 0
	starts := make([]int, len(counts))
	for r, c := range counts {
		starts[r] = start
		start += c
	}
	for total > 0 {
		x := int(rng.Uint64N(uint64(total)))
		r := 0
		for x >= left[r] {
			x -= left[r]
			r++
		}
		n := min(bs, left[r])
		dst = append(dst, batch{off: base + starts[r], n: n, rel: int32(r)})
		starts[r] += n
		left[r] -= n
		total -= n
	}
	return dst
}

// prefix returns the exclusive prefix sums of counts (a new slice).
func prefix(counts []int) []int {
	next := make([]int, len(counts))
	s := 0
	for r, c := range counts {
		next[r] = s
		s += c
	}
	return next
}
