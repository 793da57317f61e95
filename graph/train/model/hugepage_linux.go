package model

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugePageSize is the size of an x86-64 and arm64 transparent huge page.
const hugePageSize = 2 << 20

// advisePages advises the 2 MiB-aligned interior of the n bytes at p.
// With huge, as huge pages (MADV_HUGEPAGE: later page faults there take a
// whole huge page when the system's THP mode is "madvise" or "always"),
// then it asks the kernel to collapse whatever of it is already backed by
// small pages (MADV_COLLAPSE: memory the Go heap reuses may have been
// written before). Without, as small pages (MADV_NOHUGEPAGE, also undoing
// the advice a table freed there before had given). All of it is advice:
// errors (an old kernel, THP "never", nothing to collapse) leave the
// memory as it was and are ignored.
func advisePages(p unsafe.Pointer, n uintptr, huge bool) {
	off := (hugePageSize - uintptr(p)%hugePageSize) % hugePageSize
	if n < off+hugePageSize {
		return
	}
	b := unsafe.Slice((*byte)(unsafe.Add(p, off)), (n-off)/hugePageSize*hugePageSize)
	if !huge {
		_ = unix.Madvise(b, unix.MADV_NOHUGEPAGE)
		return
	}
	if unix.Madvise(b, unix.MADV_HUGEPAGE) != nil {
		return
	}
	_ = unix.Madvise(b, unix.MADV_COLLAPSE)
}
