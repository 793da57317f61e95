//go:build !purego

package kern

import "golang.org/x/sys/cpu"

// The assembly kernels. Every pointer they receive has been checked by the
// exported wrappers (check.go) to cover the elements the kernel touches.

//go:noescape
func dotAVX(a, b *float32, n int) float32

//go:noescape
func axpyAVX(alpha float32, x, y *float32, n int)

//go:noescape
func ntKernel3x4(groups, k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int, acc bool)

//go:noescape
func ntKernel1x4(rows, k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int, acc bool)

//go:noescape
func opKernel5x16(tiles, k int, a *float32, rs, cs int, b *float32, ldb int, c *float32, ldc int, acc bool)

//go:noescape
func opKernel5x16Mask(tiles, k int, a *float32, rs, cs int, b *float32, ldb int, c *float32, ldc int, mask *int32, w int, scratch *float32, acc bool)

//go:noescape
func expSubSumAVX(x *float32, n int, m float32) (sum, check float32)

//go:noescape
func maxAVX(x *float32, n int) float32

//go:noescape
func scaleAVX(alpha float32, x *float32, n int)

//go:noescape
func opKernel10x8Mask(tiles, k int, a *float32, rs, cs int, b *float32, ldb int, c *float32, ldc int, mask *int32, w int, scratch *float32, acc bool)

// asmKernels returns the AVX2+FMA kernels when the CPU (and the OS, which
// must save the YMM registers) supports them.
func asmKernels() (kernels, bool) {
	if !cpu.X86.HasAVX2 || !cpu.X86.HasFMA {
		return kernels{}, false
	}
	return kernels{
		name:    "avx2",
		dot:     dotAsm,
		axpy:    axpyAsm,
		gemmNT:  gemmNTAsm,
		gemmNN:  gemmNNAsm,
		gemmTN:  gemmTNAsm,
		softmax: softmaxAsm,
		scale:   scaleAsm,
	}, true
}

func dotAsm(a, b []float32) float32 {
	if len(a) == 0 {
		return 0
	}
	return dotAVX(&a[0], &b[0], len(a))
}

func axpyAsm(alpha float32, x, y []float32) {
	if len(x) == 0 {
		return
	}
	axpyAVX(alpha, &x[0], &y[0], len(x))
}

func softmaxAsm(x []float32) float32 {
	return softmaxWith(x,
		func(x []float32) float32 { return maxAVX(&x[0], len(x)) },
		func(x []float32, m float32) (float32, float32) { return expSubSumAVX(&x[0], len(x), m) },
		scaleAsm)
}

func scaleAsm(alpha float32, x []float32) {
	if len(x) == 0 {
		return
	}
	scaleAVX(alpha, &x[0], len(x))
}
