package model

import (
	"math/rand/v2"
	"sort"

	"github.com/batchprep/batchprep/internal/alias"
)

// Pool is where one side's uniform negatives come from with buffer
// negatives (graph/train's negatives = "buffer"): the resident partitions
// of the side's entity type, the batch's own among them. A draw is
// uniform over all their rows, so each partition is drawn in proportion
// to its size. A Pool is read-only once made and shared by workers.
//
// With degree samplers (WithDegrees), a Pool also gives the degree
// negatives of graph/train's negatives = "buffer_degree": rows drawn with
// probability proportional to their entity's degree, over all its tables.
type Pool struct {
	Tabs []*Table
	cum  []int // cum[i]: rows of Tabs[:i+1]
	// Deg[i] draws rows of Tabs[i] by degree; degCum[i] is the degrees
	// of Tabs[:i+1].
	Deg    []*alias.Table
	degCum []uint64
	// With table weights (Weighted), Tabs[i] is drawn in proportion to its
	// rows (or degrees) times Weight[i]: wCum and wDegCum are those
	// products summed over Tabs[:i+1].
	Weight        []uint64
	wCum, wDegCum []uint64
}

// NewPool returns the pool of tabs, in that order.
func NewPool(tabs []*Table) *Pool {
	p := &Pool{Tabs: tabs}
	n := 0
	for _, t := range tabs {
		n += t.Rows
		p.cum = append(p.cum, n)
	}
	return p
}

// WithDegrees returns the pool with deg[i] drawing rows of Tabs[i] by
// degree (one per table, each as long as its table).
func (p *Pool) WithDegrees(deg []*alias.Table) *Pool {
	if len(deg) != len(p.Tabs) {
		panic("model: WithDegrees: one sampler per table")
	}
	q := &Pool{Tabs: p.Tabs, cum: p.cum, Deg: deg}
	var n uint64
	for i, a := range deg {
		if a.Len() != p.Tabs[i].Rows {
			panic("model: WithDegrees: a sampler's length is not its table's rows")
		}
		n += a.Total()
		q.degCum = append(q.degCum, n)
	}
	return q
}

// Weighted returns the pool with Tabs[i]'s draws, uniform and by degree,
// weighted by w[i] > 0: a uniform draw takes table i with probability
// rows_i·w_i / Σ rows·w, then a row of it uniformly; a degree draw takes
// it with probability degrees_i·w_i / Σ degrees·w, then a row by its
// sampler. The products and their sums must stay below 2^64.
func (p *Pool) Weighted(w []uint64) *Pool {
	if len(w) != len(p.Tabs) {
		panic("model: Weighted: one weight per table")
	}
	q := *p
	q.Weight, q.wCum, q.wDegCum = w, nil, nil
	var n, d uint64
	for i, t := range p.Tabs {
		n += uint64(t.Rows) * w[i]
		q.wCum = append(q.wCum, n)
		if len(p.Deg) > 0 {
			d += p.Deg[i].Total() * w[i]
			q.wDegCum = append(q.wDegCum, d)
		}
	}
	return &q
}

// pick returns the index of the table whose share of cum holds x.
func pick(cum []uint64, x uint64) int {
	i := 0
	for cum[i] <= x {
		i++
	}
	return i
}

// Degrees is the sum of the degrees of the pool's rows (0 without
// samplers).
func (p *Pool) Degrees() uint64 {
	if len(p.degCum) == 0 {
		return 0
	}
	return p.degCum[len(p.degCum)-1]
}

// locateDegree draws a row by degree: a table in proportion to its
// degrees, then a row of it by its sampler. Degrees must be > 0.
func (p *Pool) locateDegree(rng *rand.Rand) (*Table, uint32) {
	cum := p.degCum
	if p.wDegCum != nil {
		cum = p.wDegCum
	}
	i := pick(cum, rng.Uint64N(cum[len(cum)-1]))
	return p.Tabs[i], p.Deg[i].Draw(rng.Uint64())
}

