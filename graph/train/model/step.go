package model

import (
	"math"
	"math/rand/v2"

	"github.com/batchprep/batchprep/internal/kern"
)

// Worker runs batch steps on a shared Model and shared Tables. Its
// buffers are its own: one Worker per goroutine.
type Worker struct {
	m    *Model
	cmp  *Comparator
	loss Loss
	d    int

	// Per batch: private copies of the shared parameters in use, and their
	// gradients.
	stamp, gen []int // relation -> batch stamp of the copy
	params     [][2][]float32
	dparams    [][2][]float32
	glob       [][]float32
	dglob      [][]float32
	gl, gr     rowGrads
	usedRels   []int
	scratch    []float32
	ahead      int       // rows prefetched ahead in gather, scatter and apply (0: none; see memhints.go)
	late       bool      // every row takes its step after the batch (no early updates: early.go)
	drawn      []uint32  // the batch's uniform negatives, drawn up front
	pools      [2]*Pool  // lhs and rhs pools of buffer negatives (StepPools), nil: the side's own table
	farDraws   []farDraw // drawn negatives of other tables than the side's own (pool.go)
	earlyRows  int       // rows updated early, for tests

	// Per chunk.
	u, v, cand, t, f, df, dt, dcand, dx []float32
	pos, neg, dpos, dneg, wts           []float32
	extra                               []uint32
	far                                 []farDraw
}

// NewWorker returns a worker for m.
func NewWorker(m *Model) *Worker {
	c, _ := NewComparator(m.S.Comparator)
	l, _ := NewLoss(m.S.Loss, m.S.Margin)
	w := &Worker{m: m, cmp: c, loss: l, d: m.S.Dim, stamp: make([]int, len(m.Rels)),
		params: make([][2][]float32, len(m.Rels)), dparams: make([][2][]float32, len(m.Rels)),
		scratch: make([]float32, m.S.Dim)}
	if memHints.Load() {
		w.ahead = prefetchAhead
	} else {
		w.late = true
	}
	w.gen = []int{0}
	for i := range w.stamp {
		w.stamp[i] = -1
	}
	for range m.Global {
		w.glob = append(w.glob, make([]float32, w.d))
		w.dglob = append(w.dglob, make([]float32, w.d))
	}
	return w
}

// Stats are the totals of a batch step.
type Stats struct {
	Loss  float64 // summed over positives (and the regularizer)
	Count int     // positives
}

// begin reads the global embeddings and forgets the previous batch.
func (w *Worker) begin() {
	w.gen[0]++
	w.usedRels = w.usedRels[:0]
	for t, g := range w.m.Global {
		g.Read(w.glob[t])
		clear(w.dglob[t])
	}
}

// rel returns the private copy of relation r's parameters of side, read
// once per batch, and its gradient buffer.
func (w *Worker) rel(r, side int) (p, dp []float32) {
	if w.stamp[r] != w.gen[0] {
		w.stamp[r] = w.gen[0]
		w.usedRels = append(w.usedRels, r)
		for s, d := range w.m.Params[r] {
			if d == nil {
				continue
			}
			w.params[r][s] = grow(w.params[r][s], len(d.P))
			d.Read(w.params[r][s])
			w.dparams[r][s] = grow(w.dparams[r][s], len(d.P))
			clear(w.dparams[r][s])
		}
	}
	return w.params[r][side], w.dparams[r][side]
}

// gather writes the embeddings (plus the type's global embedding) of ids
// of tab to dst.
func (w *Worker) gather(tab *Table, typ int, ids []uint32, dst []float32) {
	d := w.d
	for _, id := range ids[:min(w.ahead, len(ids))] {
		kern.Prefetch(tab.Row(int(id)))
	}
	for i, id := range ids {
		if a := i + w.ahead; w.ahead > 0 && a < len(ids) {
			kern.Prefetch(tab.Row(int(ids[a])))
		}
		row := dst[i*d : (i+1)*d]
		tab.Read(int(id), row)
		if w.glob != nil {
			addTo(row, w.glob[typ])
		}
	}
}

