package source

import "sort"

// splitBoundary returns where rank r's group starts among the sequences of a
// global minibatch whose sample-count prefix sums are prefix (prefix[0] = 0,
// prefix[n] = T, strictly increasing). Group r is [boundary(r),
// boundary(r+1)).
//
// The rule (docs/source.md, invariant 6): boundary(0) = 0, boundary(w) = n,
// and for 0 < r < w boundary(r) is the sequence boundary j whose prefix sum is
// closest to r*T/w, i.e. the j minimizing |prefix[j]*w - r*T|; on a tie the
// later boundary wins. The targets increase with r, so the boundaries are
// non-decreasing and the groups are contiguous, disjoint and cover all n.
// Integer arithmetic only: every rank computes the same split.
func splitBoundary(prefix []uint64, w, r int) int {
	n := len(prefix) - 1
	if r <= 0 {
		return 0
	}
	if r >= w {
		return n
	}
	target := uint64(r) * prefix[n] // compare prefix[j]*w with r*T
	W := uint64(w)
	j := sort.Search(n+1, func(j int) bool { return prefix[j]*W >= target })
	if j == 0 {
		return 0
	}
	if j > n {
		return n
	}
	below := target - prefix[j-1]*W
	above := prefix[j]*W - target
	if above <= below {
		return j
	}
	return j - 1
}

// splitRange returns rank r's group [lo, hi) of w.
func splitRange(prefix []uint64, w, r int) (lo, hi int) {
	return splitBoundary(prefix, w, r), splitBoundary(prefix, w, r+1)
}

// SplitRange returns rank r's group [lo, hi) of w among the sequences of a
// global minibatch whose sample-count prefix sums are prefix (prefix[0] = 0,
// strictly increasing): the rule of invariant 6, for callers that assemble
// global minibatches of their own (corpus/mixture) and must split them as a
// Source does.
func SplitRange(prefix []uint64, w, r int) (lo, hi int) { return splitRange(prefix, w, r) }
