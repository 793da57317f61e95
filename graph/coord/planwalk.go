package coord

import (
	"fmt"

	"github.com/batchprep/batchprep/graph"
	"github.com/batchprep/batchprep/graph/plan"
	"github.com/batchprep/batchprep/graph/sched"
)

// Passes is the number of passes of p: epochs x edge sets x chunks. Pass k
// is the k-th (epoch, edge set, chunk) of the single-process loop.
func Passes(p *plan.Plan) int {
	return p.Options().NumEpochs * p.NumEdgeSets() * p.NumChunks()
}

// PassCoords returns pass k's epoch, edge set and chunk.
func PassCoords(p *plan.Plan, k int) (epoch, set, chunk int) {
	c, s := p.NumChunks(), p.NumEdgeSets()
	return k / c / s, k / c % s, k % c
}

// PlanOptions returns the Options of a run over p: its grid, its passes
// and, as each pass's preference order, the plan's bucket order of that
// pass. The caller sets Run, Rank, World and LeaseTTL.
func PlanOptions(p *plan.Plan) Options {
	l, r := p.Shape()
	return Options{L: l, R: r, Passes: Passes(p), Order: func(k int) []graph.Bucket {
		e, s, c := PassCoords(p, k)
		return p.Order(e, s, c)
	}}
}

// Index returns b's place in pass k's bucket order (the "index" of a
// bucket record).
func Index(p *plan.Plan, k int, b graph.Bucket) int {
	e, s, c := PassCoords(p, k)
	for i, x := range p.Order(e, s, c) {
		if x == b {
			return i
		}
	}
	panic(fmt.Sprintf("coord: bucket (%d,%d) not in pass %d's order", b.Lhs, b.Rhs, k))
}

// Simulate runs w simulated trainers over every pass of p under policy,
// a bucket taking as long as its chunk has edges (sched invariant 6).
func Simulate(p *plan.Plan, r graph.Reader, w int, policy sched.Policy) (*sched.SimResult, error) {
	o := PlanOptions(p)
	passes := make([]sched.Pass, o.Passes)
	for k := range passes {
		passes[k] = sched.Pass{L: o.L, R: o.R, Order: o.Order(k), TreeInit: k == 0}
	}
	var err error
	cost := func(k int, b graph.Bucket) float64 {
		_, s, c := PassCoords(p, k)
		n, e := r.NumEdges(s, b)
		if e != nil && err == nil {
			err = e
		}
		begin, end := plan.ChunkRange(n, p.NumChunks(), c)
		return float64(end - begin)
	}
	res, serr := sched.Simulate(passes, w, policy, cost)
	if err != nil {
		return nil, err
	}
	return res, serr
}
