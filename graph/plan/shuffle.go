package plan

import (
	"math/bits"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/batchprep/batchprep/internal/mix"
)

func trailingZeros(x uint32) int { return bits.TrailingZeros32(x) }

// Shuffle layout: the m training positions are spread over K blocks (K a
// power of two, about m/blockTarget, at most maxBlocks): each position goes
// to a uniformly random block, in position order, then every block is
// Fisher-Yates shuffled on its own. Concatenating the blocks gives a uniform
// permutation: given the block sizes, each block receives a uniformly random
// subset of that size, and its own shuffle orders it uniformly. K and the
// streams depend only on m and the coordinates, so the result does not depend
// on how many goroutines shuffle the blocks (invariant 7).
const (
	blockTarget = 1 << 15
	maxBlocks   = 256
)

// numBlocks is the power of two nearest above m/blockTarget, in [1, maxBlocks].
func numBlocks(m int) int {
	k := 1
	for k < maxBlocks && k*blockTarget < m {
		k <<= 1
	}
	return k
}

// coords identifies one bucket of one pass.
type coords struct {
	epoch, set, chunk, lhs, rhs uint64
}

// shuffleTrain writes the positions of [0, n) not marked in marks (nil: none
// marked) to dst (len = their count) in uniformly random order.
func shuffleTrain(dst []uint32, marks []uint32, n int, seed uint64, c coords, parallel int) {
	m := len(dst)
	k := numBlocks(m)
	if k == 1 {
		fill(dst, marks, n)
		fisherYates(dst, mix.Rand(seed, tagShuffleBlk, c.epoch, c.set, c.chunk, c.lhs, c.rhs, 0))
		return
	}
	var counts [maxBlocks + 1]int
	mask := uint64(k - 1)
	// Pass 1 counts each block's size, pass 2 replays the same draws and
	// scatters. One 64-bit draw gives eight 8-bit block numbers.
	assign := func(visit func(i int, blk uint64)) {
		rng := mix.Rand(seed, tagShuffle, c.epoch, c.set, c.chunk, c.lhs, c.rhs)
		var word uint64
		left := 0
		for i := 0; i < n; i++ {
			if marks != nil && marked(marks, i) {
				continue
			}
			if left == 0 {
				word, left = rng.Uint64(), 8
			}
			visit(i, word&mask)
			word >>= 8
			left--
		}
	}
	assign(func(_ int, b uint64) { counts[b+1]++ })
	for b := 1; b <= k; b++ {
		counts[b] += counts[b-1]
	}
	starts := counts
	assign(func(i int, b uint64) { dst[counts[b]] = uint32(i); counts[b]++ })
	var next atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < min(parallel, k); g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := int(next.Add(1) - 1); b < k; b = int(next.Add(1) - 1) {
				fisherYates(dst[starts[b]:starts[b+1]], mix.Rand(seed, tagShuffleBlk, c.epoch, c.set, c.chunk, c.lhs, c.rhs, uint64(b)))
			}
		}()
	}
	wg.Wait()
}

// fill writes the unmarked positions of [0, n) to dst in order.
func fill(dst, marks []uint32, n int) {
	j := 0
	for i := 0; i < n; i++ {
		if marks == nil || !marked(marks, i) {
			dst[j] = uint32(i)
			j++
		}
	}
}

// fisherYates shuffles a uniformly (unbiased bounded draws).
func fisherYates(a []uint32, rng *rand.Rand) {
	for i := len(a) - 1; i > 0; i-- {
		j := rng.Uint32N(uint32(i + 1))
		a[i], a[j] = a[j], a[i]
	}
}

func parallelism() int { return runtime.GOMAXPROCS(0) }
