package model

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/batchprep/batchprep/internal/alias"
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

// Degree draws (negatives = "buffer_degree"): a pool with degree samplers
// draws rows over all its tables in proportion to their degrees, rows of
// degree 0 never; a step's degree negatives are the first DegreeNegs draws
// of each chunk and side, and its uniform ones the rest.
func TestPoolDegreeDraws(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	tabs := []*Table{NewTable(2, 4, 0.1, rng), NewTable(4, 4, 0.1, rng)}
	deg := [][]uint32{{0, 3}, {1, 0, 0, 4}}
	pool := NewPool(tabs).WithDegrees([]*alias.Table{alias.New(deg[0]), alias.New(deg[1])})
	if pool.Degrees() != 8 {
		t.Fatalf("degrees %d, want 8", pool.Degrees())
	}
	counts := map[[2]int]int{}
	const draws = 800000
	for range draws {
		tab, row := pool.locateDegree(rng)
		ti := 0
		if tab == tabs[1] {
			ti = 1
		}
		counts[[2]int{ti, int(row)}]++
	}
	for ti, d := range deg {
		for row, x := range d {
			got, want := counts[[2]int{ti, row}], draws*int(x)/8
			if got < want*98/100 || got > want*102/100 {
				t.Errorf("table %d row %d (degree %d): %d draws of %d, want about %d", ti, row, x, got, draws, want)
			}
		}
	}

	// In a step: chunks of 5 positives, 5 degree and 20 uniform draws per
	// side. The rhs side's own table is tabs[0], whose row 0 has degree
	// 0: the degree draws never give it, the uniform ones do.
	op, _ := NewOperator("diagonal", 4)
	m, err := New(Settings{Dim: 4, Comparator: "dot", Loss: "softmax", DegreeNegs: 5, NumUniformNegs: 20,
		Lr: 0.1, RelationLr: 0.1}, []Relation{{Op: op, Weight: 1}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	w := NewWorker(m)
	w.pools = [2]*Pool{pool, pool}
	w.drawNegatives(40, 5, 5, 25, true, true, tabs[0], tabs[0], rand.New(rand.NewPCG(7, 8)))
	if len(w.drawn) != 8*2*25 {
		t.Fatalf("%d draws, want %d", len(w.drawn), 8*2*25)
	}
	uniformOwnZero := 0
	for i, x := range w.drawn {
		if x&farBit != 0 {
			f := w.farDraws[x&^farBit]
			if i%25 < 5 && deg[1][f.row] == 0 {
				t.Fatalf("draw %d: degree draw of row %d of degree 0", i, f.row)
			}
			continue
		}
		if x == 0 {
			if i%25 < 5 {
				t.Fatalf("draw %d: degree draw of own row 0 (degree 0)", i)
			}
			uniformOwnZero++
		}
	}
	if uniformOwnZero == 0 {
		t.Errorf("no uniform draw of own row 0: uniform draws are not uniform")
	}
}

// Weighted pools: a uniform draw takes a table in proportion to its rows
// times its weight and a row of it uniformly; a degree draw takes a table
// in proportion to its degrees times its weight and a row by degree. The
// unweighted sums stay what they were.
func TestPoolWeightedDraws(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	tabs := []*Table{NewTable(2, 4, 0.1, rng), NewTable(4, 4, 0.1, rng)}
	deg := [][]uint32{{0, 3}, {1, 0, 0, 4}}
	pool := NewPool(tabs).WithDegrees([]*alias.Table{alias.New(deg[0]), alias.New(deg[1])}).Weighted([]uint64{6, 1})
	if pool.Degrees() != 8 || pool.Rows() != 6 {
		t.Fatalf("degrees %d, rows %d: want the unweighted 8 and 6", pool.Degrees(), pool.Rows())
	}
	const draws = 800000
	// Uniform: table 0 weighs 2·6 = 12, table 1 4·1 = 4 (of 16).
	uni, bydeg := map[[2]int]int{}, map[[2]int]int{}
	w := &Worker{} // draw uses its far draws only
	for range draws {
		for _, degree := range []bool{false, true} {
			x := w.draw(tabs[0], pool, degree, rng)
			key := [2]int{0, int(x)}
			if x&farBit != 0 {
				f := w.farDraws[x&^farBit]
				key = [2]int{1, int(f.row)}
			}
			if degree {
				bydeg[key]++
			} else {
				uni[key]++
			}
		}
		w.farDraws = w.farDraws[:0]
	}
	check := func(what string, got map[[2]int]int, want map[[2]int]float64) {
		t.Helper()
		for k, p := range want {
			n := float64(draws) * p
			if g := float64(got[k]); g < n*0.98 || g > n*1.02 || (p == 0 && got[k] != 0) {
				t.Errorf("%s: table %d row %d: %d draws, want about %.0f", what, k[0], k[1], got[k], n)
			}
		}
	}
	check("uniform", uni, map[[2]int]float64{{0, 0}: 6. / 16, {0, 1}: 6. / 16, {1, 0}: 1. / 16, {1, 3}: 1. / 16})
	// By degree: table 0 weighs 3·6 = 18, table 1 5·1 = 5 (of 23).
	check("degree", bydeg, map[[2]int]float64{{0, 0}: 0, {0, 1}: 18. / 23, {1, 0}: 1. / 23, {1, 1}: 0, {1, 3}: 4. / 23})
}
