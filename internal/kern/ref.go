package kern

func dotRef(a, b []float32) float32 {
	b = b[:len(a)]
	var s float32
	for i, v := range a {
		s += v * b[i]
	}
	return s
}

func axpyRef(alpha float32, x, y []float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] += alpha * v
	}
}

func gemmNTRef(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, accumulate bool) {
	if m == 0 || n == 0 || k == 0 {
		clearC(m, n, c, ldc, accumulate)
		return
	}
	for i := 0; i < m; i++ {
		ar := a[i*lda : i*lda+k]
		cr := c[i*ldc : i*ldc+n]
		for j := range cr {
			s := dotRef(ar, b[j*ldb:j*ldb+k])
			if accumulate {
				cr[j] += s
			} else {
				cr[j] = s
			}
		}
	}
}

func gemmNNRef(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, accumulate bool) {
	if m == 0 || n == 0 || k == 0 {
		clearC(m, n, c, ldc, accumulate)
		return
	}
	for i := 0; i < m; i++ {
		cr := c[i*ldc : i*ldc+n]
		if !accumulate {
			clear(cr)
		}
		for p := 0; p < k; p++ {
			axpyRef(a[i*lda+p], b[p*ldb:p*ldb+n], cr)
		}
	}
}

func gemmTNRef(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, accumulate bool) {
	if m == 0 || n == 0 || k == 0 {
		clearC(m, n, c, ldc, accumulate)
		return
	}
	if !accumulate {
		for i := 0; i < m; i++ {
			clear(c[i*ldc : i*ldc+n])
		}
	}
	for p := 0; p < k; p++ {
		br := b[p*ldb : p*ldb+n]
		for i := 0; i < m; i++ {
			axpyRef(a[p*lda+i], br, c[i*ldc:i*ldc+n])
		}
	}
}
