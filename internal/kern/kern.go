package kern

// Dot returns the sum of a[i]*b[i] for i < len(a). b must be at least as
// long as a.
func Dot(a, b []float32) float32 {
	checkVec("Dot", len(a), len(b), "b")
	return active.dot(a, b)
}

// Axpy adds alpha*x[i] to y[i] for i < len(x). y must be at least as long
// as x, and x must not overlap y other than by being the same slice.
func Axpy(alpha float32, x, y []float32) {
	checkVec("Axpy", len(x), len(y), "y")
	active.axpy(alpha, x, y)
}

// GemmNT computes C[m×n] = A[m×k] · B[n×k]ᵀ (added to C when accumulate).
// Row i of A starts at a[i*lda], row j of B at b[j*ldb], row i of C at
// c[i*ldc]. In all three products C must not overlap A or B.
func GemmNT(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, accumulate bool) {
	checkGemm("GemmNT", m, n, k, a, m, k, lda, b, n, k, ldb, c, ldc)
	active.gemmNT(m, n, k, a, lda, b, ldb, c, ldc, accumulate)
}

// GemmNN computes C[m×n] = A[m×k] · B[k×n] (added to C when accumulate).
func GemmNN(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, accumulate bool) {
	checkGemm("GemmNN", m, n, k, a, m, k, lda, b, k, n, ldb, c, ldc)
	active.gemmNN(m, n, k, a, lda, b, ldb, c, ldc, accumulate)
}

// GemmTN computes C[m×n] = A[k×m]ᵀ · B[k×n] (added to C when accumulate).
func GemmTN(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, accumulate bool) {
	checkGemm("GemmTN", m, n, k, a, k, m, lda, b, k, n, ldb, c, ldc)
	active.gemmTN(m, n, k, a, lda, b, ldb, c, ldc, accumulate)
}

// checkGemm panics unless every matrix of a product covers its shape; C's
// must be checked even when k = 0, A's and B's only when the product reads
// them (m, n and k all positive).
func checkGemm(fn string, m, n, k int, a []float32, ar, ac, lda int, b []float32, br, bc, ldb int, c []float32, ldc int) {
	checkDims(fn, m, n, k)
	checkMat(fn, "c", c, m, n, ldc)
	if m == 0 || n == 0 || k == 0 {
		return
	}
	checkMat(fn, "a", a, ar, ac, lda)
	checkMat(fn, "b", b, br, bc, ldb)
}
