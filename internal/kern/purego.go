package kern

import "math"

// The portable kernels: plain Go, unrolled so that each loaded element feeds
// several multiply-adds. They are what runs on other architectures, on CPUs
// without AVX2 and FMA, and under the purego build tag; the tests run them
// on every machine.

func dotGo(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		x, y := a[i:i+4:i+4], b[i:i+4:i+4]
		s0 += x[0] * y[0]
		s1 += x[1] * y[1]
		s2 += x[2] * y[2]
		s3 += x[3] * y[3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

func axpyGo(alpha float32, x, y []float32) {
	y = y[:len(x)]
	i := 0
	for ; i+4 <= len(x); i += 4 {
		u, v := x[i:i+4:i+4], y[i:i+4:i+4]
		v[0] += alpha * u[0]
		v[1] += alpha * u[1]
		v[2] += alpha * u[2]
		v[3] += alpha * u[3]
	}
	for ; i < len(x); i++ {
		y[i] += alpha * x[i]
	}
}

// dot2x2 returns the four dot products of a0, a1 with b0, b1 (all of
// length k), loading each element once.
func dot2x2(a0, a1, b0, b1 []float32) (s00, s01, s10, s11 float32) {
	k := len(a0)
	a1, b0, b1 = a1[:k], b0[:k], b1[:k]
	for p := 0; p < k; p++ {
		x0, x1, y0, y1 := a0[p], a1[p], b0[p], b1[p]
		s00 += x0 * y0
		s01 += x0 * y1
		s10 += x1 * y0
		s11 += x1 * y1
	}
	return
}

func gemmNTGo(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, acc bool) {
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		clearC(m, n, c, ldc, acc)
		return
	}
	set := func(i, j int, s float32) {
		if acc {
			s += c[i*ldc+j]
		}
		c[i*ldc+j] = s
	}
	i := 0
	for ; i+2 <= m; i += 2 {
		a0, a1 := a[i*lda:i*lda+k], a[(i+1)*lda:(i+1)*lda+k]
		j := 0
		for ; j+2 <= n; j += 2 {
			s00, s01, s10, s11 := dot2x2(a0, a1, b[j*ldb:j*ldb+k], b[(j+1)*ldb:(j+1)*ldb+k])
			set(i, j, s00)
			set(i, j+1, s01)
			set(i+1, j, s10)
			set(i+1, j+1, s11)
		}
		if j < n {
			bj := b[j*ldb : j*ldb+k]
			set(i, j, dotGo(a0, bj))
			set(i+1, j, dotGo(a1, bj))
		}
	}
	if i < m {
		ai := a[i*lda : i*lda+k]
		for j := 0; j < n; j++ {
			set(i, j, dotGo(ai, b[j*ldb:j*ldb+k]))
		}
	}
}

// axpy4 adds s0*x0 + s1*x1 + s2*x2 + s3*x3 to y, loading and storing y
// once for four rows.
func axpy4(s0, s1, s2, s3 float32, x0, x1, x2, x3, y []float32) {
	n := len(y)
	x0, x1, x2, x3 = x0[:n], x1[:n], x2[:n], x3[:n]
	for j := range y {
		y[j] += s0*x0[j] + s1*x1[j] + s2*x2[j] + s3*x3[j]
	}
}

// opGo computes C[m×n] (+)= A·B[k×n] where A(i, p) = a[i*rs+p*cs], one row
// of C at a time, four rows of B per pass over it.
func opGo(m, n, k int, a []float32, rs, cs int, b []float32, ldb int, c []float32, ldc int, acc bool) {
	if m == 0 || n == 0 {
		return
	}
	for i := 0; i < m; i++ {
		cr := c[i*ldc : i*ldc+n]
		if !acc {
			clear(cr)
		}
		p := 0
		for ; p+4 <= k; p += 4 {
			axpy4(a[i*rs+p*cs], a[i*rs+(p+1)*cs], a[i*rs+(p+2)*cs], a[i*rs+(p+3)*cs],
				b[p*ldb:p*ldb+n], b[(p+1)*ldb:(p+1)*ldb+n], b[(p+2)*ldb:(p+2)*ldb+n], b[(p+3)*ldb:(p+3)*ldb+n], cr)
		}
		for ; p < k; p++ {
			axpyGo(a[i*rs+p*cs], b[p*ldb:p*ldb+n], cr)
		}
	}
}

func gemmNNGo(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, acc bool) {
	opGo(m, n, k, a, lda, 1, b, ldb, c, ldc, acc)
}

func gemmTNGo(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, acc bool) {
	opGo(m, n, k, a, 1, lda, b, ldb, c, ldc, acc)
}

func softmaxGo(x []float32) float32 { return softmaxWith(x, maxGo, expSubSumGo, scaleGo) }

func maxGo(x []float32) float32 {
	m := float32(math.Inf(-1))
	for _, v := range x {
		if v > m || v != v {
			m = v
		}
	}
	return m
}

// expSubSumGo replaces x[i] by exp(x[i]-m) and returns their sum and the
// sum of x[i]-m; exp32 is the same approximation as the assembly's.
func expSubSumGo(x []float32, m float32) (sum, check float32) {
	for i, v := range x {
		d := v - m
		check += d
		e := exp32(d)
		x[i] = e
		sum += e
	}
	return sum, check
}

// exp32 approximates e^x for x <= 0 within 2 ulp (Cephes' expf): 0 below
// ln(FLT_MIN).
func exp32(x float32) float32 {
	const lo = -87.33654
	if !(x >= lo) {
		return 0
	}
	fx := float32(math.Floor(float64(x*1.44269504088896341 + 0.5)))
	r := x - fx*0.693359375
	r -= fx * -2.12194440e-4
	p := float32(1.9875691500e-4)
	p = p*r + 1.3981999507e-3
	p = p*r + 8.3334519073e-3
	p = p*r + 4.1665795894e-2
	p = p*r + 1.6666665459e-1
	p = p*r + 5.0000001201e-1
	p = p*r*r + r + 1
	return p * math.Float32frombits(uint32(int32(fx)+127)<<23)
}

func scaleGo(alpha float32, x []float32) {
	i := 0
	for ; i+4 <= len(x); i += 4 {
		v := x[i : i+4 : i+4]
		v[0] *= alpha
		v[1] *= alpha
		v[2] *= alpha
		v[3] *= alpha
	}
	for ; i < len(x); i++ {
		x[i] *= alpha
	}
}
