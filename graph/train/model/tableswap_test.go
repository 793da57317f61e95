package model

import (
	"math/rand/v2"
	"testing"
)

// A worker that trains a batch on a large table and then on a smaller one
// (a partitioned graph's next bucket) must not index the small table with
// the rows it touched in the large one. Before the fix in rowGrads.reset
// this panicked with "index out of range" (FB15k-237 with 4 partitions).
func TestWorkerSwitchesToSmallerTable(t *testing.T) {
	m, _, _, _ := stepModel(t, stepCase{op: "diagonal", cmp: "dot", loss: "softmax", batchNegs: 3, uniform: 2}, 4)
	rng := rand.New(rand.NewPCG(3, 4))
	w := NewWorker(m)
	big, big2 := NewTable(50, 4, 0.5, rng), NewTable(50, 4, 0.5, rng)
	small, small2 := NewTable(5, 4, 0.5, rng), NewTable(5, 4, 0.5, rng)
	batch := func(nl, nr int) Batch {
		var b Batch
		for i := range 8 {
			b.Lhs = append(b.Lhs, uint32(nl-1-i%nl))
			b.Rhs = append(b.Rhs, uint32(nr-1-(i*3)%nr))
			b.Rel = append(b.Rel, 0)
		}
		return b
	}
	w.Step(batch(50, 50), big, big2, rng)
	st := w.Step(batch(5, 5), small, small2, rng)
	if st.Count != 8 {
		t.Fatalf("trained %d edges, want 8", st.Count)
	}
}
