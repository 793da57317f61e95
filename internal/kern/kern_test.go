package kern

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// impls lists every implementation this binary can run: the reference, the
// pure-Go fallback and, on a CPU that has them, the assembly kernels. The
// tests run each one directly, so both paths are checked in one binary.
func impls(t testing.TB) []kernels {
	out := []kernels{refKernels, goKernels}
	if k, ok := asmKernels(); ok {
		out = append(out, k)
	} else {
		t.Logf("no assembly kernels on this machine or build; testing ref and go only")
	}
	return out
}

// shape is one product to check: which operation, the sizes, the leading
// dimensions, where each matrix starts in its buffer, and accumulate.
type shape struct {
	op               string // "NT", "NN" or "TN"
	m, n, k          int
	lda, ldb, ldc    int
	offA, offB, offC int
	acc              bool
	aRows, aCols     int // A as stored
	bRows, bCols     int // B as stored
}

// newShape fills in the stored sizes of op(A) and op(B) for an operation;
// pad is added to each leading dimension.
func newShape(op string, m, n, k, pad, off int, acc bool) shape {
	s := shape{op: op, m: m, n: n, k: k, offA: off, offB: off + 1, offC: off + 2, acc: acc}
	switch op {
	case "NT":
		s.aRows, s.aCols, s.bRows, s.bCols = m, k, n, k
	case "NN":
		s.aRows, s.aCols, s.bRows, s.bCols = m, k, k, n
	case "TN":
		s.aRows, s.aCols, s.bRows, s.bCols = k, m, k, n
	}
	s.lda, s.ldb, s.ldc = s.aCols+pad, s.bCols+pad, n+pad
	return s
}

func (s shape) run(im kernels, a, b, c []float32) {
	f := map[string]gemmFunc{"NT": im.gemmNT, "NN": im.gemmNN, "TN": im.gemmTN}[s.op]
	f(s.m, s.n, s.k, a, s.lda, b, s.ldb, c, s.ldc, s.acc)
}

// at returns op(A)(i, p) and op(B)(p, j) from stored matrices.
func (s shape) at(a, b []float32) (func(i, p int) float32, func(p, j int) float32) {
	switch s.op {
	case "NT":
		return func(i, p int) float32 { return a[i*s.lda+p] }, func(p, j int) float32 { return b[j*s.ldb+p] }
	case "NN":
		return func(i, p int) float32 { return a[i*s.lda+p] }, func(p, j int) float32 { return b[p*s.ldb+j] }
	default:
		return func(i, p int) float32 { return a[p*s.lda+i] }, func(p, j int) float32 { return b[p*s.ldb+j] }
	}
}

// matLen is the exact length a rows×cols matrix with leading dimension ld
// needs (the last row is not padded).
func matLen(rows, cols, ld int) int {
	if rows == 0 || cols == 0 {
		return 0
	}
	return (rows-1)*ld + cols
}

const guard = 7 // guard elements after each matrix

// buffer returns a slice of length off+size+guard whose elements in
// [off, off+size) are in the matrix (rows×cols at ld) get random values
// and every other element gets fill.
func buffer(rng *rand.Rand, off, rows, cols, ld int, fill float32) []float32 {
	size := matLen(rows, cols, ld)
	buf := make([]float32, off+size+guard)
	for i := range buf {
		buf[i] = fill
	}
	for i := 0; i < rows; i++ {
		for j := 0; j < cols; j++ {
			buf[off+i*ld+j] = float32(rng.NormFloat64())
		}
	}
	return buf
}

// checkShape runs one implementation on one shape with random inputs and
// returns what went wrong, or "". It checks invariants 1-3: elements of A
// and B outside their shapes are NaN, so reading one would show in C; C's
// padding and the guards around it must keep their values; with
// accumulate false C starts as NaN; each element of C agrees with the
// definition within 1e-5 of the sum of the absolute products.
func checkShape(im kernels, s shape, rng *rand.Rand) string { return checkShapeEvery(im, s, rng, 1) }

