package model

import (
	"fmt"
	"testing"
)

// Every operator's output at non-identity parameters, hand-computed, on
// two rows x = (1, 2, -1, 0.5) and e₂ = (0, 1, 0, 0) at d = 4. The
// linear matrix A is row-major: y = A·x.
func TestOperatorValues(t *testing.T) {
	const d = 4
	A := []float32{1, 2, 0, 0, 0, 1, 0, -1, 3, 0, 0, 1, 0, 0, 2, 2}
	cases := map[string]struct{ p, want []float32 }{
		"none":        {nil, []float32{1, 2, -1, 0.5, 0, 1, 0, 0}},
		"translation": {[]float32{0.5, -1, 2, 0}, []float32{1.5, 1, 1, 0.5, 0.5, 0, 2, 0}},
		"diagonal":    {[]float32{2, -1, 0.5, 3}, []float32{2, -2, -0.5, 1.5, 0, -1, 0, 0}},
		// Real parts (1, 2), imaginary (-1, 0.5), times a = (0.5+2i, -1+1i):
		// (1-1i)(0.5+2i) = 2.5+1.5i, (2+0.5i)(-1+1i) = -2.5+1.5i.
		"complex_diagonal": {[]float32{0.5, -1, 2, 1}, []float32{2.5, -2.5, 1.5, 1.5, 0, -1, 0, 1}},
		"linear":           {A, []float32{5, 1.5, 3.5, -1, 2, 1, 0, 0}},
		"affine":           {append(append([]float32(nil), A...), 1, -1, 0, 0.5), []float32{6, 0.5, 3.5, -0.5, 3, 0, 0, 0.5}},
	}
	x := []float32{1, 2, -1, 0.5, 0, 1, 0, 0}
	for _, name := range Operators {
		c, ok := cases[name]
		if !ok {
			t.Errorf("operator %s has no hand-computed case", name)
			continue
		}
		op, _ := NewOperator(name, d)
		if len(c.p) != op.NumParams(d) {
			t.Fatalf("%s: %d parameters, the case has %d", name, op.NumParams(d), len(c.p))
		}
		y := make([]float32, 2*d)
		op.Forward(c.p, x, y, 2, d)
		if fmt.Sprint(y) != fmt.Sprint(c.want) {
			t.Errorf("%s: %v, want %v", name, y, c.want)
		}
	}
}
