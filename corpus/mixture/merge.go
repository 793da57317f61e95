package mixture

import "math/bits"

// The mixture's order. A sequence of corpus k that starts at position p of
// k's own timeline has the key p / w_k; the mixture walks all corpora's
// sequences in key order, a tie going to the lower corpus index. With
// integer weights a_k (w_k = a_k / A), p_a / w_a < p_b / w_b exactly when
// p_a * a_b < p_b * a_a: two 128-bit products, no rounding, so every
// machine computes the same order.

// cmpKeys compares the keys p/w_a and q/w_b: -1, 0 or +1.
func cmpKeys(p, wa, q, wb uint64) int {
	h1, l1 := bits.Mul64(p, wb)
	h2, l2 := bits.Mul64(q, wa)
	switch {
	case h1 < h2 || (h1 == h2 && l1 < l2):
		return -1
	case h1 == h2 && l1 == l2:
		return 0
	}
	return 1
}

// pick returns the lane whose next sequence comes first: the smallest key,
// the lowest index on a tie. K is small (a handful of corpora), so a scan
// is as fast as a heap.
func (m *Mixture) pick() int {
	best := 0
	b := m.lanes[0]
	for i := 1; i < len(m.lanes); i++ {
		ln := m.lanes[i]
		if cmpKeys(ln.pos, ln.weight, b.pos, b.weight) < 0 {
			best, b = i, ln
		}
	}
	return best
}

// ceilShare returns ceil(t * a / A) for a <= A: the own position corpus k
// reaches at key t (the first position whose key is >= t).
func ceilShare(t, a, A uint64) uint64 {
	hi, lo := bits.Mul64(t, a)
	q, r := bits.Div64(hi, lo, A) // hi < A because a <= A
	if r != 0 {
		q++
	}
	return q
}
