package model

import "math/rand/v2"

// Evaluation: ranking a batch's positives against its candidates, and
// scoring given rows, with the step's operators and comparators and
// without a gradient.

// Ranks evaluates a batch as PBG's holdout evaluation does: chunks of
// batchNegs positives, each ranked against the chunk's other positives and
// uniform negatives, on each side whose negatives are enabled (1 = best;
// ties count against the positive; candidates that are the positive's own
// entity are skipped). It appends the ranks to dst and changes nothing.
func (w *Worker) Ranks(b Batch, L, R *Table, batchNegs, uniform int, rng *rand.Rand, dst []float64) []float64 {
	m, d := w.m, w.d
	n := len(b.Lhs)
	if n == 0 {
		return dst
	}
	r0, grR := w.start(b, L, R)
	cs := n
	if batchNegs > 0 && !r0.AllNegs {
		cs = batchNegs
	}
	for c0 := 0; c0 < n; c0 += cs {
		c1 := min(n, c0+cs)
		k := c1 - c0
		w.u, w.v = grow(w.u, k*d), grow(w.v, k*d)
		w.gather(L, r0.Lhs, b.Lhs[c0:c1], w.u)
		w.gather(R, r0.Rhs, b.Rhs[c0:c1], w.v)
		ch := chunk{rel: b.Rel[c0:c1], k: k, batchNegs: batchNegs, uniform: uniform, ranks: &dst}
		if !m.S.DisableRhsNegs {
			ch.fixed, ch.fixedIDs, ch.fixedG = w.u, b.Lhs[c0:c1], &w.gl
			ch.pos, ch.posIDs, ch.candTab, ch.candG = w.v, b.Rhs[c0:c1], R, grR
			w.direction(&ch, true, r0.AllNegs, rng)
		}
		if !m.S.DisableLhsNegs {
			ch.fixed, ch.fixedIDs, ch.fixedG = w.v, b.Rhs[c0:c1], grR
			ch.pos, ch.posIDs, ch.candTab, ch.candG = w.u, b.Lhs[c0:c1], L, &w.gl
			w.direction(&ch, false, r0.AllNegs, rng)
		}
	}
	return dst
}

// Scores writes out[i*m+j], the score of positive i with its corrupted
// side (the rhs when corruptRhs) replaced by candidate j: fixed holds the
// k fixed-side rows and cand the m candidate rows, both as Gather returns
// them. Outside dynamic mode with corruptRhs, all of rels must be equal.
func (w *Worker) Scores(corruptRhs bool, rels []uint32, fixed, cand []float32, k, m int, out []float32) {
	md, d := w.m, w.d
	w.begin()
	t, f := cand[:m*d], fixed[:k*d]
	if !md.S.Dynamic && corruptRhs {
		p, _ := w.rel(int(rels[0]), 0)
		w.t = grow(w.t, m*d)
		md.Rels[rels[0]].Op.Forward(p, cand, w.t, m, d)
		t = w.t[:m*d]
	} else {
		side := 0
		if md.S.Dynamic && corruptRhs {
			side = 1
		}
		w.f = grow(w.f, k*d)
		for i := range k {
			p, _ := w.rel(int(rels[i]), side)
			md.Rels[rels[i]].Op.Forward(p, fixed[i*d:(i+1)*d], w.f[i*d:(i+1)*d], 1, d)
		}
		f = w.f[:k*d]
	}
	w.pos = grow(w.pos, k)
	w.cmp.Forward(f, f, t, k, m, d, w.pos, out)
}

// Gather writes the embeddings of rows ids of tab, an entity table of
// type typ, plus the type's global embedding, to dst: the rows Scores
// takes.
func (w *Worker) Gather(tab *Table, typ int, ids []uint32, dst []float32) {
	w.begin()
	w.gather(tab, typ, ids, dst)
}
