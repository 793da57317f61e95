package model

import (
	"os"
	"sync/atomic"
	"unsafe"
)

// Large tables are touched at random rows: with the rows no longer in
// cache, nearly every row access misses the TLB and the caches. Two hints
// to the machine hide part of that cost (the memory hints):
//   - on Linux the arrays of a table (and a worker's row→slot index) are
//     advised to the kernel as transparent huge pages before they are first
//     written (hugepage_linux.go; elsewhere nothing is done);
//   - a Worker prefetches the rows it gathers and updates, and the slots it
//     looks up, prefetchAhead rows ahead (kern.Prefetch);
//   - a Worker gives the uniform negatives that occur once in a batch their
//     Adagrad step while they are still in cache (early updates, early.go).
//
// None changes a value or the order of any arithmetic on a value: results
// are the same bits either way.

// memHints is whether new tables and Workers use the memory hints: on
// unless the environment sets BATCHPREP_MEMORY_HINTS=off (or 0, false),
// or SetMemoryHints turns them off.
var memHints atomic.Bool

func init() {
	switch os.Getenv("BATCHPREP_MEMORY_HINTS") {
	case "off", "0", "false":
	default:
		memHints.Store(true)
	}
}

// SetMemoryHints sets whether tables allocated and Workers made from now
// on use the memory hints for large tables: transparent huge pages (Linux;
// with the hints off, tables ask for small pages), rows prefetched ahead
// of use (amd64) and early updates. It returns the previous setting. The
// hints are on by default; benchmarks turn them off for a baseline in the
// same run, as BATCHPREP_MEMORY_HINTS=off does for a process. Training
// results do not depend on them.
func SetMemoryHints(on bool) bool { return memHints.Swap(on) }

// prefetchAhead is how many rows ahead a Worker prefetches: about the
// memory latency over the time one row's work takes.
const prefetchAhead = 4

// hugeMin is the smallest array advised: below it the TLB covers the array
// anyway, and its 2 MiB-aligned interior is small or empty.
const hugeMin = 4 << 20

// makeHuge returns a zeroed slice of n elements whose memory, when large,
// has been advised as huge pages (or, with the hints off, as small ones)
// before anything wrote to it.
func makeHuge[T float32 | int32](n int) []T {
	s := make([]T, n)
	var zero T
	if size := uintptr(n) * unsafe.Sizeof(zero); size >= hugeMin {
		advisePages(unsafe.Pointer(unsafe.SliceData(s)), size, memHints.Load())
	}
	return s
}
