//go:build !amd64 || purego

package kern

import "unsafe"

// prefetch does nothing without the assembly.
func prefetch(p unsafe.Pointer, n uintptr) {}
