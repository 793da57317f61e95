package model

import (
	"fmt"
	"math"

	"github.com/batchprep/batchprep/internal/kern"
)

// Comparator scores pairs of rows: score(a, b) is a·b for dot, the cosine
// for cos, -‖a-b‖ for l2 and -‖a-b‖² for squared_l2 (higher means more
// plausible). It keeps scratch buffers, so each worker needs its own.
type Comparator struct {
	kind             int
	fp, pp, cp       []float32 // prepared (normalized for cos) rows
	fn, pn, cn       []float32 // norms (cos) or squared norms (l2 family)
	dist, pdist      []float32 // l2: clamped squared distances
	dfp, dpp, dcp    []float32
	rowF, rowP, rowC []float32    // per-row sums for the norm terms
	bufs             [3][]float32 // the comparator's own buffers for fp, pp, cp
}

// own returns the comparator's own buffer i (fp, pp, cp may alias the
// caller's rows for dot).
func (c *Comparator) own(i int) []float32 { return c.bufs[i] }

const (
	cmpDot = iota
	cmpCos
	cmpL2
	cmpSquaredL2
)

// Comparators lists the comparator names.
var Comparators = []string{"dot", "cos", "l2", "squared_l2"}

// NewComparator returns the comparator called name.
func NewComparator(name string) (*Comparator, error) {
	for k, n := range Comparators {
		if n == name {
			return &Comparator{kind: k}, nil
		}
	}
	return nil, fmt.Errorf("unknown comparator %q (want one of %v)", name, Comparators)
}

// Name is the config's comparator name.
func (c *Comparator) Name() string { return Comparators[c.kind] }

// Clone returns a comparator of the same kind with its own scratch.
func (c *Comparator) Clone() *Comparator { return &Comparator{kind: c.kind} }

func grow(b []float32, n int) []float32 {
	if cap(b) < n {
		return make([]float32, n)
	}
	return b[:n]
}

// Forward scores n fixed rows f against their n positive rows p (pos[i] =
// score(f_i, p_i)) and against m candidate rows c (neg[i*m+j] =
// score(f_i, c_j)). Backward must follow with the same arguments.
func (c *Comparator) Forward(f, p, cand []float32, n, m, d int, pos, neg []float32) {
	c.fn, c.pn, c.cn = grow(c.fn, n), grow(c.pn, n), grow(c.cn, m)
	if c.kind == cmpDot {
		// Nothing to prepare: use the rows themselves (read only).
		c.fp, c.pp, c.cp = f[:n*d], p[:n*d], cand[:m*d]
	} else {
		c.fp, c.pp, c.cp = grow(c.own(0), n*d), grow(c.own(1), n*d), grow(c.own(2), m*d)
		c.prepare(f, c.fp, c.fn, n, d)
		c.prepare(p, c.pp, c.pn, n, d)
		c.prepare(cand, c.cp, c.cn, m, d)
		c.bufs = [3][]float32{c.fp, c.pp, c.cp}
	}
	if m > 0 {
		kern.GemmNT(n, m, d, c.fp, d, c.cp, d, neg, m, false)
	}
	for i := 0; i < n; i++ {
		pos[i] = kern.Dot(c.fp[i*d:(i+1)*d], c.pp[i*d:(i+1)*d])
	}
	if c.kind < cmpL2 {
		return
	}
	c.dist, c.pdist = grow(c.dist, n*m), grow(c.pdist, n)
	for i := 0; i < n; i++ {
		c.pdist[i] = max(c.fn[i]+c.pn[i]-2*pos[i], 0)
		pos[i] = c.fromDist(c.pdist[i])
		row := neg[i*m : (i+1)*m]
		for j := range row {
			dd := max(c.fn[i]+c.cn[j]-2*row[j], 0)
			c.dist[i*m+j] = dd
			row[j] = c.fromDist(dd)
		}
	}
}

func (c *Comparator) fromDist(dd float32) float32 {
	if c.kind == cmpSquaredL2 {
		return -dd
	}
	return -float32(math.Sqrt(float64(max(dd, 1e-30))))
}

// dDist is the derivative of the score with respect to the squared
// distance.
func (c *Comparator) dDist(dd float32) float32 {
	if c.kind == cmpSquaredL2 {
		return -1
	}
	if dd <= 1e-30 {
		return 0
	}
	return -0.5 / float32(math.Sqrt(float64(dd)))
}

// prepare copies x to out (normalized for cos) and records each row's norm
// (cos) or squared norm (l2 family).
func (c *Comparator) prepare(x, out, norms []float32, n, d int) {
	copy(out[:n*d], x[:n*d])
	if c.kind == cmpDot {
		return
	}
	for i := 0; i < n; i++ {
		r := out[i*d : (i+1)*d]
		sq := kern.Dot(r, r)
		if c.kind != cmpCos {
			norms[i] = sq
			continue
		}
		nr := max(float32(math.Sqrt(float64(sq))), 1e-12)
		norms[i] = nr
		for k := range r {
			r[k] /= nr
		}
	}
}

