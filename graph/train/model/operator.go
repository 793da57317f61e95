package model

import (
	"fmt"

	"github.com/batchprep/batchprep/internal/kern"
)

// Operator is a relation operator applied to embedding rows. Its
// parameters are one flat vector per relation (and side, in dynamic mode).
type Operator interface {
	// Name is the config's operator name.
	Name() string
	// NumParams is the length of the parameter vector at dimension d.
	NumParams(d int) int
	// Init writes the identity-like starting parameters.
	Init(p []float32, d int)
	// Forward writes y = op(x) for n rows of d columns.
	Forward(p, x, y []float32, n, d int)
	// Backward adds to dx and dp the gradient of the loss given dy, the
	// gradient with respect to y (invariant 1). dx may be nil.
	Backward(p, x, dy, dx, dp []float32, n, d int)
}

// Operators lists the operator names, as the config accepts them.
var Operators = []string{"none", "translation", "diagonal", "complex_diagonal", "linear", "affine"}

// NewOperator returns the operator called name; complex_diagonal needs an
// even dimension.
func NewOperator(name string, d int) (Operator, error) {
	switch name {
	case "none":
		return none{}, nil
	case "translation":
		return translation{}, nil
	case "diagonal":
		return diagonal{}, nil
	case "complex_diagonal":
		if d%2 != 0 {
			return nil, fmt.Errorf("operator complex_diagonal needs an even dimension, got %d", d)
		}
		return complexDiagonal{}, nil
	case "linear":
		return linear{}, nil
	case "affine":
		return affine{}, nil
	}
	return nil, fmt.Errorf("unknown operator %q (want one of %v)", name, Operators)
}

type none struct{}

func (none) Name() string                                 { return "none" }
func (none) NumParams(int) int                            { return 0 }
func (none) Init([]float32, int)                          {}
func (none) Forward(_, x, y []float32, n, d int)          { copy(y[:n*d], x[:n*d]) }
func (none) Backward(_, _, dy, dx, _ []float32, n, d int) { addTo(dx, dy[:n*d]) }

// translation: y = x + t.
type translation struct{}

func (translation) Name() string        { return "translation" }
func (translation) NumParams(d int) int { return d }
func (translation) Init(p []float32, _ int) {
	clear(p)
}
func (translation) Forward(p, x, y []float32, n, d int) {
	for i := 0; i < n; i++ {
		xr, yr := x[i*d:(i+1)*d], y[i*d:(i+1)*d]
		for k := range yr {
			yr[k] = xr[k] + p[k]
		}
	}
}
func (translation) Backward(_, _, dy, dx, dp []float32, n, d int) {
	addTo(dx, dy[:n*d])
	for i := 0; i < n; i++ {
		addTo(dp[:d], dy[i*d:(i+1)*d])
	}
}

// diagonal: y = x ⊙ a.
type diagonal struct{}

func (diagonal) Name() string        { return "diagonal" }
func (diagonal) NumParams(d int) int { return d }
func (diagonal) Init(p []float32, _ int) {
	for k := range p {
		p[k] = 1
	}
}
func (diagonal) Forward(p, x, y []float32, n, d int) {
	for i := 0; i < n; i++ {
		xr, yr := x[i*d:(i+1)*d], y[i*d:(i+1)*d]
		for k := range yr {
			yr[k] = xr[k] * p[k]
		}
	}
}
func (diagonal) Backward(p, x, dy, dx, dp []float32, n, d int) {
	for i := 0; i < n; i++ {
		xr, gr := x[i*d:(i+1)*d], dy[i*d:(i+1)*d]
		for k, g := range gr {
			if dx != nil {
				dx[i*d+k] += g * p[k]
			}
			dp[k] += g * xr[k]
		}
	}
}

// complexDiagonal: the first d/2 columns are real parts, the last d/2
// imaginary parts; y = x · a, complex and element-wise.
type complexDiagonal struct{}

func (complexDiagonal) Name() string        { return "complex_diagonal" }
func (complexDiagonal) NumParams(d int) int { return d }
func (complexDiagonal) Init(p []float32, d int) {
	for k := range p {
		p[k] = 0
		if k < d/2 {
			p[k] = 1
		}
	}
}
func (complexDiagonal) Forward(p, x, y []float32, n, d int) {
	h := d / 2
	ar, ai := p[:h], p[h:d]
	for i := 0; i < n; i++ {
		xr, xi := x[i*d:i*d+h], x[i*d+h:(i+1)*d]
		yr, yi := y[i*d:i*d+h], y[i*d+h:(i+1)*d]
		for k := range yr {
			yr[k], yi[k] = xr[k]*ar[k]-xi[k]*ai[k], xr[k]*ai[k]+xi[k]*ar[k]
		}
	}
}
func (complexDiagonal) Backward(p, x, dy, dx, dp []float32, n, d int) {
	h := d / 2
	ar, ai := p[:h], p[h:d]
	for i := 0; i < n; i++ {
		xr, xi := x[i*d:i*d+h], x[i*d+h:(i+1)*d]
		gr, gi := dy[i*d:i*d+h], dy[i*d+h:(i+1)*d]
		for k := range gr {
			if dx != nil {
				dx[i*d+k] += gr[k]*ar[k] + gi[k]*ai[k]
				dx[i*d+h+k] += -gr[k]*ai[k] + gi[k]*ar[k]
			}
			dp[k] += gr[k]*xr[k] + gi[k]*xi[k]
			dp[h+k] += -gr[k]*xi[k] + gi[k]*xr[k]
		}
	}
}

// linear: y = A·x, A a d×d matrix stored row-major (Y = X·Aᵀ).
type linear struct{}

func (linear) Name() string        { return "linear" }
func (linear) NumParams(d int) int { return d * d }
func (linear) Init(p []float32, d int) {
	clear(p)
	for k := 0; k < d; k++ {
		p[k*d+k] = 1
	}
}
func (linear) Forward(p, x, y []float32, n, d int) {
	kern.GemmNT(n, d, d, x, d, p, d, y, d, false)
}
func (linear) Backward(p, x, dy, dx, dp []float32, n, d int) {
	if dx != nil {
		kern.GemmNN(n, d, d, dy, d, p, d, dx, d, true) // dX += dY·A
	}
	kern.GemmTN(d, d, n, dy, d, x, d, dp, d, true) // dA += dYᵀ·X
}

// affine: y = A·x + b; the parameters are A (d×d) then b (d).
type affine struct{}

func (affine) Name() string        { return "affine" }
func (affine) NumParams(d int) int { return d*d + d }
func (affine) Init(p []float32, d int) {
	linear{}.Init(p[:d*d], d)
	clear(p[d*d:])
}
func (affine) Forward(p, x, y []float32, n, d int) {
	linear{}.Forward(p[:d*d], x, y, n, d)
	b := p[d*d : d*d+d]
	for i := 0; i < n; i++ {
		addTo(y[i*d:(i+1)*d], b)
	}
}
func (affine) Backward(p, x, dy, dx, dp []float32, n, d int) {
	linear{}.Backward(p[:d*d], x, dy, dx, dp[:d*d], n, d)
	db := dp[d*d : d*d+d]
	for i := 0; i < n; i++ {
		addTo(db, dy[i*d:(i+1)*d])
	}
}

// addTo adds src to dst element-wise (dst may be nil: no-op).
func addTo(dst, src []float32) {
	if dst == nil {
		return
	}
	kern.Axpy(1, src, dst)
}