// scatter adds the gradient rows g of ids to rg (and to the type's global
// embedding).
func (w *Worker) scatter(rg *rowGrads, ids []uint32, g []float32) {
	d := w.d
	for _, id := range ids[:min(w.ahead, len(ids))] {
		kern.PrefetchInt32(&rg.slot[id])
	}
	for i, id := range ids {
		if a := i + w.ahead; w.ahead > 0 && a < len(ids) {
			kern.PrefetchInt32(&rg.slot[ids[a]])
		}
		rg.add(id, g[i*d:(i+1)*d])
		if w.dglob != nil {
			addTo(w.dglob[rg.typ], g[i*d:(i+1)*d])
		}
	}
}

// Step trains one batch whose lhs entities are rows of L and rhs entities
// rows of R (the same *Table when they are one partition of one type):
// forward, backward and one optimizer step (invariants 4, 5). Negatives are
// drawn from rng.
func (w *Worker) Step(b Batch, L, R *Table, rng *rand.Rand) Stats {
	st, grR := w.grads(b, L, R, rng, !w.late)
	if st.Count > 0 {
		w.apply(grR)
	}
	return st
}

// start begins a batch whose lhs entities are rows of L and rhs entities
// rows of R: it forgets the previous batch, resets the lhs accumulator to
// L and returns the batch's first relation and the rhs table's
// accumulator (the lhs one when R is L).
func (w *Worker) start(b Batch, L, R *Table) (Relation, *rowGrads) {
	w.begin()
	r0 := w.m.Rels[b.Rel[0]]
	w.gl.reset(L, r0.Lhs)
	if R == L {
		return r0, &w.gl
	}
	w.gr.reset(R, r0.Rhs)
	return r0, &w.gr
}

// grads computes the batch's loss and accumulates its gradients; it
// returns the rhs table's accumulator. It changes nothing shared unless
// early, when the negatives that occur once in the batch take their
// Adagrad step as soon as their gradient is known (early.go; large tables
// only) and are not in the accumulators.
func (w *Worker) grads(b Batch, L, R *Table, rng *rand.Rand, early bool) (Stats, *rowGrads) {
	m, d := w.m, w.d
	n := len(b.Lhs)
	if n == 0 {
		return Stats{}, nil
	}
	r0, grR := w.start(b, L, R)
	cs := n
	switch {
	case r0.AllNegs:
	case m.S.NumBatchNegs > 0:
		cs = m.S.NumBatchNegs
	case m.S.DegreeNegs > 0:
		cs = m.S.DegreeNegs
	case m.S.NumUniformNegs > 0:
		cs = m.S.NumUniformNegs
	}
	ke := m.S.NumUniformNegs + m.S.DegreeNegs
	rhsDraws := !m.S.DisableRhsNegs && !r0.AllNegs && ke > 0
	lhsDraws := !m.S.DisableLhsNegs && !r0.AllNegs && ke > 0
	w.drawNegatives(n, cs, m.S.DegreeNegs, ke, rhsDraws, lhsDraws, L, R, rng)
	w.census(b, cs, ke, rhsDraws, lhsDraws, early, grR)
	drawn := w.drawn
	var st Stats
	for c0 := 0; c0 < n; c0 += cs {
		c1 := min(n, c0+cs)
		k := c1 - c0
		w.u, w.v = grow(w.u, k*d), grow(w.v, k*d)
		w.gather(L, r0.Lhs, b.Lhs[c0:c1], w.u)
		w.gather(R, r0.Rhs, b.Rhs[c0:c1], w.v)
		w.wts = grow(w.wts, k)
		for i := range k {
			w.wts[i] = m.Rels[b.Rel[c0+i]].Weight
			if b.Weight != nil {
				w.wts[i] *= b.Weight[c0+i]
			}
		}
		ch := chunk{rel: b.Rel[c0:c1], k: k, size: min(cs, n), batchNegs: m.S.NumBatchNegs, uniform: ke}
		// A side whose negatives are disabled still scores its positives
		// under the logistic loss (PBG calls the loss with no negatives,
		// which leaves the positives' term); the other losses are 0 there.
		posOnly := w.loss.kind == lossLogistic
		if !m.S.DisableRhsNegs || posOnly {
			ch.fixed, ch.fixedIDs, ch.fixedG = w.u, b.Lhs[c0:c1], &w.gl
			ch.pos, ch.posIDs, ch.candTab, ch.candG = w.v, b.Rhs[c0:c1], R, grR
			ch.noNegs = m.S.DisableRhsNegs
			ch.drawn = nil
			if rhsDraws {
				ch.drawn, drawn = drawn[:ke], drawn[ke:]
			}
			st.Loss += w.direction(&ch, true, r0.AllNegs, rng)
		}
		if !m.S.DisableLhsNegs || posOnly {
			ch.fixed, ch.fixedIDs, ch.fixedG = w.v, b.Rhs[c0:c1], grR
			ch.pos, ch.posIDs, ch.candTab, ch.candG = w.u, b.Lhs[c0:c1], L, &w.gl
			ch.noNegs = m.S.DisableLhsNegs
			ch.drawn = nil
			if lhsDraws {
				ch.drawn, drawn = drawn[:ke], drawn[ke:]
			}
			st.Loss += w.direction(&ch, false, r0.AllNegs, rng)
		}
		if m.S.RegCoef > 0 {
			st.Loss += w.regularize(&ch, b.Lhs[c0:c1], b.Rhs[c0:c1], grR)
		}
		st.Count += k
	}
	return st, grR
}