// checkShapeEvery is checkShape comparing only every every-th element of C
// with the definition (all of them for the guards).
func checkShapeEvery(im kernels, s shape, rng *rand.Rand, every int) string {
	nan := float32(math.NaN())
	abuf := buffer(rng, s.offA, s.aRows, s.aCols, s.lda, nan)
	bbuf := buffer(rng, s.offB, s.bRows, s.bCols, s.ldb, nan)
	cfill := float32(-3.5)
	cbuf := buffer(rng, s.offC, s.m, s.n, s.ldc, cfill)
	if !s.acc {
		for i := 0; i < s.m; i++ {
			for j := 0; j < s.n; j++ {
				cbuf[s.offC+i*s.ldc+j] = nan
			}
		}
	}
	old := append([]float32(nil), cbuf...)
	aEnd, bEnd, cEnd := s.offA+matLen(s.aRows, s.aCols, s.lda), s.offB+matLen(s.bRows, s.bCols, s.ldb), s.offC+matLen(s.m, s.n, s.ldc)
	a, b, c := abuf[s.offA:aEnd], bbuf[s.offB:bEnd], cbuf[s.offC:cEnd]
	s.run(im, a, b, c)
	at, bt := s.at(a, b)
	for idx := range cbuf {
		got := cbuf[idx]
		rel := idx - s.offC
		i, j := -1, -1
		if rel >= 0 && s.ldc > 0 {
			i, j = rel/s.ldc, rel%s.ldc
		} else if rel >= 0 {
			i, j = 0, rel
		}
		if i < 0 || i >= s.m || j >= s.n {
			if math.Float32bits(got) != math.Float32bits(old[idx]) {
				return fmt.Sprintf("%s: element %d of C's buffer outside the %d×%d result changed from %v to %v", im.name, idx, s.m, s.n, old[idx], got)
			}
			continue
		}
		if idx%every != 0 {
			continue
		}
		var want, mag float64
		for p := 0; p < s.k; p++ {
			x := float64(at(i, p)) * float64(bt(p, j))
			want += x
			mag += math.Abs(x)
		}
		if s.acc {
			want += float64(old[idx])
			mag += math.Abs(float64(old[idx]))
		}
		if !(math.Abs(float64(got)-want) <= 1e-5*mag+1e-30) {
			return fmt.Sprintf("%s: C[%d,%d] = %v, want %v (tolerance %g)", im.name, i, j, got, want, 1e-5*mag)
		}
	}
	return ""
}

func (s shape) String() string {
	return fmt.Sprintf("Gemm%s m=%d n=%d k=%d lda=%d ldb=%d ldc=%d off=%d acc=%v", s.op, s.m, s.n, s.k, s.lda, s.ldb, s.ldc, s.offA, s.acc)
}

// TestGemmAgainstDefinition checks invariants 1-3 for every implementation
// on random shapes that cross the tile sizes (3×4 for GemmNT, 5×16 for
// GemmNN and GemmTN) and the k blocking (256), with padded leading
// dimensions, unaligned starts and both values of accumulate.
func TestGemmAgainstDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	trials := 300
	if testing.Short() {
		trials = 60
	}
	for trial := 0; trial < trials; trial++ {
		m, n, k := 1+rng.IntN(23), 1+rng.IntN(41), 1+rng.IntN(70)
		if trial%10 == 0 {
			k = 250 + rng.IntN(300)
		}
		pad, off, acc := rng.IntN(4), rng.IntN(8), rng.IntN(2) == 1
		for _, op := range []string{"NT", "NN", "TN"} {
			s := newShape(op, m, n, k, pad, off, acc)
			for _, im := range impls(t) {
				if msg := checkShape(im, s, rng); msg != "" {
					t.Fatalf("trial %d, %v: %s", trial, s, msg)
				}
			}
		}
	}
}

// TestGemmEdges checks invariants 1-3 on every small shape, including 0 and 1 in each
// dimension and k = 0 (C = 0, or unchanged when accumulating).
func TestGemmEdges(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for m := 0; m <= 7; m++ {
		for n := 0; n <= 18; n += 1 + n/6 {
			for _, k := range []int{0, 1, 2, 7, 8, 9, 17} {
				for _, op := range []string{"NT", "NN", "TN"} {
					for _, acc := range []bool{false, true} {
						s := newShape(op, m, n, k, m%2, n%3, acc)
						for _, im := range impls(t) {
							if msg := checkShape(im, s, rng); msg != "" {
								t.Fatalf("%v: %s", s, msg)
							}
						}
					}
				}
			}
		}
	}
}

// TestTrainerShapes checks invariants 1-3 for the products of a training
// step with 50 positives against 1050 candidates, comparing every 7th
// element of C with the definition to keep the test quick.
func TestTrainerShapes(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, d := range []int{100, 400} {
		for _, s := range []shape{
			newShape("NT", 50, 1050, d, 0, 0, false),
			newShape("NN", 50, d, 1050, 0, 0, false),
			newShape("TN", 1050, d, 50, 0, 0, true),
		} {
			for _, im := range impls(t) {
				if msg := checkShapeEvery(im, s, rng, 7); msg != "" {
					t.Fatalf("%v: %s", s, msg)
				}
			}
		}
	}
}

