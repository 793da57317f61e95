package kern

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSameBitsAnyLayout checks invariant 5: the same product stored with
// other leading dimensions and at other (unaligned) offsets gives the same
// bits, for every implementation.
func TestSameBitsAnyLayout(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	for trial := 0; trial < 80; trial++ {
		m, n, k := 1+rng.IntN(30), 1+rng.IntN(50), 1+rng.IntN(600)
		for _, op := range []string{"NT", "NN", "TN"} {
			tight := newShape(op, m, n, k, 0, 0, false)
			loose := newShape(op, m, n, k, 1+rng.IntN(5), 1+rng.IntN(7), false)
			// op(A) and op(B) as dense matrices, copied into both layouts
			av, bv := randSlice(rng, m*k), randSlice(rng, k*n)
			for _, im := range impls(t) {
				var got [2][]float32
				for v, s := range []shape{tight, loose} {
					a := make([]float32, s.offA+matLen(s.aRows, s.aCols, s.lda))[s.offA:]
					b := make([]float32, s.offB+matLen(s.bRows, s.bCols, s.ldb))[s.offB:]
					c := make([]float32, s.offC+matLen(m, n, s.ldc))[s.offC:]
					for i := 0; i < m; i++ {
						for p := 0; p < k; p++ {
							a[s.elemIndexA(i, p)] = av[i*k+p]
						}
					}
					for p := 0; p < k; p++ {
						for j := 0; j < n; j++ {
							b[s.elemIndexB(p, j)] = bv[p*n+j]
						}
					}
					s.run(im, a, b, c)
					for i := 0; i < m; i++ {
						got[v] = append(got[v], c[i*s.ldc:i*s.ldc+n]...)
					}
				}
				for i := range got[0] {
					if math.Float32bits(got[0][i]) != math.Float32bits(got[1][i]) {
						t.Fatalf("%s %v: element %d is %v tight and %v with lda=%d off=%d", im.name, tight, i, got[0][i], got[1][i], loose.lda, loose.offA)
					}
				}
			}
		}
	}
}

// elemIndexA and elemIndexB give where op(A)(i, p) and op(B)(p, j) are
// stored.
func (s shape) elemIndexA(i, p int) int {
	if s.op == "TN" {
		return p*s.lda + i
	}
	return i*s.lda + p
}

func (s shape) elemIndexB(p, j int) int {
	if s.op == "NT" {
		return j*s.ldb + p
	}
	return p*s.ldb + j
}
