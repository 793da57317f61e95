package kern

// kernels is one implementation of the package's kernels. Their arguments
// have been checked by the exported wrappers.
type kernels struct {
	name                   string
	dot                    func(a, b []float32) float32
	axpy                   func(alpha float32, x, y []float32)
	gemmNT, gemmNN, gemmTN gemmFunc
	softmax                func(x []float32) float32
	scale                  func(alpha float32, x []float32)
}

type gemmFunc func(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, accumulate bool)

var (
	refKernels = kernels{"ref", dotRef, axpyRef, gemmNTRef, gemmNNRef, gemmTNRef, softmaxRef, scaleRef}
	goKernels  = kernels{"go", dotGo, axpyGo, gemmNTGo, gemmNNGo, gemmTNGo, softmaxGo, scaleGo}
)

// active is the implementation the exported functions use: the assembly
// kernels when this CPU runs them, else the pure-Go ones.
var active = func() kernels {
	if k, ok := asmKernels(); ok {
		return k
	}
	return goKernels
}()

// Implementation names the kernels in use: "avx2" (amd64 with AVX2 and FMA)
// or "go" (the portable fallback: other architectures, older CPUs, or the
// purego build tag).
func Implementation() string { return active.name }

// clearC zeroes C's m×n elements unless acc: the k = 0 product.
func clearC(m, n int, c []float32, ldc int, acc bool) {
	if acc || n == 0 {
		return
	}
	for i := 0; i < m; i++ {
		clear(c[i*ldc : i*ldc+n])
	}
}
