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
func Iota(n int) []int32 { return take(&shared.iota, n, func(i int) int32 { return int32(i) }) }

// Ones returns a read-only slice of n ones (capacity n), shared with
// every other caller.
func Ones(n int) []float32 { return take(&shared.ones, n, func(int) float32 { return 1 }) }

// SharedIota reports whether a is (a prefix of) an array Iota returned.
func SharedIota(a []int32) bool { return madeHere(a, &shared.iota) }

// SharedOnes reports whether a is (a prefix of) an array Ones returned.
func SharedOnes(a []float32) bool { return madeHere(a, &shared.ones) }

// IsIota reports whether a is 0, 1, ..., len(a)-1 (row starts of one
// entry per sample), so that Iota can stand for it.
func IsIota(a []int32) bool {
	for i, v := range a {
		if v != int32(i) {
			return false
		}
	}
	return true
}

// AllOnes reports whether every value of a is 1, so that Ones can stand
// for it.
func AllOnes(a []float32) bool {
	for _, v := range a {
		if v != 1 {
			return false
		}
	}
	return true
}

// take returns the first n elements of the largest array made, after
// making a larger one (element i is at(i)) when it is too short: at least
// twice the last, so that few are ever made.
func take[T any](made *[][]T, n int, at func(int) T) []T {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	last := 0
	if k := len(*made); k > 0 {
		if a := (*made)[k-1]; len(a) >= n {
			return a[:n:n]
		}
		last = len((*made)[k-1])
	}
	a := make([]T, max(n, 2*last, minShared))
	for i := range a {
		a[i] = at(i)
	}
	*made = append(*made, a)
	return a[:n:n]
}

// madeHere reports whether a starts where one of made's arrays does.
func madeHere[T any](a []T, made *[][]T) bool {
	if cap(a) == 0 {
		return false
	}
	p := &a[:1][0]
	shared.mu.Lock()
	defer shared.mu.Unlock()
	for _, s := range *made {
		if p == &s[0] {
			return true
		}
	}
	return false
}