// Backward adds to df, dp and dcand the gradient given dpos and dneg, the
// gradients with respect to pos and neg (invariant 2). dneg is overwritten.
func (c *Comparator) Backward(f, p, cand []float32, n, m, d int, dpos, dneg, df, dp, dcand []float32) {
	if c.kind == cmpDot && df != nil && dp != nil && dcand != nil {
		c.backwardDot(f, p, cand, n, m, d, dpos, dneg, df, dp, dcand)
		return
	}
	c.dfp, c.dpp, c.dcp = grow(c.dfp, n*d), grow(c.dpp, n*d), grow(c.dcp, m*d)
	clear(c.dfp)
	clear(c.dpp)
	clear(c.dcp)
	if c.kind >= cmpL2 {
		// score = s(D), D = |a|² + |b|² - 2a·b: the product term gets
		// -2·s'(D), and the norm terms add 2·s'(D)·a to a's gradient.
		c.rowF, c.rowP, c.rowC = grow(c.rowF, n), grow(c.rowP, n), grow(c.rowC, m)
		clear(c.rowC)
		for i := 0; i < n; i++ {
			row := dneg[i*m : (i+1)*m]
			var sf float32
			for j := range row {
				g := row[j] * c.dDist(c.dist[i*m+j])
				sf += g
				c.rowC[j] += g
				row[j] = -2 * g
			}
			e := dpos[i] * c.dDist(c.pdist[i])
			c.rowF[i] = sf + e
			c.rowP[i] = e
			fr, pr := c.fp[i*d:(i+1)*d], c.pp[i*d:(i+1)*d]
			kern.Axpy(-2*e, pr, c.dfp[i*d:(i+1)*d])
			kern.Axpy(-2*e, fr, c.dpp[i*d:(i+1)*d])
			kern.Axpy(2*c.rowF[i], fr, c.dfp[i*d:(i+1)*d])
			kern.Axpy(2*c.rowP[i], pr, c.dpp[i*d:(i+1)*d])
		}
		for j := 0; j < m; j++ {
			kern.Axpy(2*c.rowC[j], c.cp[j*d:(j+1)*d], c.dcp[j*d:(j+1)*d])
		}
	} else {
		for i := 0; i < n; i++ {
			kern.Axpy(dpos[i], c.pp[i*d:(i+1)*d], c.dfp[i*d:(i+1)*d])
			kern.Axpy(dpos[i], c.fp[i*d:(i+1)*d], c.dpp[i*d:(i+1)*d])
		}
	}
	if m > 0 {
		kern.GemmNN(n, d, m, dneg, m, c.cp, d, c.dfp, d, true) // dF += dG·C
		kern.GemmTN(m, d, n, dneg, m, c.fp, d, c.dcp, d, true) // dC += dGᵀ·F
	}
	c.unprepare(c.fp, c.fn, c.dfp, df, n, d)
	c.unprepare(c.pp, c.pn, c.dpp, dp, n, d)
	c.unprepare(c.cp, c.cn, c.dcp, dcand, m, d)
}

// backwardDot is Backward for dot, whose prepared rows are the rows
// themselves: the products accumulate straight into df, dp and dcand,
// without the prepared-gradient buffers and the pass that adds them.
func (c *Comparator) backwardDot(f, p, cand []float32, n, m, d int, dpos, dneg, df, dp, dcand []float32) {
	for i := 0; i < n; i++ {
		kern.Axpy(dpos[i], p[i*d:(i+1)*d], df[i*d:(i+1)*d])
		kern.Axpy(dpos[i], f[i*d:(i+1)*d], dp[i*d:(i+1)*d])
	}
	if m > 0 {
		kern.GemmNN(n, d, m, dneg, m, cand, d, df, d, true) // dF += dG·C
		kern.GemmTN(m, d, n, dneg, m, f, d, dcand, d, true) // dC += dGᵀ·F
	}
}

// unprepare adds to dx the gradient with respect to the raw rows, given
// dxp, the gradient with respect to the prepared rows xp.
func (c *Comparator) unprepare(xp, norms, dxp, dx []float32, n, d int) {
	if dx == nil {
		return
	}
	if c.kind != cmpCos {
		addTo(dx[:n*d], dxp[:n*d])
		return
	}
	for i := 0; i < n; i++ {
		u, g := xp[i*d:(i+1)*d], dxp[i*d:(i+1)*d]
		ug := kern.Dot(u, g)
		inv := 1 / norms[i]
		out := dx[i*d : (i+1)*d]
		for k := range out {
			out[k] += (g[k] - u[k]*ug) * inv
		}
	}
}
