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
	mem := mapBytes(4*n, true)
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(mem))), n), mem
}

// mapBytes maps n > 0 zeroed bytes outside the Go heap; when huge and the
// mapping is large, it is advised as huge pages (see SetMemoryHints).
// Pages count in the process's resident memory once written.
func mapBytes(n int, huge bool) []byte {
	mem, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		panic(fmt.Sprintf("model: mapping %d MiB: %v", n>>20, err))
	}
	if huge && len(mem) >= hugeMin {
		advisePages(unsafe.Pointer(unsafe.SliceData(mem)), uintptr(len(mem)), memHints.Load())
	}
	return mem
}

// remapBytes grows the mapping mem to n bytes, keeping its contents: the
// kernel moves its pages when it cannot extend it in place, so nothing is
// copied and no second copy is ever resident. mem is invalid afterwards.
func remapBytes(mem []byte, n int) []byte {
	out, err := unix.Mremap(mem, n, unix.MREMAP_MAYMOVE)
	if err != nil {
		panic(fmt.Sprintf("model: growing a mapping to %d MiB: %v", n>>20, err))
	}
	return out
}

// unmapBytes gives a mapping back to the system (nil: nothing).
func unmapBytes(mem []byte) {
	if mem != nil {
		if err := unix.Munmap(mem); err != nil {
			panic(fmt.Sprintf("model: unmapping %d MiB: %v", len(mem)>>20, err))
		}
	}
}
