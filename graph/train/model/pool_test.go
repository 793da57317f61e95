package model

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// Buffer negatives (StepPools): a step draws its uniform negatives from
// every table of each side's pool, and updates rows of each; a pool of
// the side's own table alone gives Step's step, bit for bit.
func TestStepPoolsDrawsFromEveryTable(t *testing.T) {
	const d = 8
	newModel := func() *Model {
		op, _ := NewOperator("diagonal", d)
		m, err := New(Settings{Dim: d, Comparator: "dot", Loss: "softmax", NumBatchNegs: 5, NumUniformNegs: 50,
			Lr: 0.1, RelationLr: 0.1}, []Relation{{Op: op, Weight: 1}}, 1)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	m := newModel()
	rng := rand.New(rand.NewPCG(3, 4))
	var b Batch
	for range 40 {
		b.Lhs = append(b.Lhs, uint32(rng.IntN(40)))
		b.Rhs = append(b.Rhs, uint32(rng.IntN(40)))
		b.Rel = append(b.Rel, 0)
	}
	tabs := []*Table{NewTable(40, d, 0.1, rng), NewTable(40, d, 0.1, rng), NewTable(25, d, 0.1, rng), NewTable(60, d, 0.1, rng)}
	before := make([][]float32, len(tabs))
	for i, tab := range tabs {
		before[i] = slices.Clone(tab.Emb)
	}
	// The bucket (0, 1): lhs rows of table 0, rhs rows of table 1; all
	// four resident.
	pool := NewPool(tabs)
	NewWorker(m).StepPools(b, tabs[0], tabs[1], pool, pool, rand.New(rand.NewPCG(5, 6)))
	for i, tab := range tabs {
		changed := 0
		for r := range tab.Rows {
			if !slices.Equal(tab.Emb[r*d:(r+1)*d], before[i][r*d:(r+1)*d]) {
				changed++
			}
		}
		// 2 x 8 chunks x 50 draws over 165 rows: every table is drawn.
		if changed == 0 {
			t.Errorf("table %d: no row changed: no negative drawn from it", i)
		}
	}
	// Draws are uniform over the pool's rows: the 60-row table gets
	// about 60/165 of them.
	counts := make([]int, len(tabs))
	for range 16500 {
		tab, row := pool.locate(rng.IntN(pool.Rows()))
		if int(row) >= tab.Rows {
			t.Fatalf("row %d of a table of %d", row, tab.Rows)
		}
		counts[slices.Index(tabs, tab)]++
	}
	for i, want := range []int{4000, 4000, 2500, 6000} {
		if counts[i] < want*9/10 || counts[i] > want*11/10 {
			t.Errorf("table %d drawn %d times of 16500, want about %d", i, counts[i], want)
		}
	}
	// One table per pool: the same as Step.
	a, c := NewTable(40, d, 0.1, rand.New(rand.NewPCG(1, 1))), NewTable(40, d, 0.1, rand.New(rand.NewPCG(1, 1)))
	sa := NewWorker(newModel()).StepPools(b, a, a, NewPool([]*Table{a}), NewPool([]*Table{a}), rand.New(rand.NewPCG(9, 9)))
	sc := NewWorker(newModel()).Step(b, c, c, rand.New(rand.NewPCG(9, 9)))
	if sa != sc || !slices.Equal(a.Emb, c.Emb) {
		t.Errorf("a pool of the own table differs from Step: %+v %+v", sa, sc)
	}
}
