package kern

import (
	"math"
	"math/rand/v2"
	"testing"
)

// naiveGemm is the definition, written independently of ref.go: C = op(A)·op(B).
func naiveGemm(m, n, k int, at func(i, p int) float32, bt func(p, j int) float32) []float64 {
	out := make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s float64
			for p := 0; p < k; p++ {
				s += float64(at(i, p)) * float64(bt(p, j))
			}
			out[i*n+j] = s
		}
	}
	return out
}

func randSlice(rng *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(rng.NormFloat64())
	}
	return s
}

func close32(t *testing.T, what string, got float32, want float64, scale float64) {
	t.Helper()
	if math.Abs(float64(got)-want) > 1e-5*scale+1e-6 {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
}

// TestGemmAgainstDefinition checks invariants 1-3 for the three products on
// random shapes, leading dimensions larger than the rows, and both values of
// accumulate.
func TestGemmAgainstDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 200; trial++ {
		m, n, k := 1+rng.IntN(19), 1+rng.IntN(37), 1+rng.IntN(70)
		pad := rng.IntN(3)
		acc := rng.IntN(2) == 1
		type variant struct {
			name                       string
			run                        func(a []float32, lda int, b []float32, ldb int, c []float32, ldc int)
			aRows, aCols, bRows, bCols int
			at                         func(a []float32, lda int) func(i, p int) float32
			bt                         func(b []float32, ldb int) func(p, j int) float32
		}
		vs := []variant{
			{"NT", func(a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
				GemmNT(m, n, k, a, lda, b, ldb, c, ldc, acc)
			}, m, k, n, k,
				func(a []float32, lda int) func(i, p int) float32 { return func(i, p int) float32 { return a[i*lda+p] } },
				func(b []float32, ldb int) func(p, j int) float32 { return func(p, j int) float32 { return b[j*ldb+p] } }},
			{"NN", func(a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
				GemmNN(m, n, k, a, lda, b, ldb, c, ldc, acc)
			}, m, k, k, n,
				func(a []float32, lda int) func(i, p int) float32 { return func(i, p int) float32 { return a[i*lda+p] } },
				func(b []float32, ldb int) func(p, j int) float32 { return func(p, j int) float32 { return b[p*ldb+j] } }},
			{"TN", func(a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
				GemmTN(m, n, k, a, lda, b, ldb, c, ldc, acc)
			}, k, m, k, n,
				func(a []float32, lda int) func(i, p int) float32 { return func(i, p int) float32 { return a[p*lda+i] } },
				func(b []float32, ldb int) func(p, j int) float32 { return func(p, j int) float32 { return b[p*ldb+j] } }},
		}
		for _, v := range vs {
			lda, ldb, ldc := v.aCols+pad, v.bCols+pad, n+pad
			a := randSlice(rng, v.aRows*lda)
			b := randSlice(rng, v.bRows*ldb)
			c := randSlice(rng, m*ldc)
			old := append([]float32(nil), c...)
			if !acc {
				for i := 0; i < m; i++ {
					c[i*ldc] = float32(math.NaN())
				}
			}
			v.run(a, lda, b, ldb, c, ldc)
			want := naiveGemm(m, n, k, v.at(a, lda), v.bt(b, ldb))
			for i := 0; i < m; i++ {
				for j := 0; j < ldc; j++ {
					got := c[i*ldc+j]
					if j >= n {
						if got != old[i*ldc+j] {
							t.Fatalf("%s trial %d: padding C[%d,%d] changed", v.name, trial, i, j)
						}
						continue
					}
					w := want[i*n+j]
					if acc {
						w += float64(old[i*ldc+j])
					}
					close32(t, v.name, got, w, math.Sqrt(float64(k))*4)
				}
			}
		}
	}
}

func TestDotAxpy(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for n := 0; n < 100; n++ {
		a, b := randSlice(rng, n), randSlice(rng, n+3)
		var want float64
		for i := 0; i < n; i++ {
			want += float64(a[i]) * float64(b[i])
		}
		close32(t, "Dot", Dot(a, b), want, math.Sqrt(float64(n))*4)
		y := append([]float32(nil), b...)
		Axpy(0.5, a, y)
		for i := range y {
			w := float64(b[i])
			if i < n {
				w += 0.5 * float64(a[i])
			}
			close32(t, "Axpy", y[i], w, 4)
		}
	}
}
