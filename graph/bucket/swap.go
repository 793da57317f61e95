package bucket

import (
	"math/rand/v2"
	"slices"
)

// swapAttempts is how many greedy walks BufferOrder tries before it keeps
// the fixed-group walk (BufferStates).
const swapAttempts = 16

// SwapStates returns a walk through buffer states for n partitions and a
// buffer of c (2 <= c < n), made greedily: the first state is c partitions
// drawn at random; each next state swaps one resident partition for one
// outside so that the swap makes the most untrained pairs resident
// (a partition with itself counts too), evicting first the partition with
// the fewest untrained pairs left outside the buffer, then the one loaded
// earliest, then at random. It stops when every pair (i, j) with i < l,
// j < r or j < l, i < r has been resident together, and returns nil when
// it does not within n*n swaps.
//
// Unlike BufferStates, where a partition passing through the last slot
// stays for one state and a fixed group leaves for good halfway through
// the walk, the greedy walk keeps most partitions resident for several
// states and brings many of them back near the end, so that fewer
// partitions go untrained for long before the pass ends. It matches
// BufferStates' load count only when c is at least about n/2 (at n = 16:
// in about half the walks with c = 8, never with c = 4), which is why
// BufferOrder tries it only there.
func SwapStates(l, r, c int, rng *rand.Rand) [][]int {
	n := max(l, r)
	need := make([]bool, n*n) // need[i*n+j]: pair {i, j} not yet resident together
	left := 0
	for i := range n {
		for j := i; j < n; j++ {
			if i < l && j < r || j < l && i < r {
				need[i*n+j], need[j*n+i] = true, true
				left++
			}
		}
	}
	in := make([]bool, n)
	loaded := make([]int, n) // the swap that loaded each resident partition
	resident := rng.Perm(n)[:c]
	settle := func() { // mark the pairs of the buffer trained
		for _, x := range resident {
			in[x] = true
			for _, y := range resident {
				if need[x*n+y] {
					need[x*n+y], need[y*n+x] = false, false
					left--
				}
			}
		}
	}
	settle()
	states := [][]int{append([]int(nil), resident...)}
	outside := make([]int, c) // untrained pairs of each resident with partitions outside
	for step := 1; left > 0; step++ {
		if step > n*n {
			return nil
		}
		for k, e := range resident {
			outside[k] = 0
			for y := range n {
				if !in[y] && need[e*n+y] {
					outside[k]++
				}
			}
		}
		bk, bx := -1, -1
		var best [3]int // gain, -outside, -loaded: larger is better
		ties := 0
		for x := range n {
			if in[x] {
				continue
			}
			gain := 0
			if need[x*n+x] {
				gain++
			}
			for _, y := range resident {
				if need[x*n+y] {
					gain++
				}
			}
			for k, e := range resident {
				g := gain
				if need[x*n+e] {
					g-- // e leaves: the pair {x, e} stays untrained
				}
				key := [3]int{g, -outside[k], -loaded[e]}
				switch {
				case bk < 0 || slices.Compare(best[:], key[:]) < 0:
					bk, bx, best, ties = k, x, key, 1
				case key == best:
					// reservoir choice among equal keys, uniformly at random
					ties++
					if rng.IntN(ties) == 0 {
						bk, bx = k, x
					}
				}
			}
		}
		in[resident[bk]] = false
		resident[bk] = bx
		loaded[bx] = step
		settle()
		states = append(states, append([]int(nil), resident...))
	}
	return states
}
