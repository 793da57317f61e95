package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// stepCase is one model setting for the batch-step gradient check.
type stepCase struct {
	op, cmp, loss           string
	dyn, global, allNegs    bool
	batchNegs, uniform      int
	noLhs, noRhs, sameTable bool
	reg                     float64
}

func stepModel(t *testing.T, c stepCase, d int) (*Model, *Table, *Table, Batch) {
	t.Helper()
	rng := rand.New(rand.NewPCG(11, 12))
	nrel := 1
	if c.dyn {
		nrel = 3
	}
	var rels []Relation
	for range nrel {
		op, err := NewOperator(c.op, d)
		if err != nil {
			t.Fatal(err)
		}
		rels = append(rels, Relation{Op: op, Weight: 0.7, AllNegs: c.allNegs, Lhs: 0, Rhs: 1})
	}
	if c.sameTable {
		for i := range rels {
			rels[i].Rhs = 0
		}
	}
	s := Settings{Dim: d, Comparator: c.cmp, Loss: c.loss, Margin: 10, NumBatchNegs: c.batchNegs,
		NumUniformNegs: c.uniform, DisableLhsNegs: c.noLhs, DisableRhsNegs: c.noRhs, RegCoef: c.reg,
		Lr: 0.1, RelationLr: 0.1, GlobalEmb: c.global, Dynamic: c.dyn}
	m, err := New(s, rels, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, ps := range m.Params {
		for _, p := range ps {
			if p != nil {
				for i := range p.P {
					p.P[i] += float32(0.3 * rng.NormFloat64())
				}
			}
		}
	}
	for _, g := range m.Global {
		for i := range g.P {
			g.P[i] = float32(0.2 * rng.NormFloat64())
		}
	}
	L := NewTable(7, d, 0.5, rng)
	R := NewTable(5, d, 0.5, rng)
	if c.sameTable {
		R = L
	}
	var b Batch
	for range 6 {
		b.Lhs = append(b.Lhs, uint32(rng.IntN(L.Rows)))
		b.Rhs = append(b.Rhs, uint32(rng.IntN(R.Rows)))
		b.Rel = append(b.Rel, uint32(rng.IntN(nrel)))
		b.Weight = append(b.Weight, 0.5+rng.Float32())
	}
	return m, L, R, b
}

func stepCases() []stepCase {
	var cs []stepCase
	i := 0
	for _, op := range Operators {
		for _, cmp := range Comparators {
			for _, loss := range Losses {
				c := stepCase{op: op, cmp: cmp, loss: loss, batchNegs: 3, uniform: 2}
				switch i % 7 {
				case 1:
					c.dyn, c.reg = true, 0.05
				case 2:
					c.global, c.reg = true, 0.05
				case 3:
					c.allNegs = true
				case 4:
					c.batchNegs, c.noLhs, c.reg = 0, true, 0.05
				case 5:
					c.noRhs, c.sameTable, c.dyn, c.reg = true, true, true, 0.05
				case 6:
					c.uniform, c.reg, c.sameTable = 0, 0.1, true
				}
				i++
				cs = append(cs, c)
			}
		}
	}
	return cs
}

// Invariant 4: the batch step's gradients with respect to every embedding
// row, every relation parameter and the global embeddings are the
// derivative of its loss, over all operators, comparators and losses and a
// rotation of relation modes and negative settings.
func TestStepGradients(t *testing.T) {
	const d = 4
	for _, c := range stepCases() {
		m, L, R, b := stepModel(t, c, d)
		loss := func() float64 {
			st, _ := NewWorker(m).grads(b, L, R, rand.New(rand.NewPCG(1, 1)), false)
			return st.Loss
		}
		w := NewWorker(m)
		st, grR := w.grads(b, L, R, rand.New(rand.NewPCG(1, 1)), false)
		if st.Count != len(b.Lhs) {
			t.Fatalf("%+v: count %d", c, st.Count)
		}
		for _, tg := range []struct {
			tab *Table
			rg  *rowGrads
		}{{L, &w.gl}, {R, grR}} {
			g := make([]float32, len(tg.tab.Emb))
			for s, r := range tg.rg.rows {
				copy(g[int(r)*d:], tg.rg.g[s*d:(s+1)*d])
			}
			checkGrad(t, fmt.Sprintf("%+v table rows", c), tg.tab.Emb, g, loss)
		}
		for r, ps := range m.Params {
			for s, p := range ps {
				if p == nil {
					continue
				}
				g := make([]float32, len(p.P))
				if w.stamp[r] == w.gen[0] {
					g = w.dparams[r][s]
				}
				checkGrad(t, fmt.Sprintf("%+v relation %d side %d", c, r, s), p.P, g, loss)
			}
		}
		for ty, gl := range m.Global {
			checkGrad(t, fmt.Sprintf("%+v global %d", c, ty), gl.P, w.dglob[ty], loss)
		}
	}
}

// Invariant 5: one step changes only the rows of the batch and its
// negatives, by row-wise Adagrad; a second step with the same gradient
// moves less (the accumulator grew).
func TestRowAdagrad(t *testing.T) {
	tab := &Table{Rows: 2, Dim: 2, Emb: []float32{1, 1, 5, 5}, Acc: make([]float32, 2)}
	g := []float32{3, 4}
	s := make([]float32, 2)
	tab.Update(0, g, 0.5, s)
	// acc = (9+16)/2 = 12.5; step = 0.5/sqrt(12.5)
	want0 := 1 - 0.5*3/float32(3.5355339)
	if d := tab.Emb[0] - want0; d > 1e-5 || d < -1e-5 || tab.Emb[2] != 5 || tab.Acc[0] != 12.5 {
		t.Fatalf("after one step: %v acc %v", tab.Emb, tab.Acc)
	}
	first := 1 - tab.Emb[0]
	before := tab.Emb[0]
	tab.Update(0, g, 0.5, s)
	if second := before - tab.Emb[0]; second >= first {
		t.Fatalf("second step %v not smaller than first %v", second, first)
	}
	v := NewDense(2)
	v.Update([]float32{2, 0}, 1)
	if v.P[0] > -0.99 || v.P[0] < -1.01 || v.P[1] != 0 || v.Acc[0] != 4 {
		t.Fatalf("dense adagrad: %v acc %v", v.P, v.Acc)
	}
}

// A worker's buffers carry nothing from one batch to the next, whatever
// the tables (invariants 4, 5): after batches on partitions of other sizes
// (a larger one first, as when the bucket order moves from a big partition
// to a small one), a step gives exactly what a fresh worker gives.
// Regression: the row accumulator indexed its old slots with the new
// table's rows and panicked on a smaller partition.
func TestStepAcrossPartitionSizes(t *testing.T) {
	const d = 8
	op, _ := NewOperator("complex_diagonal", d)
	m, err := New(Settings{Dim: d, Comparator: "dot", Loss: "softmax", NumBatchNegs: 5, NumUniformNegs: 7,
		RegCoef: 1e-3, Lr: 0.1, RelationLr: 0.1, Dynamic: true}, []Relation{{Op: op, Weight: 1}, {Op: op, Weight: 1}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	batch := func(rng *rand.Rand, nl, nr int) Batch {
		var b Batch
		for range 20 {
			b.Lhs = append(b.Lhs, uint32(rng.IntN(nl)))
			b.Rhs = append(b.Rhs, uint32(rng.IntN(nr)))
			b.Rel = append(b.Rel, uint32(rng.IntN(2)))
		}
		return b
	}
	rng := rand.New(rand.NewPCG(7, 8))
	big1, big2 := NewTable(300, d, 0.1, rng), NewTable(200, d, 0.1, rng)
	small1, small2 := NewTable(30, d, 0.1, rng), NewTable(11, d, 0.1, rng)
	clone := func(x *Table) *Table {
		return &Table{Rows: x.Rows, Dim: x.Dim, Emb: append([]float32(nil), x.Emb...), Acc: append([]float32(nil), x.Acc...)}
	}
	used := NewWorker(m)
	used.Step(batch(rng, 300, 200), big1, big2, rand.New(rand.NewPCG(1, 1)))
	used.Step(batch(rng, 200, 200), big2, big2, rand.New(rand.NewPCG(1, 2)))
	b := batch(rng, 30, 11)
	a1, a2 := clone(small1), clone(small2)
	var saved [][]float32 // the model's parameters and accumulators, restored for the second step
	for _, ps := range m.Params {
		for _, p := range ps {
			if p != nil {
				saved = append(saved, append([]float32(nil), p.P...), append([]float32(nil), p.Acc...))
			}
		}
	}
	sa := NewWorker(m).Step(b, a1, a2, rand.New(rand.NewPCG(2, 2)))
	for _, ps := range m.Params {
		for _, p := range ps {
			if p != nil {
				copy(p.P, saved[0])
				copy(p.Acc, saved[1])
				saved = saved[2:]
			}
		}
	}
	sb := used.Step(b, small1, small2, rand.New(rand.NewPCG(2, 2)))
	if sa != sb {
		t.Fatalf("stats %+v after other partitions, %+v fresh", sb, sa)
	}
	for i := range a1.Emb {
		if a1.Emb[i] != small1.Emb[i] {
			t.Fatalf("lhs element %d: %v after other partitions, %v fresh", i, small1.Emb[i], a1.Emb[i])
		}
	}
	for i := range a2.Emb {
		if a2.Emb[i] != small2.Emb[i] {
			t.Fatalf("rhs element %d: %v after other partitions, %v fresh", i, small2.Emb[i], a2.Emb[i])
		}
	}
}

// TestN3AsPBG pins the N3 penalty to PBG's definition (its
// regularizers.py applied by model.py to each direction it scores): the
// loss with regularization_coef c minus the loss without it equals c times
// Σ|x|³ over, per positive, the side without the operator, the other side
// after the operator and the operator's vector parameters; with dynamic
// relations both directions (lhs and op₀(rhs), rhs and op₁(lhs)), else
// one (lhs and op(rhs)). |x| is a complex coordinate's modulus. The
// penalty does not depend on which sides' negatives are enabled.
func TestN3AsPBG(t *testing.T) {
	const d, coef = 4, 0.1
	for i := range 18 {
		dyn, op, noNegs := i%2 == 1, []string{"complex_diagonal", "translation", "linear"}[i/2%3], i/6
		c := stepCase{op: op, cmp: "dot", loss: "softmax", dyn: dyn, batchNegs: 3, uniform: 2, noLhs: noNegs == 1, noRhs: noNegs == 2}
		m, L, R, b := stepModel(t, c, d)
		loss := func(reg float64) float64 {
			m.S.RegCoef = reg
			st, _ := NewWorker(m).grads(b, L, R, rand.New(rand.NewPCG(1, 1)), false)
			return st.Loss
		}
		got := loss(coef) - loss(0)
		cplx := op == "complex_diagonal"
		cube := func(x []float32) float64 {
			var s float64
			if !cplx {
				for _, v := range x {
					s += math.Pow(math.Abs(float64(v)), 3)
				}
				return s
			}
			h := len(x) / 2
			for j := range h {
				s += math.Pow(math.Hypot(float64(x[j]), float64(x[j+h])), 3)
			}
			return s
		}
		after := func(r, side int, x []float32) []float32 {
			y := make([]float32, d)
			m.Rels[r].Op.Forward(m.Params[r][side].P, x, y, 1, d)
			return y
		}
		var want float64
		for i := range b.Lhs {
			r := int(b.Rel[i])
			lhs, rhs := L.Row(int(b.Lhs[i])), R.Row(int(b.Rhs[i]))
			want += cube(lhs) + cube(after(r, 0, rhs))
			if op != "linear" {
				want += cube(m.Params[r][0].P)
			}
			if dyn {
				want += cube(rhs) + cube(after(r, 1, lhs))
				if op != "linear" {
					want += cube(m.Params[r][1].P)
				}
			}
		}
		want *= coef
		if math.Abs(got-want) > 1e-4*(1+math.Abs(want)) {
			t.Errorf("%s, dynamic %v, lhs negatives off %v, rhs negatives off %v: penalty %.6g, want %.6g", op, dyn, c.noLhs, c.noRhs, got, want)
		}
	}
}