// TestDotAxpy checks invariants 1 and 3 for Dot and Axpy, every
// implementation, every length to 139, unaligned starts.
func TestDotAxpy(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, im := range impls(t) {
		for n := 0; n < 140; n++ {
			off := rng.IntN(8)
			a, b := randSlice(rng, n+off)[off:], randSlice(rng, n+3)
			var want, mag float64
			for i := 0; i < n; i++ {
				want += float64(a[i]) * float64(b[i])
				mag += math.Abs(float64(a[i]) * float64(b[i]))
			}
			if got := im.dot(a, b); math.Abs(float64(got)-want) > 1e-5*mag+1e-30 {
				t.Fatalf("%s: Dot n=%d: got %v, want %v", im.name, n, got, want)
			}
			y := append([]float32(nil), b...)
			im.axpy(0.5, a, y)
			for i := range y {
				w := float64(b[i])
				if i < n {
					w += 0.5 * float64(a[i])
				}
				if math.Abs(float64(y[i])-w) > 1e-6*(math.Abs(w)+1) || (i >= n && y[i] != b[i]) {
					t.Fatalf("%s: Axpy n=%d: y[%d] = %v, want %v", im.name, n, i, y[i], w)
				}
			}
		}
	}
}

func randSlice(rng *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(rng.NormFloat64())
	}
	return s
}

// TestShortSlicesPanic checks invariant 4: a slice too short for its shape, a
// leading dimension smaller than a row, or a negative size panics with a
// message naming the function and the argument, before any kernel runs.
func TestShortSlicesPanic(t *testing.T) {
	ten := make([]float32, 10)
	cases := []struct {
		name string
		call func()
		want string
	}{
		{"short a", func() { GemmNT(2, 2, 5, ten[:9], 5, ten, 5, ten, 2, false) }, "GemmNT: len(a) = 9"},
		{"short b", func() { GemmNN(2, 3, 2, ten, 2, ten[:5], 3, ten, 3, false) }, "GemmNN: len(b) = 5"},
		{"short c", func() { GemmTN(3, 3, 1, ten, 3, ten, 3, ten[:8], 3, false) }, "GemmTN: len(c) = 8"},
		{"short c, k=0", func() { GemmNT(3, 3, 0, nil, 0, nil, 0, ten[:8], 3, false) }, "GemmNT: len(c) = 8"},
		{"lda < k", func() { GemmNT(2, 1, 4, ten, 3, ten, 4, ten, 1, false) }, "lda = 3 is less than the 4 columns of a"},
		{"ldc < n", func() { GemmNN(2, 3, 1, ten, 1, ten, 3, ten, 2, false) }, "ldc = 2 is less than the 3 columns of c"},
		{"negative", func() { GemmTN(-1, 1, 1, ten, 1, ten, 1, ten, 1, false) }, "negative dimension"},
		{"huge", func() { GemmNT(3, 1, 1, ten, 1<<62, ten, 1, ten, 1, false) }, "too large to address"},
		{"short dot", func() { Dot(ten, ten[:9]) }, "Dot: len(b) = 9 < len(x) = 10"},
		{"short axpy", func() { Axpy(1, ten, ten[:3]) }, "Axpy: len(y) = 3"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				r := recover()
				msg, _ := r.(string)
				if !strings.Contains(msg, tc.want) || !strings.HasPrefix(msg, "kern: ") {
					t.Fatalf("panic %v, want a message containing %q", r, tc.want)
				}
			}()
			tc.call()
		})
	}
}

// TestExportedUseActive checks that the exported functions agree with the
// implementation Implementation names, bit for bit.
func TestExportedUseActive(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	a, b := randSlice(rng, 7*33), randSlice(rng, 9*33)
	c1, c2 := make([]float32, 7*9), make([]float32, 7*9)
	GemmNT(7, 9, 33, a, 33, b, 33, c1, 9, false)
	active.gemmNT(7, 9, 33, a, 33, b, 33, c2, 9, false)
	for i := range c1 {
		if c1[i] != c2[i] {
			t.Fatalf("GemmNT differs from %s at %d", Implementation(), i)
		}
	}
	if Dot(a, b) != active.dot(a, b) {
		t.Fatalf("Dot differs from %s", Implementation())
	}
	t.Logf("implementation in use: %s", Implementation())
}
