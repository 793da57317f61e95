//go:build !purego

package kern

// Blocking of the assembly GEMMs. GemmNT works on rows of A and B as they
// lie (both are contiguous along k), so it needs no packing: 3×4 tiles of C
// are dot products reduced at the end. GemmNN and GemmTN read B's rows as
// they lie and broadcast A's elements, 5×16 tiles of C; k is cut into
// blocks of at most opKC steps so that a 16-column panel of B stays in L1
// while every row tile of A passes over it.

const (
	opMR = 5   // rows of a GemmNN/GemmTN tile
	opNR = 16  // columns of a GemmNN/GemmTN tile
	opKC = 256 // most steps of k per block
)

// opMasks[w] selects the first w of 16 lanes.
var opMasks = func() (m [opNR + 1][opNR]int32) {
	for w := range m {
		for j := 0; j < w; j++ {
			m[w][j] = -1
		}
	}
	return m
}()

func gemmNTAsm(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, acc bool) {
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		clearC(m, n, c, ldc, acc)
		return
	}
	groups, rem := m/3, m%3
	for j := 0; j+4 <= n; j += 4 {
		if groups > 0 {
			ntKernel3x4(groups, k, &a[0], lda, &b[j*ldb], ldb, &c[j], ldc, acc)
		}
		if rem > 0 {
			i := 3 * groups
			ntKernel1x4(rem, k, &a[i*lda], lda, &b[j*ldb], ldb, &c[i*ldc+j], ldc, acc)
		}
	}
	for j := n &^ 3; j < n; j++ {
		for i := 0; i < m; i++ {
			s := dotAVX(&a[i*lda], &b[j*ldb], k)
			if acc {
				s += c[i*ldc+j]
			}
			c[i*ldc+j] = s
		}
	}
}

func gemmNNAsm(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, acc bool) {
	opGemm(m, n, k, a, lda, 1, b, ldb, c, ldc, acc)
}

func gemmTNAsm(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, acc bool) {
	opGemm(m, n, k, a, 1, lda, b, ldb, c, ldc, acc)
}

// opGemm computes C[m×n] (+)= A·B[k×n] where A(i, p) = a[i*rs+p*cs].
func opGemm(m, n, k int, a []float32, rs, cs int, b []float32, ldb int, c []float32, ldc int, acc bool) {
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		clearC(m, n, c, ldc, acc)
		return
	}
	blocks := (k + opKC - 1) / opKC
	kc := (k + blocks - 1) / blocks
	tiles, rem := m/opMR, m%opMR
	var edge [opMR * opKC]float32    // the last rem rows of A, zero-padded to opMR
	var scratch [opMR * opNR]float32 // a narrow panel's tile on its way to C
	for p0 := 0; p0 < k; p0 += kc {
		kb := min(kc, k-p0)
		accb := acc || p0 > 0
		if rem > 0 {
			packEdge(edge[:opMR*kb], a, tiles*opMR, rem, p0, kb, rs, cs)
		}
		for j := 0; j < n; j += opNR {
			w := min(opNR, n-j)
			bp := &b[p0*ldb+j]
			switch {
			case tiles == 0:
			case w == opNR:
				opKernel5x16(tiles, kb, &a[p0*cs], rs, cs, bp, ldb, &c[j], ldc, accb)
			case w > opNR/2:
				opKernel5x16Mask(tiles, kb, &a[p0*cs], rs, cs, bp, ldb, &c[j], ldc, &opMasks[w][0], w, &scratch[0], accb)
			default:
				// a panel of at most 8 columns: 10×8 tiles, then one 5-row tile
				t10 := tiles / 2
				if t10 > 0 {
					opKernel10x8Mask(t10, kb, &a[p0*cs], rs, cs, bp, ldb, &c[j], ldc, &opMasks[w][0], w, &scratch[0], accb)
				}
				if tiles%2 == 1 {
					i := 10 * t10
					opKernel5x16Mask(1, kb, &a[i*rs+p0*cs], rs, cs, bp, ldb, &c[i*ldc+j], ldc, &opMasks[w][0], w, &scratch[0], accb)
				}
			}
			if rem > 0 {
				opEdge(edge[:opMR*kb], scratch[:], rem, kb, bp, ldb, w, c[tiles*opMR*ldc+j:], ldc, accb)
			}
		}
	}
}

// packEdge copies A(i0+r, p0+p) for r < rem, p < kb into dst[p*opMR+r],
// zero for r >= rem.
func packEdge(dst []float32, a []float32, i0, rem, p0, kb, rs, cs int) {
	clear(dst)
	for p := 0; p < kb; p++ {
		for r := 0; r < rem; r++ {
			dst[p*opMR+r] = a[(i0+r)*rs+(p0+p)*cs]
		}
	}
}

// opEdge computes the last rem (< opMR) rows of a w-column panel through a
// full tile in a scratch C.
func opEdge(edge, scratch []float32, rem, kb int, bp *float32, ldb, w int, c []float32, ldc int, acc bool) {
	var t [opMR * opNR]float32
	if acc {
		for r := 0; r < rem; r++ {
			copy(t[r*opNR:r*opNR+w], c[r*ldc:r*ldc+w])
		}
	}
	opKernel5x16Mask(1, kb, &edge[0], 1, opMR, bp, ldb, &t[0], opNR, &opMasks[w][0], w, &scratch[0], acc)
	for r := 0; r < rem; r++ {
		copy(c[r*ldc:r*ldc+w], t[r*opNR:r*opNR+w])
	}
}
