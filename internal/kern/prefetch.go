package kern

import "unsafe"

// Prefetch asks the CPU to bring x's memory into its caches ahead of use
// (PREFETCHT0 for each 64-byte line on amd64; nothing elsewhere and under
// the build tag purego). It reads and writes nothing, cannot fault, and
// changes no result: a hint for loops over rows at random places in a
// large table, issued a few rows ahead of the one they work on.
func Prefetch[T int32 | float32](x []T) {
	if len(x) > 0 {
		prefetch(unsafe.Pointer(unsafe.SliceData(x)), uintptr(len(x))*4)
	}
}

// PrefetchInt32 is Prefetch for the line holding *p.
func PrefetchInt32(p *int32) { prefetch(unsafe.Pointer(p), 4) }

// PrefetchLine is Prefetch for the cache line holding the byte at p.
func PrefetchLine(p unsafe.Pointer) { prefetch(p, 1) }
