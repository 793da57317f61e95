package model

import (
	"os"
	"sync/atomic"
	"unsafe"
)

// Large tables are touched at random rows: on 4 KiB pages nearly every row
// access misses the TLB. On Linux the arrays of a table (and a worker's
// row→slot index) are therefore advised to the kernel as transparent huge
// pages before they are first written (hugepage_linux.go); elsewhere
// nothing is done. The advice changes where the memory lies, never its
// values: results are the same bits either way.

// hugePages is whether new tables ask for huge pages: on unless the
// environment sets BATCHPREP_HUGEPAGES=off (or 0, false), or SetHugePages
// turns it off.
var hugePages atomic.Bool

func init() {
	switch os.Getenv("BATCHPREP_HUGEPAGES") {
	case "off", "0", "false":
	default:
		hugePages.Store(true)
	}
}

// SetHugePages sets whether tables allocated from now on ask the operating
// system for transparent huge pages or for small ones (Linux; elsewhere it
// changes nothing), and returns the previous setting. It is on by default;
// benchmarks turn it off for a baseline in the same run, as
// BATCHPREP_HUGEPAGES=off does for a process. Training results do not
// depend on it.
func SetHugePages(on bool) bool { return hugePages.Swap(on) }

// hugeMin is the smallest array advised: below it the TLB covers the array
// anyway, and its 2 MiB-aligned interior is small or empty.
const hugeMin = 4 << 20

// makeHuge returns a zeroed slice of n elements whose memory, when large,
// has been advised as huge pages (or, with SetHugePages(false), as small
// ones) before anything wrote to it.
func makeHuge[T float32 | int32](n int) []T {
	s := make([]T, n)
	var zero T
	if size := uintptr(n) * unsafe.Sizeof(zero); size >= hugeMin {
		advisePages(unsafe.Pointer(unsafe.SliceData(s)), size, hugePages.Load())
	}
	return s
}
