package kern

// Dot returns the sum of a[i]*b[i] for i < len(a). b must be at least as
// long as a.
func Dot(a, b []float32) float32 { return dotRef(a, b) }

// Axpy adds alpha*x[i] to y[i] for i < len(x). y must be at least as long
// as x.
func Axpy(alpha float32, x, y []float32) { axpyRef(alpha, x, y) }

// GemmNT computes C[m×n] = A[m×k] · B[n×k]ᵀ (added to C when accumulate).
// Row i of A starts at a[i*lda], row j of B at b[j*ldb], row i of C at
// c[i*ldc].
func GemmNT(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, accumulate bool) {
	gemmNTRef(m, n, k, a, lda, b, ldb, c, ldc, accumulate)
}

// GemmNN computes C[m×n] = A[m×k] · B[k×n] (added to C when accumulate).
func GemmNN(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, accumulate bool) {
	gemmNNRef(m, n, k, a, lda, b, ldb, c, ldc, accumulate)
}

// GemmTN computes C[m×n] = A[k×m]ᵀ · B[k×n] (added to C when accumulate).
func GemmTN(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, accumulate bool) {
	gemmTNRef(m, n, k, a, lda, b, ldb, c, ldc, accumulate)
}
