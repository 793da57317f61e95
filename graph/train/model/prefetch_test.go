package model

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestPrefetchChangesNothing: steps with rows prefetched ahead (as every
// Worker runs them) leave the tables bit-identical to steps without, over
// every step case and several batches each (invariant 8).
func TestPrefetchChangesNothing(t *testing.T) {
	for i, c := range stepCases() {
		var tabs [2][]*Table
		for k, ahead := range []int{prefetchAhead, 0} {
			m, L, R, b := stepModel(t, c, 6)
			w := NewWorker(m)
			w.ahead = ahead
			rng := rand.New(rand.NewPCG(uint64(i), 1))
			for range 3 {
				w.Step(b, L, R, rng)
			}
			tabs[k] = []*Table{L, R}
		}
		for j := range tabs[0] {
			a, b := tabs[0][j], tabs[1][j]
			if !slices.Equal(bitsOfAll(a.Emb), bitsOfAll(b.Emb)) || !slices.Equal(bitsOfAll(a.Acc), bitsOfAll(b.Acc)) {
				t.Fatalf("case %+v: table %d differs with prefetching", c, j)
			}
		}
	}
}

func bitsOfAll(v []float32) []uint32 {
	out := make([]uint32, len(v))
	for i, x := range v {
		out[i] = math.Float32bits(x)
	}
	return out
}
