package serve

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestLargestSum: the window's bytes are the sum of the n largest chunks,
// as sorting every size would give.
func TestLargestSum(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, count := range []int{0, 1, 2, 7, 100, 1000} {
		sizes := make([]int64, count)
		for i := range sizes {
			sizes[i] = rng.Int64N(50)
		}
		sorted := slices.Clone(sizes)
		slices.Sort(sorted)
		for _, n := range []int{0, 1, 3, count / 2, count} {
			var want int64
			for _, b := range sorted[count-min(n, count):] {
				want += b
			}
			if got := largestSum(count, min(n, count), func(c int) int64 { return sizes[c] }); got != want {
				t.Errorf("%d sizes, %d largest: %d, want %d", count, n, got, want)
			}
		}
	}
}
