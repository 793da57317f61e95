package alias

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The alias tables hold each index's probability exactly: over all
// columns, the mass index i keeps plus the mass other columns send to it
// is w[i]·n out of a column's capacity W, so a draw is i with probability
// w[i]/W, for random weight lists with zeros, ties and extremes.
func TestAliasExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 500 {
		n := 1 + rng.IntN(200)
		w := make([]uint32, n)
		for i := range w {
			switch rng.IntN(5) {
			case 0: // zero
			case 1:
				w[i] = math.MaxUint32 - uint32(rng.IntN(3))
			case 2:
				w[i] = 7
			default:
				w[i] = uint32(rng.IntN(1000))
			}
		}
		a := New(w)
		var sum uint64
		for _, x := range w {
			sum += uint64(x)
		}
		if a.Total() != sum || a.Len() != n {
			t.Fatalf("trial %d: total %d, len %d; want %d, %d", trial, a.Total(), a.Len(), sum, n)
		}
		if sum == 0 {
			continue
		}
		mass := make([]uint64, n)
		for j := range n {
			if a.keep[j] > sum || int(a.other[j]) >= n {
				t.Fatalf("trial %d: column %d keeps %d of %d, other %d", trial, j, a.keep[j], sum, a.other[j])
			}
			mass[j] += a.keep[j]
			mass[a.other[j]] += sum - a.keep[j]
		}
		for i := range n {
			if mass[i] != uint64(w[i])*uint64(n) {
				t.Fatalf("trial %d: index %d has mass %d, want %d·%d", trial, i, mass[i], w[i], n)
			}
		}
	}
	if a := New([]uint32{0, 0}); a.Total() != 0 {
		t.Fatalf("all zero: total %d", a.Total())
	}
}

// Draws follow the weights, and an index of weight 0 is never drawn.
func TestAliasDraws(t *testing.T) {
	w := []uint32{0, 1, 2, 7, 0}
	a := New(w)
	rng := rand.New(rand.NewPCG(3, 4))
	counts := make([]int, len(w))
	const draws = 1000000
	for range draws {
		counts[a.Draw(rng.Uint64())]++
	}
	for i, x := range w {
		want := draws * int(x) / 10
		if counts[i] < want*98/100 || counts[i] > want*102/100 {
			t.Errorf("index %d (weight %d) drawn %d times of %d, want about %d", i, x, counts[i], draws, want)
		}
	}
}
