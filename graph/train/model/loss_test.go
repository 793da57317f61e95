package model

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The values of the three losses on a hand-computed case: two positives
// (weights 1 and 2), three negatives each, one masked per row, margin 1,
// and 4 negatives per positive as PBG counts them for the logistic loss's
// 1/num_neg weight (a padded chunk). With sp(x) = ln(1+e^x):
//
//	ranking   1·(1-1+0.5) + 2·((1+0.5+2) + (1+0.5+0))                  = 10.5
//	logistic  1·(sp(-1) + (sp(0.5)+sp(-1))/4) + 2·(sp(0.5) + (sp(2)+sp(0))/4)
//	softmax   1·(lse(1, 0.5, -1) - 1) + 2·(lse(-0.5, 2, 0) + 0.5)
func TestLossValues(t *testing.T) {
	pos := []float32{1, -0.5}
	neg := []float32{0.5, Masked, -1, 2, 0, Masked}
	w := []float32{1, 2}
	want := map[string]float64{"ranking": 10.5, "logistic": 3.993287919604478, "softmax": 5.948425113481225}
	for _, name := range Losses {
		l, _ := NewLoss(name, 1)
		dpos, dneg := make([]float32, 2), make([]float32, 6)
		got := l.Eval(pos, neg, w, 2, 3, 4, dpos, dneg)
		if math.Abs(got-want[name]) > 1e-6 {
			t.Errorf("%s: loss %.9g, want %.9g", name, got, want[name])
		}
		if name == "logistic" {
			// d/dneg = w·sigmoid(neg)/num_neg; d/dpos = -w·sigmoid(-pos).
			if math.Abs(float64(dneg[3])-0.44039853898894116) > 1e-6 || math.Abs(float64(dpos[0])+0.2689414213699951) > 1e-6 {
				t.Errorf("logistic gradient: dneg %v dpos %v", dneg, dpos)
			}
		}
	}
	// No negatives (a disabled side): the logistic loss keeps the
	// positives' term, the others are 0.
	for _, name := range Losses {
		l, _ := NewLoss(name, 1)
		got := l.Eval(pos, nil, w, 2, 0, 0, make([]float32, 2), nil)
		want := 0.0
		if name == "logistic" {
			want = math.Log1p(math.Exp(-1)) + 2*math.Log1p(math.Exp(0.5))
		}
		if name != "softmax" && math.Abs(got-want) > 1e-6 {
			t.Errorf("%s without negatives: %.9g, want %.9g", name, got, want)
		}
	}
}

// The batch step's logistic loss is PBG's: per positive and per side,
// sp(-pos) + (1/num_neg)·Σ sp(neg), num_neg counting the chunk's batch
// negatives padded to the full chunk (its own, masked, included), and a
// side whose negatives are disabled keeping sp(-pos).
//
// Hand-computed case: d = 1, operator diagonal a = -2 on the rhs, dot,
// 5 edges with lhs l = (1, 0.5, -1, 2, 0.25) and rhs r = (0.5, -1, 1,
// 0.25, -0.5), num_batch_negs = 3 (chunks {0,1,2} and {3,4}, num_neg = 3
// in both), no uniform negatives. Score s(i,j) = l_i·(a·r_j); rhs
// negatives of edge i are s(i,j), lhs negatives s(j,i), j ≠ i in its
// chunk. The sum is 12.112579279423374 (13.032421628 with num_neg = the
// short chunk's 2, 21.767127864 unweighted); with disable_lhs_negs the
// lhs side keeps only Σ sp(-s(i,i)): 9.69894213318817.
func TestStepLogisticAsPBG(t *testing.T) {
	for _, noLhs := range []bool{false, true} {
		op, _ := NewOperator("diagonal", 1)
		m, err := New(Settings{Dim: 1, Comparator: "dot", Loss: "logistic", NumBatchNegs: 3, DisableLhsNegs: noLhs,
			Lr: 0.1, RelationLr: 0.1}, []Relation{{Op: op, Weight: 1, Lhs: 0, Rhs: 1}}, 2)
		if err != nil {
			t.Fatal(err)
		}
		m.Params[0][0].P[0] = -2
		L := &Table{Rows: 5, Dim: 1, Emb: []float32{1, 0.5, -1, 2, 0.25}, Acc: make([]float32, 5)}
		R := &Table{Rows: 5, Dim: 1, Emb: []float32{0.5, -1, 1, 0.25, -0.5}, Acc: make([]float32, 5)}
		b := Batch{Lhs: []uint32{0, 1, 2, 3, 4}, Rhs: []uint32{0, 1, 2, 3, 4}, Rel: make([]uint32, 5)}
		st, _ := NewWorker(m).grads(b, L, R, rand.New(rand.NewPCG(1, 1)), false)
		want := 12.112579279423374
		if noLhs {
			want = 9.69894213318817
		}
		if math.Abs(st.Loss-want) > 1e-5 {
			t.Errorf("disable_lhs_negs %v: loss %.9g, want %.9g", noLhs, st.Loss, want)
		}
	}
}

