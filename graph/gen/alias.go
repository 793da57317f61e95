package gen

import "math/bits"

// alias is Vose's alias table over integer weights: a draw picks a column
// j uniformly, then keeps j with probability keep[j]/total or takes
// other[j]. The table is built with integer arithmetic only, so it is
// exact and the same on every machine.
type alias struct {
	keep  []uint64 // threshold out of total
	other []uint32
	total uint64 // sum of the weights
}

// newAlias builds the table for weights (len >= 1, every weight >= 1, the
// sum times len below 2^64).
func newAlias(weights []uint64) *alias {
	n := uint64(len(weights))
	a := &alias{keep: make([]uint64, n), other: make([]uint32, n)}
	for _, w := range weights {
		a.total += w
	}
	// Column j has capacity total; weight w_j scaled by n fills w_j*n.
	scaled := make([]uint64, n)
	var small, large []uint32
	for j, w := range weights {
		scaled[j] = w * n
		if scaled[j] < a.total {
			small = append(small, uint32(j))
		} else {
			large = append(large, uint32(j))
		}
	}
	for len(small) > 0 && len(large) > 0 {
		s, l := small[len(small)-1], large[len(large)-1]
		small = small[:len(small)-1]
		a.keep[s], a.other[s] = scaled[s], l
		scaled[l] -= a.total - scaled[s]
		if scaled[l] < a.total {
			large = large[:len(large)-1]
			small = append(small, l)
		}
	}
	for _, j := range large {
		a.keep[j], a.other[j] = a.total, j
	}
	for _, j := range small { // exact arithmetic leaves none; kept for safety
		a.keep[j], a.other[j] = a.total, j
	}
	return a
}

// draw maps one 64-bit random value to a column: the high bits of x*n pick
// the column, the low bits (uniform on the rest) the side.
func (a *alias) draw(x uint64) uint32 {
	j, lo := bits.Mul64(x, uint64(len(a.keep)))
	u, _ := bits.Mul64(lo, a.total)
	if u < a.keep[j] {
		return uint32(j)
	}
	return a.other[j]
}
