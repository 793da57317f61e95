package importer

import (
	"os"
	"syscall"
	"unsafe"
)

// adviseHuge asks Linux to back a large, randomly accessed table with huge
// pages (transparent huge pages in "madvise" mode, a common default), so
// that its lookups miss the TLB far less often. It is only advice: errors
// are ignored, and the output never depends on it.
func adviseHuge[T any](s []T) {
	if len(s) == 0 {
		return
	}
	size := uintptr(len(s)) * unsafe.Sizeof(s[0])
	if size < hugeMin {
		return
	}
	page := uintptr(os.Getpagesize())
	start := uintptr(unsafe.Pointer(&s[0]))
	lo := (start + page - 1) &^ (page - 1)
	hi := (start + size) &^ (page - 1)
	if hi <= lo {
		return
	}
	b := unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(&s[0]), lo-start)), hi-lo)
	_ = syscall.Madvise(b, syscall.MADV_HUGEPAGE)
}

// hugeMin is the smallest table worth huge pages (a few of them).
const hugeMin = 8 << 20
