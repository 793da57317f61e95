// Package alias draws indexes with probability proportional to integer
// weights in constant time: Walker's alias method with Vose's
// construction. Tables are built with integer arithmetic only, so a
// table is exact (index i is drawn with probability w[i]/W, W the sum)
// and the same on every machine.
package alias

import "math/bits"

// Table draws the indexes of a weight list. It is read-only once built
// and safe for concurrent draws; it holds 12 bytes per index.
type Table struct {
	// A draw picks a column j uniformly, then keeps j with probability
	// keep[j]/total or takes other[j].
	keep  []uint64
	other []uint32
	total uint64
}

// New builds the table of w. Weights may be zero; a list whose weights are
// all zero (or an empty one) gives a Table with Total 0, which must not be
// drawn from. The sum of the weights times len(w) must stay below 2^64.
func New[W uint32 | uint64](w []W) *Table {
	n := uint64(len(w))
	a := &Table{keep: make([]uint64, n), other: make([]uint32, n)}
	for _, x := range w {
		a.total += uint64(x)
	}
	if a.total == 0 {
		return a
	}
	// Column j has a capacity of total; weight w[j] scaled by n fills
	// w[j]·n of it. A column below capacity takes the rest from one above.
	var small, large []uint32
	for j, x := range w {
		a.keep[j] = uint64(x) * n
		if a.keep[j] < a.total {
			small = append(small, uint32(j))
		} else {
			large = append(large, uint32(j))
		}
	}
	for len(small) > 0 && len(large) > 0 {
		s, l := small[len(small)-1], large[len(large)-1]
		small = small[:len(small)-1]
		a.other[s] = l
		a.keep[l] -= a.total - a.keep[s]
		if a.keep[l] < a.total {
			large = large[:len(large)-1]
			small = append(small, l)
		}
	}
	// Exact arithmetic leaves full columns only; small is empty.
	for _, j := range append(large, small...) {
		a.keep[j], a.other[j] = a.total, j
	}
	return a
}

// Total is the sum of the weights.
func (a *Table) Total() uint64 { return a.total }

// Len is the number of indexes.
func (a *Table) Len() int { return len(a.keep) }

// Draw maps one uniform 64-bit random value to an index: the high bits of
// x·n pick the column, the low bits (uniform on the rest) the side. Total
// must be > 0.
func (a *Table) Draw(x uint64) uint32 {
	j, lo := bits.Mul64(x, uint64(len(a.keep)))
	u, _ := bits.Mul64(lo, a.total)
	if u < a.keep[j] {
		return uint32(j)
	}
	return a.other[j]
}