// locateWeighted draws a row uniformly from a table drawn by weight.
func (p *Pool) locateWeighted(rng *rand.Rand) (*Table, uint32) {
	x := rng.Uint64N(p.wCum[len(p.wCum)-1])
	i := pick(p.wCum, x)
	start := uint64(0)
	if i > 0 {
		start = p.wCum[i-1]
	}
	return p.Tabs[i], uint32((x - start) / p.Weight[i])
}

// Rows is the pool's row count, all tables together.
func (p *Pool) Rows() int {
	if len(p.cum) == 0 {
		return 0
	}
	return p.cum[len(p.cum)-1]
}

// locate maps x in [0, Rows) to its table and row.
func (p *Pool) locate(x int) (*Table, uint32) {
	i := sort.SearchInts(p.cum, x+1)
	start := 0
	if i > 0 {
		start = p.cum[i-1]
	}
	return p.Tabs[i], uint32(x - start)
}

// farBit marks a drawn negative of another table than the batch's own
// side: the rest of the value indexes Worker.farDraws.
const farBit = 1 << 31

// farDraw is a uniform negative drawn from another resident partition.
type farDraw struct {
	tab *Table
	row uint32
}

// StepPools is Step with buffer negatives: the uniform negatives of the
// lhs side are drawn from lhs (which holds L), those of the rhs side from
// rhs (which holds R); a nil pool draws from the side's own table, as
// Step. One draw per negative either way: with pools of one table the
// step is Step's, bit for bit. A negative from another table than the
// side's own takes its Adagrad step as soon as its gradient is known (as
// an early update does), not summed with other draws of its row.
func (w *Worker) StepPools(b Batch, L, R *Table, lhs, rhs *Pool, rng *rand.Rand) Stats {
	w.pools = [2]*Pool{lhs, rhs}
	defer func() { w.pools = [2]*Pool{} }()
	return w.Step(b, L, R, rng)
}

// draw draws one negative of a side whose own table is own, from pool
// when set: a row of own, or farBit | the index of a far draw. A degree
// draw comes from the pool's degree samplers; without them, or when the
// pool's rows have no degree at all, it is a uniform draw.
func (w *Worker) draw(own *Table, pool *Pool, degree bool, rng *rand.Rand) uint32 {
	if pool == nil {
		return uint32(rng.IntN(own.Rows))
	}
	var tab *Table
	var row uint32
	if degree && pool.Degrees() > 0 {
		tab, row = pool.locateDegree(rng)
	} else if pool.wCum != nil {
		tab, row = pool.locateWeighted(rng)
	} else {
		tab, row = pool.locate(rng.IntN(pool.Rows()))
	}
	if tab == own {
		return row
	}
	w.farDraws = append(w.farDraws, farDraw{tab, row})
	return farBit | uint32(len(w.farDraws)-1)
}

// splitDrawn puts a chunk's drawn negatives of one side into w.extra (rows
// of the side's own table) and w.far (the others), in draw order each.
func (w *Worker) splitDrawn(drawn []uint32) {
	w.extra, w.far = w.extra[:0], w.far[:0]
	for _, x := range drawn {
		if x&farBit != 0 {
			w.far = append(w.far, w.farDraws[x&^farBit])
		} else {
			w.extra = append(w.extra, x)
		}
	}
}

// gatherFar writes the far negatives' embeddings (plus the type's global
// embedding) to dst.
func (w *Worker) gatherFar(typ int, dst []float32) {
	d := w.d
	for i, f := range w.far {
		row := dst[i*d : (i+1)*d]
		f.tab.Read(int(f.row), row)
		if w.glob != nil {
			addTo(row, w.glob[typ])
		}
	}
}

// updateFar gives each far negative its Adagrad step with its gradient
// rows g (and adds them to the type's global embedding's gradient).
func (w *Worker) updateFar(typ int, g []float32) {
	d := w.d
	for i, f := range w.far {
		gi := g[i*d : (i+1)*d]
		f.tab.Update(int(f.row), gi, w.m.S.Lr, w.scratch)
		if w.dglob != nil {
			addTo(w.dglob[typ], gi)
		}
	}
}
