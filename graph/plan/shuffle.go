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
// to a uniformly random block, then every block is Fisher-Yates shuffled on
// its own. Concatenating the blocks gives a uniform permutation: given the
// block sizes, each block receives a uniformly random subset of that size,
// and its own shuffle orders it uniformly. The block draws are made per
// segment of segmentLen positions (one stream per segment), so segments can
// be assigned in parallel; inside a block, positions keep their order. K,
// the segments and every stream depend only on n, m and the coordinates, so
// the result does not depend on how many goroutines do the work
// (invariant 7).
const (
	maxBlocks  = 256
	segmentLen = 1 << 20
)

// blockTarget is the block size the shuffle aims at (512 KiB of uint32,
// about an L2 cache). It is fixed: changing it changes every plan. Tests
// lower it to reach the blocked path on small inputs.
var blockTarget = 1 << 17

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

// parallelFor calls f(0..count-1) on up to parallel goroutines.
func parallelFor(count, parallel int, f func(i int)) {
	if parallel <= 1 || count <= 1 {
		for i := 0; i < count; i++ {
			f(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < min(parallel, count); g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < count; i = int(next.Add(1) - 1) {
				f(i)
			}
		}()
	}
	wg.Wait()
}

// shuffleTrain writes the positions of [0, n) not marked in marks (nil: none
// marked) to dst (len = their count) in uniformly random order. With pk
// set, each value is packed with the position's relation (pk.pack).
func shuffleTrain(dst []uint32, marks []uint32, n int, seed uint64, c coords, parallel int, pk *packing) {
	var sh blockShuffle
	sh.init(n, len(dst), seed, c)
	sh.count(marks, parallel)
	sh.place(dst, marks, parallel, pk)
}

// blockShuffle is one shuffle (shuffleTrain) split in two phases: count
// needs only the holdout marks, so it can run while the chunk's columns
// load; place needs the relation column when packing. The buffers are
// reused from one shuffle to the next.
type blockShuffle struct {
	seed   uint64
	c      coords
	n, m   int
	k      int // blocks
	segs   int
	counts [][maxBlocks]int // per segment: block sizes, then next slots
	starts [maxBlocks + 1]int
}

// init sets up the shuffle of the m unmarked positions of [0, n).
func (sh *blockShuffle) init(n, m int, seed uint64, c coords) {
	sh.seed, sh.c, sh.n, sh.m = seed, c, n, m
	sh.k = numBlocks(m)
	sh.segs = 0
	if sh.k > 1 {
		sh.segs = (n + segmentLen - 1) / segmentLen
	}
	if cap(sh.counts) < sh.segs {
		sh.counts = make([][maxBlocks]int, sh.segs)
	}
	sh.counts = sh.counts[:sh.segs]
	clear(sh.counts)
}

func (sh *blockShuffle) segRand(s int) *rand.Rand {
	c := sh.c
	return mix.Rand(sh.seed, tagShuffle, c.epoch, c.set, c.chunk, c.lhs, c.rhs, uint64(s))
}

func (sh *blockShuffle) blockRand(b int) *rand.Rand {
	c := sh.c
	return mix.Rand(sh.seed, tagShuffleBlk, c.epoch, c.set, c.chunk, c.lhs, c.rhs, uint64(b))
}

// count draws every position's block (first pass) and computes where each
// block starts.
func (sh *blockShuffle) count(marks []uint32, parallel int) {
	if sh.k == 1 {
		return
	}
	n, mask := sh.n, uint64(sh.k-1)
	parallelFor(sh.segs, parallel, func(s int) {
		countSegment(&sh.counts[s], marks, s*segmentLen, min(n, (s+1)*segmentLen), sh.segRand(s), mask)
	})
	off := 0
	for b := 0; b < sh.k; b++ {
		sh.starts[b] = off
		for s := range sh.counts {
			c := sh.counts[s][b]
			sh.counts[s][b] = off
			off += c
		}
	}
	sh.starts[sh.k] = off
}

// place writes every position to its block (second pass, the same draws)
// and shuffles each block.
func (sh *blockShuffle) place(dst, marks []uint32, parallel int, pk *packing) {
	if sh.k == 1 {
		fill(dst, marks, sh.n, pk)
		fisherYates(dst, sh.blockRand(0))
		return
	}
	n, mask := sh.n, uint64(sh.k-1)
	parallelFor(sh.segs, parallel, func(s int) {
		assignSegment(dst, &sh.counts[s], marks, s*segmentLen, min(n, (s+1)*segmentLen), sh.segRand(s), mask, pk)
	})
	parallelFor(sh.k, parallel, func(b int) {
		fisherYates(dst[sh.starts[b]:sh.starts[b+1]], sh.blockRand(b))
	})
}

// countSegment counts in cnt how many of the unmarked positions of [lo, hi)
// (lo a multiple of 32; hi a multiple of 32 or the end of the bitmap's
// positions) assignSegment will send to each block: it makes the same
// draws in the same order, the i-th unmarked position taking the i-th byte,
// but needs only how many positions are unmarked, not which.
func countSegment(cnt *[maxBlocks]int, marks []uint32, lo, hi int, rng *rand.Rand, mask uint64) {
	c := hi - lo
	if marks != nil {
		for _, w := range marks[lo>>5 : (hi+31)>>5] {
			c -= bits.OnesCount32(w)
		}
	}
	var c0, c1 [maxBlocks]int32 // two tables halve the store-to-load chains
	for ; c >= 8; c -= 8 {
		w := rng.Uint64()
		c0[w&mask]++
		c1[w>>8&mask]++
		c0[w>>16&mask]++
		c1[w>>24&mask]++
		c0[w>>32&mask]++
		c1[w>>40&mask]++
		c0[w>>48&mask]++
		c1[w>>56&mask]++
	}
	if c > 0 {
		w := rng.Uint64()
		for ; c > 0; c-- {
			c0[w&mask]++
			w >>= 8
		}
	}
	for b := range cnt {
		cnt[b] += int(c0[b]) + int(c1[b])
	}
}

// assignSegment draws a block for every unmarked position of [lo, hi), one
// 8-bit draw each (eight per 64-bit value, low byte first), and writes the
// positions (packed with pk when set) to dst at each block's next slot,
// cnt. countSegment counts the same draws. With dst nil it only counts (the
// reference countSegment is tested against).
func assignSegment(dst []uint32, cnt *[maxBlocks]int, marks []uint32, lo, hi int, rng *rand.Rand, mask uint64, pk *packing) {
	var word uint64
	left := 0
	var rel []uint32
	var shift uint
	if pk != nil {
		rel, shift = pk.rel, pk.shift
	}
	for w := lo; w < hi; w += 32 {
		// Unmarked positions of the next (up to) 32, as set bits.
		end := min(hi, w+32)
		free := uint32(1)<<(end-w) - 1
		if end-w == 32 {
			free = ^uint32(0)
		}
		if marks != nil {
			free &^= marks[w>>5]
		}
		for free != 0 {
			i := w + bits.TrailingZeros32(free)
			free &= free - 1
			if left == 0 {
				word, left = rng.Uint64(), 8
			}
			b := word & mask
			word >>= 8
			left--
			if dst == nil {
				cnt[b]++
				continue
			}
			v := uint32(i)
			if rel != nil {
				v |= rel[i] << shift
			}
			dst[cnt[b]] = v
			cnt[b]++
		}
	}
}

// fill writes the unmarked positions of [0, n) to dst in order.
func fill(dst, marks []uint32, n int, pk *packing) {
	j := 0
	for i := 0; i < n; i++ {
		if marks == nil || !marked(marks, i) {
			if pk != nil {
				dst[j] = pk.pack(i)
			} else {
				dst[j] = uint32(i)
			}
			j++
		}
	}
}

// packing stores a row and its relation in one uint32 (relation in the top
// bits) so that grouping by relation after the shuffle reads the relation
// from the shuffled array instead of from the column at random places.
type packing struct {
	rel   []uint32
	shift uint
	mask  uint32
}

// newPacking returns a packing for n rows and relations < numRel, or nil
// when they do not fit in 32 bits together.
func newPacking(rel []uint32, numRel int) *packing {
	idx := bits.Len32(uint32(len(rel)))
	r := bits.Len32(uint32(numRel - 1))
	if idx+r > 32 || len(rel) >= 1<<32-1 {
		return nil
	}
	return &packing{rel: rel, shift: uint(idx), mask: uint32(uint64(1)<<idx - 1)}
}

func (p *packing) pack(i int) uint32 { return p.rel[i]<<p.shift | uint32(i) }

// fisherYates shuffles a uniformly. Each 64-bit draw gives two 32-bit
// halves, each turned into an unbiased index below i+1 by Lemire's
// multiply-and-reject method.
func fisherYates(a []uint32, rng *rand.Rand) {
	var word uint64
	half := 0 // 32-bit halves left in word
	for i := len(a) - 1; i > 0; i-- {
		bound := uint32(i + 1)
		var m uint64
		for {
			if half == 0 {
				word, half = rng.Uint64(), 2
			}
			m = uint64(uint32(word)) * uint64(bound)
			word >>= 32
			half--
			// Accept unless m falls in the biased low zone; the threshold
			// (2^32 mod bound) is computed only when needed.
			if uint32(m) >= bound || uint32(m) >= -bound%bound {
				break
			}
		}
		j := uint32(m >> 32)
		a[i], a[j] = a[j], a[i]
	}
}

func parallelism() int { return runtime.GOMAXPROCS(0) }
