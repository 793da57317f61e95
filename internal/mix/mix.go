// Package mix derives independent random streams from a seed and a list of
// coordinates (sweep, window, epoch, bucket, ...).
//
// Seeds are combined by hashing, never by adding: Seed(s, 1) and Seed(s+1, 0)
// are unrelated, so run(seed 42) sweep 1 does not replay run(seed 43) sweep 0.
// The mixing function is SplitMix64's finalizer applied to a running state;
// every output is fixed by this file and pinned by golden tests, so changing
// it changes every order batchprep produces.
package mix

import "math/rand/v2"

const golden = 0x9e3779b97f4a7c15

// finalize is the SplitMix64 output function (a bijection on uint64).
func finalize(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Seed folds seed and the coordinates into one 64-bit value. Each coordinate
// is absorbed in turn, so the order of coordinates matters and Seed(s, a, b)
// differs from Seed(s, b, a).
func Seed(seed uint64, coords ...uint64) uint64 {
	h := finalize(seed ^ 0x6a09e667f3bcc909)
	for _, c := range coords {
		h = finalize(finalize(h+golden) ^ c)
	}
	return h
}

// Rand returns a generator (PCG, from math/rand/v2) whose stream depends only
// on seed and coords. Its bounded draws (IntN, Uint64N, Perm, Shuffle) are
// unbiased.
func Rand(seed uint64, coords ...uint64) *rand.Rand {
	return rand.New(PCG(seed, coords...))
}

// PCG returns the source under Rand(seed, coords...): its Uint64 outputs are
// Rand's, without the interface call per draw, for the hot loops that need
// only raw 64-bit draws.
func PCG(seed uint64, coords ...uint64) *rand.PCG {
	h := Seed(seed, coords...)
	return rand.NewPCG(h, finalize(h^golden))
}
