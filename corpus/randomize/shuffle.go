package randomize

import (
	"math/bits"
	"math/rand/v2"
)

// uniform returns an integer uniformly distributed over [0, n), n > 0,
// from g's 64-bit outputs by Lemire's multiply-and-reject method: the high
// word of x*n for a 64-bit x, drawing again while the low word falls below
// 2^64 mod n. No modulo bias; the draw count is fixed by the stream.
func uniform(g *rand.PCG, n uint64) uint64 {
	hi, lo := bits.Mul64(g.Uint64(), n)
	if lo < n {
		floor := -n % n // 2^64 mod n
		for lo < floor {
			hi, lo = bits.Mul64(g.Uint64(), n)
		}
	}
	return hi
}

// fisherYates shuffles a uniformly, front to back: for i from 0 to len-1,
// swap a[i] with a[i+uniform(len-i)]. Step i fixes position i for good, so
// the first k positions of a shuffle can be produced by k steps: the window
// cursor runs the steps lazily, one per sequence it yields.
func fisherYates[T any](a []T, g *rand.PCG) {
	for i := range a {
		fisherYatesStep(a, i, g)
	}
}

// fisherYatesStep is step i of fisherYates.
func fisherYatesStep[T any](a []T, i int, g *rand.PCG) {
	j := i + int(uniform(g, uint64(len(a)-i)))
	a[i], a[j] = a[j], a[i]
}