// chunk is what a direction needs of the current chunk of positives.
type chunk struct {
	rel              []uint32
	k                int
	size             int       // positives per chunk as PBG pads them: min(chunk size, batch size)
	noNegs           bool      // the side's negatives are disabled: score the positives only
	fixed, pos       []float32 // gathered rows of the fixed side and of the corrupted side's positives
	fixedIDs, posIDs []uint32
	fixedG, candG    *rowGrads
	candTab          *Table
	batchNegs        int        // positives per chunk used as negatives (0: none)
	uniform          int        // uniform negatives
	drawn            []uint32   // the uniform negatives drawn up front (nil: draw them from rng)
	ranks            *[]float64 // evaluation: append each positive's rank, no gradient
}

// direction scores the chunk's positives against negatives of one side
// (rhs when corruptRhs) and accumulates the loss's gradients.
func (w *Worker) direction(ch *chunk, corruptRhs, allNegs bool, rng *rand.Rand) float64 {
	m, d, k := w.m, w.d, ch.k
	dyn := m.S.Dynamic
	// Candidates: the positives' rows, then all entities or the uniform
	// negatives.
	var ke int
	switch {
	case ch.noNegs:
		w.extra = w.extra[:0]
	case allNegs:
		ke = ch.candTab.Rows
		w.extra = w.extra[:0]
		for i := range ke {
			w.extra = append(w.extra, uint32(i))
		}
	case ch.drawn != nil:
		ke = ch.uniform
		w.splitDrawn(ch.drawn)
	default:
		ke = ch.uniform
		w.extra = Uniform(w.extra, ke, ch.candTab.Rows, rng)
	}
	if ch.drawn == nil {
		w.far = w.far[:0]
	}
	mall := k + ke
	w.cand = grow(w.cand, mall*d)
	copy(w.cand, ch.pos[:k*d])
	w.gather(ch.candTab, ch.candG.typ, w.extra, w.cand[k*d:])
	nOwn := k + len(w.extra) // candidates: positives, own negatives, then far ones
	w.gatherFar(ch.candG.typ, w.cand[nOwn*d:mall*d])
	negStart := 0
	if allNegs || ch.batchNegs == 0 || ch.noNegs {
		negStart = k
	}
	// The operator: on the candidates (one relation for the whole batch)
	// when the rhs is corrupted outside dynamic mode, else on the fixed
	// rows, per row's relation (side 1 in dynamic mode when the rhs is
	// corrupted).
	candOp := !dyn && corruptRhs
	side := 0
	if dyn && corruptRhs {
		side = 1
	}
	r0 := int(ch.rel[0])
	t, f := w.cand[:mall*d], ch.fixed[:k*d]
	if candOp {
		p, _ := w.rel(r0, 0)
		w.t = grow(w.t, mall*d)
		m.Rels[r0].Op.Forward(p, w.cand, w.t, mall, d)
		t = w.t[:mall*d]
	} else {
		w.f = grow(w.f, k*d)
		for i := range k {
			r := int(ch.rel[i])
			p, _ := w.rel(r, side)
			m.Rels[r].Op.Forward(p, ch.fixed[i*d:(i+1)*d], w.f[i*d:(i+1)*d], 1, d)
		}
		f = w.f[:k*d]
	}
	mneg := mall - negStart
	w.pos, w.dpos = grow(w.pos, k), grow(w.dpos, k)
	w.neg, w.dneg = grow(w.neg, k*mneg), grow(w.dneg, k*mneg)
	w.cmp.Forward(f, t[:k*d], t[negStart*d:], k, mneg, d, w.pos, w.neg)
	for i := range k {
		switch {
		case ch.noNegs:
		case allNegs:
			w.neg[i*mneg+int(ch.posIDs[i])] = Masked
		case negStart == 0:
			w.neg[i*mneg+i] = Masked
		}
	}
	if ch.ranks != nil {
		// Ties count against the positive; a candidate that is the true
		// entity itself (another positive of the chunk with the same
		// entity, or a uniform draw of it) is not a negative.
		for i := range k {
			rank := 1
			for j, s := range w.neg[i*mneg : (i+1)*mneg] {
				var id uint32 // candidate negStart+j: a positive's entity, then the extra ones
				if c := negStart + j; c < k {
					id = ch.posIDs[c]
				} else {
					id = w.extra[c-k]
				}
				if s >= w.pos[i] && id != ch.posIDs[i] {
					rank++
				}
			}
			*ch.ranks = append(*ch.ranks, float64(rank))
		}
		return 0
	}
	// PBG's count of negatives per positive: the batch negatives padded
	// to the full chunk (the last chunk of a batch is short), the masked
	// one included.
	numNeg := mneg
	switch {
	case ch.noNegs:
		numNeg = 0
	case negStart == 0:
		numNeg = ch.size + ke
	}
	loss := w.loss.Eval(w.pos, w.neg, w.wts, k, mneg, numNeg, w.dpos, w.dneg)
	w.df, w.dt = grow(w.df, k*d), grow(w.dt, mall*d)
	clear(w.df)
	clear(w.dt)
	w.cmp.Backward(f, t[:k*d], t[negStart*d:], k, mneg, d, w.dpos, w.dneg, w.df, w.dt[:k*d], w.dt[negStart*d:])
	dcand, dfixed := w.dt[:mall*d], w.df[:k*d]
	if candOp {
		p, dp := w.rel(r0, 0)
		w.dcand = grow(w.dcand, mall*d)
		clear(w.dcand)
		m.Rels[r0].Op.Backward(p, w.cand, w.dt, w.dcand, dp, mall, d)
		dcand = w.dcand[:mall*d]
	} else {
		if m.S.RegCoef > 0 && !ch.noNegs {
			// N3 of the fixed rows after the operator (see regularize):
			// its gradient goes back through the operator with the loss's.
			loss += w.n3(f, w.df[:k*d], ch)
		}
		w.dx = grow(w.dx, k*d)
		clear(w.dx)
		for i := range k {
			r := int(ch.rel[i])
			p, dp := w.rel(r, side)
			m.Rels[r].Op.Backward(p, ch.fixed[i*d:(i+1)*d], w.df[i*d:(i+1)*d], w.dx[i*d:(i+1)*d], dp, 1, d)
		}
		dfixed = w.dx[:k*d]
	}
	w.scatter(ch.fixedG, ch.fixedIDs, dfixed)
	w.scatter(ch.candG, ch.posIDs, dcand[:k*d])
	if ch.candG.census.on {
		w.scatterEarly(ch.candG, w.extra, dcand[k*d:nOwn*d])
	} else {
		w.scatter(ch.candG, w.extra, dcand[k*d:nOwn*d])
	}
	w.updateFar(ch.candG.typ, dcand[nOwn*d:mall*d])
	return loss
}

