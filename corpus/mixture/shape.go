package mixture

import (
	"fmt"
	"math/bits"
)

// Shape is what invariant 5 derives from a mixture's corpora before any is
// read: their integer weights, their samples per sweep and the anchor, the
// corpus whose sweeps are the mixture's (inspect --mix prints it).
type Shape struct {
	Weights []uint64 // a_k, reduced: corpus k's share is Weights[k] / Total
	Total   uint64   // A, the sum of the weights
	Sweep   []uint64 // M_k, corpus k's samples per sweep
	Anchor  int
}

// ShapeOf returns the shape of a mixture whose corpus k has sweep[k]
// samples per sweep and the weight ws[k]; every sweep must be positive.
func ShapeOf(sweep []uint64, ws []Weight) (Shape, error) {
	if len(sweep) != len(ws) {
		return Shape{}, fmt.Errorf("mixture: %d sweep lengths for %d weights", len(sweep), len(ws))
	}
	ints, err := Integers(ws)
	if err != nil {
		return Shape{}, err
	}
	s := Shape{Weights: ints, Sweep: append([]uint64(nil), sweep...)}
	for k, a := range ints {
		if sweep[k] == 0 {
			return Shape{}, fmt.Errorf("mixture: corpus %d has no samples", k)
		}
		s.Total += a // Integers checked that the sum fits
	}
	s.Anchor = anchorIndex(s.Sweep, s.Weights)
	return s, nil
}

// anchorIndex returns the k whose sweep spans the most of the mixture's
// timeline, largest sweep[k] / weights[k] (compared as M_a * a_b against
// M_b * a_a), the lowest index on a tie.
func anchorIndex(sweep, weights []uint64) int {
	best := 0
	for i := 1; i < len(sweep); i++ {
		if cmpKeys(sweep[best], weights[best], sweep[i], weights[i]) < 0 {
			best = i
		}
	}
	return best
}

// Span returns the samples of the mixture's timeline that one sweep of
// corpus k spans, M_k / w_k = M_k * A / a_k, rounded down (the largest
// uint64 when it does not fit).
func (s Shape) Span(k int) uint64 {
	hi, lo := bits.Mul64(s.Sweep[k], s.Total)
	if hi >= s.Weights[k] {
		return 1<<64 - 1
	}
	q, _ := bits.Div64(hi, lo, s.Weights[k])
	return q
}
