//go:build !amd64 || purego

package kern

// asmKernels reports that no assembly kernels are built: another
// architecture, or the purego build tag.
func asmKernels() (kernels, bool) { return kernels{}, false }
