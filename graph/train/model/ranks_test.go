package model

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// Holdout ranks: a candidate that is the true entity itself is not a
// negative, whether it comes in as another positive of the chunk with the
// same entity or as a uniform draw. Here three edges share rhs entity 0,
// the only row of R, so every candidate of the rhs side is entity 0 and
// each edge ranks 1; other entities that tie still count (the lhs side:
// l1·r0 = l0·r0, and l2·r0 is higher). Regression: the rhs ranks were
// 1 + 2 batch + 4 uniform ties = 7, and holdout MRR on small graphs read
// far below the test MRR.
func TestRanksExcludeTrueEntity(t *testing.T) {
	op, _ := NewOperator("none", 2)
	m, err := New(Settings{Dim: 2, Comparator: "dot", Loss: "softmax", NumBatchNegs: 3, NumUniformNegs: 4,
		Lr: 0.1, RelationLr: 0.1}, []Relation{{Op: op, Weight: 1, Lhs: 0, Rhs: 1}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	L := &Table{Rows: 3, Dim: 2, Emb: []float32{1, 0, 0, 1, 1, 1}, Acc: make([]float32, 3)}
	R := &Table{Rows: 1, Dim: 2, Emb: []float32{1, 1}, Acc: make([]float32, 1)}
	b := Batch{Lhs: []uint32{0, 1, 2}, Rhs: []uint32{0, 0, 0}, Rel: make([]uint32, 3)}
	got := NewWorker(m).Ranks(b, L, R, 3, 4, rand.New(rand.NewPCG(1, 1)), nil)
	// rhs side for edges 0-2, then the lhs side: scores 1, 1, 2 against
	// the chunk's lhs entities and uniform draws of L's 3 rows.
	if fmt.Sprint(got[:3]) != "[1 1 1]" {
		t.Fatalf("rhs ranks %v, want [1 1 1]", got[:3])
	}
	// lhs side: edge 2 (score 2) beats everything but draws of itself.
	if got[5] != 1 {
		t.Fatalf("lhs rank of the best edge %v, want 1 (ranks %v)", got[5], got)
	}
	if got[3] < 3 || got[4] < 3 {
		t.Fatalf("lhs ranks of the tied edges %v: ties with other entities must count", got[3:5])
	}
}
