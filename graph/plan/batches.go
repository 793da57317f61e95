package plan

import "math/rand/v2"

// batch is one batch of a worker: rows[off:off+n] of the bucket's index
// array, all of relation rel (-1 in dynamic mode).
type batch struct {
	off, n uint32
	rel    int32
}

// dynamicBatches cuts part [begin, end) into contiguous batches of size bs,
// the last smaller (invariant 6).
func dynamicBatches(dst []batch, begin, end, bs int) []batch {
	for o := begin; o < end; o += bs {
		dst = append(dst, batch{off: uint32(o), n: uint32(min(bs, end-o)), rel: -1})
	}
	return dst
}

// relationBatches groups part (a segment of the shuffled index array) by
// relation into out (same length; its offset in the array batches index is
// base), keeping the shuffled order inside each relation; then it draws
// batches: a relation with probability proportional to its edges left, and
// the next bs (or fewer) of them (invariant 6). With pk, part holds packed
// values (shuffleTrain) and out receives plain rows; without, rel is read
// at each row. counts must have one entry per relation id.
func relationBatches(dst []batch, part, out []uint32, base int, rel []uint32, pk *packing, counts []int, bs int, rng *rand.Rand) []batch {
	for r := range counts {
		counts[r] = 0
	}
	if pk != nil {
		for _, v := range part {
			counts[v>>pk.shift]++
		}
		next := prefix(counts)
		for _, v := range part {
			r := v >> pk.shift
			out[next[r]] = v & pk.mask
			next[r]++
		}
	} else {
		for _, x := range part {
			counts[rel[x]]++
		}
		next := prefix(counts)
		for _, x := range part {
			r := rel[x]
			out[next[r]] = x
			next[r]++
		}
	}
	// counts holds each relation's size; starts[r] is its next unused row.
	left := counts
	total := len(part)
	starts := prefix(counts)
	for total > 0 {
		x := int(rng.Uint64N(uint64(total)))
		r := 0
		for x >= left[r] {
			x -= left[r]
			r++
		}
		n := min(bs, left[r])
		dst = append(dst, batch{off: uint32(base + starts[r]), n: uint32(n), rel: int32(r)})
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