// regularize adds the N3 penalty coef·Σ|x|³ as PBG defines it: for each
// direction the model scores, over the rows of the side the operator is
// not applied to, the rows of the other side after the operator, and the
// operator's vector parameters (translation, diagonal, complex_diagonal)
// for each positive. One direction without dynamic relations (lhs, and
// op(rhs)); two with them (lhs and op₀(rhs), then rhs and op₁(lhs)).
//
// The rows after the operator are the fixed rows that direction already
// transforms when it corrupts the other side (op₀(rhs) when the lhs is
// corrupted, op₁(lhs) when the rhs is, dynamic relations only), so their
// penalty is added there; regularize adds it itself only for a side whose
// negatives are disabled.
func (w *Worker) regularize(ch *chunk, lhs, rhs []uint32, grR *rowGrads) float64 {
	m, d, k := w.m, w.d, ch.k
	dyn := m.S.Dynamic
	w.dx = grow(w.dx, k*d)
	clear(w.dx)
	total := w.n3(w.u[:k*d], w.dx, ch)
	w.scatter(&w.gl, lhs, w.dx)
	if dyn {
		clear(w.dx)
		total += w.n3(w.v[:k*d], w.dx, ch)
		w.scatter(grR, rhs, w.dx)
		if m.S.DisableRhsNegs {
			total += w.n3After(ch, w.u, lhs, &w.gl, 1)
		}
	}
	if m.S.DisableLhsNegs {
		total += w.n3After(ch, w.v, rhs, grR, 0)
	}
	for i := range k {
		r := int(ch.rel[i])
		switch m.Rels[r].Op.(type) {
		case translation, diagonal, complexDiagonal:
		default:
			continue
		}
		for side := range m.Params[r] {
			if m.Params[r][side] == nil {
				continue
			}
			p, dp := w.rel(r, side)
			total += w.n3(p, dp, ch)
		}
	}
	return total
}

