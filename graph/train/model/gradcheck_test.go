package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func randVec(rng *rand.Rand, n int, scale float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(scale * rng.NormFloat64())
	}
	return v
}

// checkGrad compares analytic gradient g of f at x with central
// differences, perturbing every element of x in place.
func checkGrad(t *testing.T, name string, x, g []float32, f func() float64) {
	t.Helper()
	const eps = 1e-2
	for i := range x {
		old := x[i]
		x[i] = old + eps
		up := f()
		x[i] = old - eps
		down := f()
		x[i] = old
		num := (up - down) / (2 * eps)
		if diff := math.Abs(num - float64(g[i])); diff > 2e-2*(1+math.Abs(num)) {
			t.Fatalf("%s: element %d: analytic %.5g, numeric %.5g", name, i, g[i], num)
		}
	}
}

func dot64(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

// Invariant 1: every operator's Backward is the derivative of its Forward,
// for the input rows and the parameters.
func TestOperatorGradients(t *testing.T) {
	const n, d = 3, 6
	for _, name := range Operators {
		rng := rand.New(rand.NewPCG(1, 2))
		op, err := NewOperator(name, d)
		if err != nil {
			t.Fatal(err)
		}
		p := make([]float32, op.NumParams(d))
		op.Init(p, d)
		for i := range p {
			p[i] += float32(0.3 * rng.NormFloat64())
		}
		x, dy := randVec(rng, n*d, 1), randVec(rng, n*d, 1)
		y := make([]float32, n*d)
		f := func() float64 { op.Forward(p, x, y, n, d); return dot64(dy, y) }
		dx, dp := make([]float32, n*d), make([]float32, len(p))
		op.Backward(p, x, dy, dx, dp, n, d)
		checkGrad(t, name+" dx", x, dx, f)
		checkGrad(t, name+" dp", p, dp, f)
	}
}

// Init is the identity for every operator.
func TestOperatorInitIsIdentity(t *testing.T) {
	const d = 4
	x := []float32{1, -2, 3, 0.5}
	for _, name := range Operators {
		op, _ := NewOperator(name, d)
		p := make([]float32, op.NumParams(d))
		op.Init(p, d)
		y := make([]float32, d)
		op.Forward(p, x, y, 1, d)
		if fmt.Sprint(y) != fmt.Sprint(x) {
			t.Errorf("%s: init maps %v to %v", name, x, y)
		}
	}
	if _, err := NewOperator("complex_diagonal", 3); err == nil {
		t.Error("complex_diagonal accepted an odd dimension")
	}
	if _, err := NewOperator("rotation", 4); err == nil {
		t.Error("unknown operator accepted")
	}
}

// Invariant 2: every comparator's Backward is the derivative of its
// Forward with respect to the fixed rows, the positives and the candidates.
func TestComparatorGradients(t *testing.T) {
	const n, m, d = 3, 4, 5
	for _, name := range Comparators {
		rng := rand.New(rand.NewPCG(3, 4))
		c, _ := NewComparator(name)
		f, p, cand := randVec(rng, n*d, 1), randVec(rng, n*d, 1), randVec(rng, m*d, 1)
		a, b := randVec(rng, n, 1), randVec(rng, n*m, 1)
		pos, neg := make([]float32, n), make([]float32, n*m)
		obj := func() float64 { c.Forward(f, p, cand, n, m, d, pos, neg); return dot64(a, pos) + dot64(b, neg) }
		obj()
		df, dp, dc := make([]float32, n*d), make([]float32, n*d), make([]float32, m*d)
		c.Backward(f, p, cand, n, m, d, a, append([]float32(nil), b...), df, dp, dc)
		checkGrad(t, name+" df", f, df, obj)
		checkGrad(t, name+" dp", p, dp, obj)
		checkGrad(t, name+" dcand", cand, dc, obj)
	}
}

// Comparator values: dot, cosine, -distance, -squared distance.
func TestComparatorValues(t *testing.T) {
	f, p := []float32{3, 4}, []float32{0, 1}
	want := map[string]float32{"dot": 4, "cos": 0.8, "l2": -float32(math.Sqrt(18)), "squared_l2": -18}
	for name, w := range want {
		c, _ := NewComparator(name)
		pos, neg := make([]float32, 1), make([]float32, 1)
		c.Forward(f, p, p, 1, 1, 2, pos, neg)
		if math.Abs(float64(pos[0]-w)) > 1e-5 || pos[0] != neg[0] {
			t.Errorf("%s: pos %v neg %v, want %v", name, pos[0], neg[0], w)
		}
	}
}

// Invariant 3: every loss's gradient is the derivative of its value, with
// weights; masked negatives add no loss and no gradient.
func TestLossGradients(t *testing.T) {
	const n, m = 3, 4
	for _, name := range Losses {
		rng := rand.New(rand.NewPCG(5, 6))
		l, _ := NewLoss(name, 0.5)
		pos, neg, w := randVec(rng, n, 1), randVec(rng, n*m, 1), randVec(rng, n, 1)
		for i := range w {
			w[i] = float32(math.Abs(float64(w[i]))) + 0.1
		}
		dpos, dneg := make([]float32, n), make([]float32, n*m)
		obj := func() float64 {
			return l.Eval(pos, neg, w, n, m, m+1, make([]float32, n), make([]float32, n*m))
		}
		l.Eval(pos, neg, w, n, m, m+1, dpos, dneg)
		checkGrad(t, name+" dpos", pos, dpos, obj)
		checkGrad(t, name+" dneg", neg, dneg, obj)

		before := obj()
		neg[1] = Masked
		masked := obj()
		l.Eval(pos, neg, w, n, m, m+1, dpos, dneg)
		if dneg[1] != 0 {
			t.Errorf("%s: masked negative has gradient %v", name, dneg[1])
		}
		neg[1] = Masked * 2
		if again := obj(); again != masked {
			t.Errorf("%s: masked value changes the loss: %v vs %v (unmasked %v)", name, again, masked, before)
		}
	}
}
