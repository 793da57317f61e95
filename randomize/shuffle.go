package randomize

import (
	"math/bits"
	"math/rand/v2"
)

// uniform returns an integer uniformly distributed over [0, n), n > 0,
// from g's 64-bit outputs by Lemire's multiply-and-reject method: the high
// word of x*n for a 64-bit x, drawing again while the low word falls below
// 2^64 mod n. No modulo bias; the draw count is fixed by the stream.
func uniform(g *rand.Rand, n uint64) uint64 {
	hi, lo := bits.Mul64(g.Uint64(), n)
	if lo < n {
		floor := -n % n // 2^64 mod n
		for lo < floor {
			hi, lo = bits.Mul64(g.Uint64(), n)
		}
	}
	return hi
}

// fisherYates shuffles a uniformly: for i from len-1 down to 1, swap a[i]
// with a[uniform(i+1)].
func fisherYates[T any](a []T, g *rand.Rand) {
	for i := len(a) - 1; i > 0; i-- {
		j := uniform(g, uint64(i+1))
		a[i], a[j] = a[j], a[i]
	}
}