// n3 returns coef·Σ|x|³ over x and adds its gradient to g. With the
// chunk's operator complex_diagonal, |x| is the modulus of each complex
// coordinate (real part in the first half of a row of d, imaginary in the
// second), as for ComplEx's N3.
func (w *Worker) n3(x, g []float32, ch *chunk) float64 {
	coef := float32(w.m.S.RegCoef)
	var total float64
	if _, cplx := w.m.Rels[ch.rel[0]].Op.(complexDiagonal); !cplx {
		for j, v := range x {
			a := float32(math.Abs(float64(v)))
			total += float64(coef * a * a * a)
			g[j] += 3 * coef * v * a
		}
		return total
	}
	d := w.d
	h := d / 2
	for r := 0; r+d <= len(x); r += d {
		for j := r; j < r+h; j++ {
			re, im := x[j], x[j+h]
			mod := float32(math.Sqrt(float64(re*re + im*im)))
			total += float64(coef * mod * mod * mod)
			g[j] += 3 * coef * re * mod
			g[j+h] += 3 * coef * im * mod
		}
	}
	return total
}

// n3After returns the penalty of the chunk's rows x (of entities ids,
// gradients to g) after each positive's operator with the parameters of
// side, and adds its gradient through the operator to the rows and the
// parameters.
func (w *Worker) n3After(ch *chunk, x []float32, ids []uint32, g *rowGrads, side int) float64 {
	m, d, k := w.m, w.d, ch.k
	w.f, w.df, w.dx = grow(w.f, k*d), grow(w.df, k*d), grow(w.dx, k*d)
	clear(w.df)
	clear(w.dx)
	for i := range k {
		r := int(ch.rel[i])
		p, _ := w.rel(r, side)
		m.Rels[r].Op.Forward(p, x[i*d:(i+1)*d], w.f[i*d:(i+1)*d], 1, d)
	}
	total := w.n3(w.f[:k*d], w.df, ch)
	for i := range k {
		r := int(ch.rel[i])
		p, dp := w.rel(r, side)
		m.Rels[r].Op.Backward(p, x[i*d:(i+1)*d], w.df[i*d:(i+1)*d], w.dx[i*d:(i+1)*d], dp, 1, d)
	}
	w.scatter(g, ids, w.dx[:k*d])
	return total
}

// apply takes the batch's optimizer step: row-wise Adagrad for the
// entities, Adagrad for the relation parameters and global embeddings.
func (w *Worker) apply(grR *rowGrads) {
	m := w.m
	w.gl.apply(m.S.Lr, w.scratch, w.ahead)
	if grR != &w.gl {
		grR.apply(m.S.Lr, w.scratch, w.ahead)
	}
	for _, r := range w.usedRels {
		for s, d := range m.Params[r] {
			if d != nil {
				d.Update(w.dparams[r][s], m.S.RelationLr)
			}
		}
	}
	for t, g := range m.Global {
		g.Update(w.dglob[t], m.S.RelationLr)
	}
}