// The logistic batch step for every operator at non-identity parameters,
// with and without dynamic relations, against values computed by hand
// from the definitions (a short script: d = 2, dot, 5 edges in chunks
// {0,1,2} and {3,4}, num_neg = 3, no uniform negatives). Outside dynamic
// mode edge (u, v) scores u·op₀(v) on both sides; with dynamic relations
// ranking the rhs scores op₁(u)·v′ and ranking the lhs u′·op₀(v).
// Per positive and side: sp(-pos) + (1/3)·Σ sp(neg). The unweighted sum of
// the old code gives other values for all twelve.
func TestStepLogisticEveryOperator(t *testing.T) {
	params := map[string][2][]float32{
		"none":             {nil, nil},
		"translation":      {{0.5, -1}, {-0.25, 0.75}},
		"diagonal":         {{-2, 0.5}, {1.5, -1}},
		"complex_diagonal": {{0.5, -1}, {2, 1}}, // re(a), im(a): one complex coordinate
		"linear":           {{1, 2, -1, 0.5}, {0, 1, -1, 0.5}},
		"affine":           {{1, 2, -1, 0.5, 0.25, -0.5}, {0, 1, -1, 0.5, 1, 0}},
	}
	cases := []struct {
		op   string
		dyn  bool
		want float64
	}{
		{"none", false, 15.455498878808323},
		{"none", true, 15.455498878808323},
		{"translation", false, 15.07844254676796},
		{"translation", true, 15.92280111224955},
		{"diagonal", false, 14.062102567504802},
		{"diagonal", true, 13.454692104941355},
		{"complex_diagonal", false, 24.864905590654175},
		{"complex_diagonal", true, 30.51849577109637},
		{"linear", false, 36.52312793149479},
		{"linear", true, 22.403903809353},
		{"affine", false, 36.70258092703672},
		{"affine", true, 23.10511087410537},
	}
	seen := map[string]bool{}
	for _, c := range cases {
		seen[c.op] = true
		op, _ := NewOperator(c.op, 2)
		m, err := New(Settings{Dim: 2, Comparator: "dot", Loss: "logistic", NumBatchNegs: 3, Lr: 0.1, RelationLr: 0.1, Dynamic: c.dyn},
			[]Relation{{Op: op, Weight: 1, Lhs: 0, Rhs: 1}}, 2)
		if err != nil {
			t.Fatal(err)
		}
		copy(m.Params[0][0].P, params[c.op][0])
		if c.dyn {
			copy(m.Params[0][1].P, params[c.op][1])
		}
		L := &Table{Rows: 5, Dim: 2, Emb: []float32{1, 0.5, 0.5, -1, -1, 0.25, 2, 1, 0.25, -0.5}, Acc: make([]float32, 5)}
		R := &Table{Rows: 5, Dim: 2, Emb: []float32{0.5, 1, -1, 0.5, 1, 1, 0.25, -2, -0.5, 0.75}, Acc: make([]float32, 5)}
		b := Batch{Lhs: []uint32{0, 1, 2, 3, 4}, Rhs: []uint32{0, 1, 2, 3, 4}, Rel: make([]uint32, 5)}
		st, _ := NewWorker(m).grads(b, L, R, rand.New(rand.NewPCG(1, 1)), false)
		if math.Abs(st.Loss-c.want) > 1e-5*c.want {
			t.Errorf("%s, dynamic %v: loss %.9g, want %.9g", c.op, c.dyn, st.Loss, c.want)
		}
	}
	for _, name := range Operators {
		if !seen[name] {
			t.Errorf("operator %s has no case", name)
		}
	}
}
