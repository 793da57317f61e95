package corpus

import "sync"

// Sparse streams of one-hot inputs (a word id per sample, written
// "index:1") have one entry per sample and every value 1. A chunk of such a
// stream may hold, instead of arrays of its own, read-only arrays shared by
// every chunk: Iota for RowStart (0, 1, ..., n) and Ones for Values. They
// cost no memory per chunk, no writes when a chunk is parsed and no page
// faults when a window of chunks is filled.
//
// Nothing may write into a chunk's arrays (they may be shared); a
// Recycler's LoadChunk tells shared arrays from its own with SharedIota and
// SharedOnes and does not reuse them.
var shared struct {
	mu   sync.Mutex
	iota [][]int32   // every array handed out, the largest last
	ones [][]float32 // the same for Ones
}

// minShared is the smallest shared array allocated.
const minShared = 1 << 12

// Iota returns the read-only slice 0, 1, ..., n-1 (capacity n), shared
// with every other caller.
func Iota(n int) []int32 {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if k := len(shared.iota); k > 0 && len(shared.iota[k-1]) >= n {
		return shared.iota[k-1][:n:n]
	}
	a := make([]int32, grownSize(n, shared.iota))
	for i := range a {
		a[i] = int32(i)
	}
	shared.iota = append(shared.iota, a)
	return a[:n:n]
}

// Ones returns a read-only slice of n ones (capacity n), shared with
// every other caller.
func Ones(n int) []float32 {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if k := len(shared.ones); k > 0 && len(shared.ones[k-1]) >= n {
		return shared.ones[k-1][:n:n]
	}
	a := make([]float32, grownSize(n, shared.ones))
	for i := range a {
		a[i] = 1
	}
	shared.ones = append(shared.ones, a)
	return a[:n:n]
}

// grownSize is the size of the next shared array for a request of n, given
// the arrays made so far: at least twice the last, so that few are made.
func grownSize[T any](n int, made [][]T) int {
	last := 0
	if k := len(made); k > 0 {
		last = len(made[k-1])
	}
	return max(n, 2*last, minShared)
}

// SharedIota reports whether a is (a prefix of) an array Iota returned.
func SharedIota(a []int32) bool {
	if cap(a) == 0 {
		return false
	}
	p := &a[:1][0]
	shared.mu.Lock()
	defer shared.mu.Unlock()
	for _, s := range shared.iota {
		if p == &s[0] {
			return true
		}
	}
	return false
}

// SharedOnes reports whether a is (a prefix of) an array Ones returned.
func SharedOnes(a []float32) bool {
	if cap(a) == 0 {
		return false
	}
	p := &a[:1][0]
	shared.mu.Lock()
	defer shared.mu.Unlock()
	for _, s := range shared.ones {
		if p == &s[0] {
			return true
		}
	}
	return false
}
