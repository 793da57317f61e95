package kern

import (
	"math"
	"math/rand/v2"
	"testing"
)

// checkSoftmax runs one implementation's Softmax on a copy of x and
// compares it with the float64 definition, within the error float32 allows:
// with u = 2^-24, exp32 is within 2 ulp (4u), rounding x[i]-max moves
// exp(x[i]-max) by up to |x[i]-max|·u (at most 88u before it underflows),
// a running sum of n positive terms adds at most (n-1)u, and the
// reciprocal and the product 2u. So each output is within (n+100)u
// relative (or FLT_MIN absolute, for outputs that underflow), and the
// log-sum-exp, m + log(sum), within (n+100)u plus one rounding of |lse|.
// Special rows must come out exactly as documented.
func checkSoftmax(t *testing.T, im kernels, x []float32) {
	t.Helper()
	got := append([]float32(nil), x...)
	want := append([]float32(nil), x...)
	lse := im.softmax(got)
	wlse := softmaxRef(want)
	if math.IsNaN(float64(wlse)) || math.IsInf(float64(wlse), 0) {
		if math.Float32bits(lse) != math.Float32bits(wlse) && !(lse != lse && wlse != wlse) {
			t.Fatalf("%s: Softmax(%v) = %v, want %v", im.name, x, lse, wlse)
		}
		for i, v := range got {
			if v == v {
				t.Fatalf("%s: Softmax(%v)[%d] = %v, want NaN", im.name, x, i, v)
			}
		}
		return
	}
	tol := float64(len(x)+100) * 0x1p-24
	if math.Abs(float64(lse-wlse)) > tol+0x1p-23*math.Abs(float64(wlse)) {
		t.Fatalf("%s: Softmax of %d values returned %v, want %v", im.name, len(x), lse, wlse)
	}
	for i := range got {
		if math.IsInf(float64(x[i]), -1) && got[i] != 0 {
			t.Fatalf("%s: Softmax: -Inf at %d gave %v, want 0", im.name, i, got[i])
		}
		if d := math.Abs(float64(got[i]) - float64(want[i])); d > 0x1p-126 && d > tol*float64(want[i]) || got[i] < 0 {
			t.Fatalf("%s: Softmax of %d values: [%d] = %v, want %v", im.name, len(x), i, got[i], want[i])
		}
	}
}

// TestSoftmax checks Softmax for every implementation on rows of every
// length to 70 and the trainer's 1050, spreads from 0.1 to 200 (so that
// some entries underflow), and special values.
func TestSoftmax(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	for _, im := range impls(t) {
		for _, n := range append(seq(70), 1050) {
			for _, spread := range []float64{0.1, 5, 50, 200} {
				x := make([]float32, n)
				for i := range x {
					x[i] = float32(rng.NormFloat64()*spread + 3)
				}
				checkSoftmax(t, im, x)
				if n > 2 {
					x[rng.IntN(n)] = float32(math.Inf(-1))
					checkSoftmax(t, im, x)
				}
			}
		}
		inf, nan := float32(math.Inf(1)), float32(math.NaN())
		for _, x := range [][]float32{
			{-inf}, {-inf, -inf, -inf}, {1, nan, 2}, {nan}, {1, inf}, {inf, inf},
			{0, -inf, 0}, {88, -88}, {-1e30, 1e30}, {3.5},
		} {
			checkSoftmax(t, im, x)
		}
		if got := Softmax(nil); !math.IsInf(float64(got), -1) {
			t.Fatalf("Softmax(nil) = %v", got)
		}
	}
}

// TestExp32 compares the exp approximation with math.Exp over its range.
func TestExp32(t *testing.T) {
	for x := float32(-87.3); x <= 0; x += 0.0137 {
		got, want := float64(exp32(x)), math.Exp(float64(x))
		if math.Abs(got-want) > 3e-7*want {
			t.Fatalf("exp32(%v) = %v, want %v", x, got, want)
		}
	}
	if exp32(-88) != 0 || exp32(float32(math.Inf(-1))) != 0 {
		t.Fatalf("exp32 below the range is not 0")
	}
}

// TestScale checks Scale for every implementation: every length to 70,
// unaligned starts, the element after the slice untouched.
func TestScale(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 44))
	for _, im := range impls(t) {
		for n := 0; n < 70; n++ {
			off := rng.IntN(8)
			buf := randSlice(rng, off+n+1)
			old := append([]float32(nil), buf...)
			im.scale(-1.5, buf[off:off+n])
			for i := range buf {
				want := old[i]
				if i >= off && i < off+n {
					want *= -1.5
				}
				if buf[i] != want {
					t.Fatalf("%s: Scale n=%d off=%d: [%d] = %v, want %v", im.name, n, off, i, buf[i], want)
				}
			}
		}
	}
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}
