package bucket

import (
	"math/rand/v2"

	"github.com/batchprep/batchprep/graph"
)

// Buffer is the order name of the buffer-aware order (bucket_order =
// "buffer"): with a buffer of c partitions in memory, it visits the
// buckets so that each partition load makes as many untrained buckets
// trainable as the buffer allows.
const Buffer = "buffer"

// BufferStates returns the sequence of buffer contents the buffer order
// walks for n partitions and a buffer of c >= 2, in the order's own labels
// 0..n-1 (BufferOrder relabels them at random). Every pair of partitions
// is together in some state, and consecutive states differ in as few
// partitions as the construction allows:
//
//	while more than c partitions are left unfinished (U):
//	  fix g, the first c-1 of U (the one resident partition of the
//	  previous state that is in U, if any, goes to the sweep instead);
//	  sweep: one state g + {x} for each other x of U, the resident x
//	  first; then g is finished (every pair with one end in g is done)
//	finally one state holding all of U (at most c partitions)
//
// Each sweep state after the first costs one load, each new fixed group
// c-1 loads: at n = 16 that is 121 loads with c = 2, 46 with c = 4 and 25
// with c = 8 (LowerBound: 121, 42 and 22).
func BufferStates(n, c int) [][]int {
	if c < 2 {
		panic("bucket: a buffer holds at least 2 partitions")
	}
	u := make([]int, n)
	for i := range u {
		u[i] = i
	}
	var states [][]int
	resident := -1 // the swept partition left in the buffer by the last sweep
	for len(u) > c {
		var g, sweep []int
		for _, p := range u {
			if p != resident && len(g) < c-1 {
				g = append(g, p)
			} else if p == resident {
				sweep = append([]int{p}, sweep...)
			} else {
				sweep = append(sweep, p)
			}
		}
		for _, x := range sweep {
			states = append(states, append(append([]int(nil), g...), x))
		}
		resident = sweep[len(sweep)-1]
		u = sweep
	}
	return append(states, u)
}

// BufferOrder returns the buffer order of an l x r grid for a buffer of c
// partitions. When 2c >= n = max(l, r) > c, it tries up to swapAttempts
// greedy walks (SwapStates) and keeps the first whose order causes no more
// loads (BufferLoads) than the fixed-group walk's; otherwise, and when
// none does, it takes the states of BufferStates over n partitions,
// relabelled by a uniformly random permutation. Each bucket goes to the
// first state holding both its partitions, and the buckets of a state come
// in uniformly random order. The draws are: one Shuffle of the labels and
// one Shuffle per state with buckets for the fixed-group order, then for
// each greedy attempt its walk's draws and its states' Shuffles.
func BufferOrder(l, r, c int, rng *rand.Rand) []graph.Bucket {
	n := max(l, r)
	label := make([]int, n)
	for i := range label {
		label[i] = i
	}
	rng.Shuffle(n, func(i, j int) { label[i], label[j] = label[j], label[i] })
	states := BufferStates(n, c)
	for _, st := range states {
		for k, s := range st {
			st[k] = label[s]
		}
	}
	out := statesOrder(l, r, states, rng)
	if 2*c < n || c >= n {
		return out
	}
	fixed := BufferLoads(out, c)
	for range swapAttempts {
		if st := SwapStates(l, r, c, rng); st != nil {
			if o := statesOrder(l, r, st, rng); BufferLoads(o, c) <= fixed {
				return o
			}
		}
	}
	return out
}

// statesOrder puts each bucket of the l x r grid in the first of states
// that holds both its partitions, the buckets of a state in random order
// (one Shuffle per state with buckets).
func statesOrder(l, r int, states [][]int, rng *rand.Rand) []graph.Bucket {
	done := make([]bool, l*r)
	out := make([]graph.Bucket, 0, l*r)
	for _, st := range states {
		start := len(out)
		for _, i := range st {
			// the state's new buckets: row i and column i against the state
			for _, j := range st {
				if i < l && j < r && !done[i*r+j] {
					done[i*r+j] = true
					out = append(out, graph.Bucket{Lhs: i, Rhs: j})
				}
			}
		}
		part := out[start:]
		rng.Shuffle(len(part), func(a, b int) { part[a], part[b] = part[b], part[a] })
	}
	return out
}
