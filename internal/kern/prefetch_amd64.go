//go:build !purego

package kern

import "unsafe"

// prefetch issues PREFETCHT0 for every 64-byte line of the n > 0 bytes at
// p (prefetch_amd64.s).
//
//go:noescape
func prefetch(p unsafe.Pointer, n uintptr)
