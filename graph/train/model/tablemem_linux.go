package model

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mapFloats maps n zeroed float32 outside the Go heap, advised as huge
// pages when large (see SetMemoryHints), and returns them with the mapping
// to give to unmapBytes. A system that refuses the mapping is out of
// memory: the process stops as it would when the Go heap cannot grow.
func mapFloats(n int) ([]float32, []byte) {
	if n == 0 {
		return []float32{}, nil
	}
	mem, err := unix.Mmap(-1, 0, 4*n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		panic(fmt.Sprintf("model: mapping a table of %d MiB: %v", (4*n)>>20, err))
	}
	if len(mem) >= hugeMin {
		advisePages(unsafe.Pointer(unsafe.SliceData(mem)), uintptr(len(mem)), memHints.Load())
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(mem))), n), mem
}

// unmapBytes gives a mapping back to the system (nil: nothing).
func unmapBytes(mem []byte) {
	if mem != nil {
		if err := unix.Munmap(mem); err != nil {
			panic(fmt.Sprintf("model: unmapping a table: %v", err))
		}
	}
}
