package model

import "math/rand/v2"

// Alias draws an index i of a weight list with probability w[i]/W, W the
// weights' sum, in constant time: Walker's alias method with Vose's
// construction. It is built in integers, so every machine builds the same
// tables and a draw's probability is exactly w[i]/W. An Alias is read-only
// once made and shared by workers; it holds 12 bytes per index.
type Alias struct {
	// A draw picks a column i uniformly, then u uniform in [0, total):
	// i when u < keep[i], else other[i].
	keep  []uint64
	other []uint32
	total uint64
}

// NewAlias builds the sampler of w. A list whose weights are all zero (or
// an empty one) gives an Alias with Total 0, which must not be drawn from.
func NewAlias(w []uint32) *Alias {
	n := uint64(len(w))
	a := &Alias{keep: make([]uint64, n), other: make([]uint32, n)}
	for _, x := range w {
		a.total += uint64(x)
	}
	if a.total == 0 {
		return a
	}
	// Column i holds mass w[i]·n out of a capacity of total. Columns
	// below capacity take the rest of their capacity from one above.
	var small, large []uint32
	for i, x := range w {
		a.keep[i] = uint64(x) * n
		if a.keep[i] < a.total {
			small = append(small, uint32(i))
		} else {
			large = append(large, uint32(i))
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
	// In exact arithmetic the columns left are full.
	for _, i := range large {
		a.keep[i], a.other[i] = a.total, i
	}
	for _, i := range small {
		a.keep[i], a.other[i] = a.total, i
	}
	return a
}

// Total is the sum of the weights.
func (a *Alias) Total() uint64 { return a.total }

// Len is the number of indexes.
func (a *Alias) Len() int { return len(a.keep) }

// Draw draws one index; Total must be > 0.
func (a *Alias) Draw(rng *rand.Rand) uint32 {
	i := rng.IntN(len(a.keep))
	if rng.Uint64N(a.total) < a.keep[i] {
		return uint32(i)
	}
	return a.other[i]
}
