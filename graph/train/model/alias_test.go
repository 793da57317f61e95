package model

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The alias tables hold each index's probability exactly: over all
// columns, the mass index i keeps plus the mass other columns send to it
// is w[i]·n out of a column's capacity W, so a draw is i with probability
// w[i]/W, for random weight lists with zeros, ties and extremes.
func TestAliasExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 500 {
		n := 1 + rng.IntN(200)
		w := make([]uint32, n)
		for i := range w {
			switch rng.IntN(5) {
			case 0: // zero
			case 1:
				w[i] = math.MaxUint32 - uint32(rng.IntN(3))
			case 2:
				w[i] = 7
			default:
				w[i] = uint32(rng.IntN(1000))
			}
		}
		a := NewAlias(w)
		var sum uint64
		for _, x := range w {
			sum += uint64(x)
		}
		if a.Total() != sum || a.Len() != n {
			t.Fatalf("trial %d: total %d, len %d; want %d, %d", trial, a.Total(), a.Len(), sum, n)
		}
		if sum == 0 {
			continue
		}
		mass := make([]uint64, n)
		for j := range n {
			if a.keep[j] > sum || int(a.other[j]) >= n {
				t.Fatalf("trial %d: column %d keeps %d of %d, other %d", trial, j, a.keep[j], sum, a.other[j])
			}
			mass[j] += a.keep[j]
			mass[a.other[j]] += sum - a.keep[j]
		}
		for i := range n {
			if mass[i] != uint64(w[i])*uint64(n) {
				t.Fatalf("trial %d: index %d has mass %d, want %d·%d", trial, i, mass[i], w[i], n)
			}
		}
	}
	if a := NewAlias([]uint32{0, 0}); a.Total() != 0 {
		t.Fatalf("all zero: total %d", a.Total())
	}
}

// Draws follow the weights, and an index of weight 0 is never drawn.
func TestAliasDraws(t *testing.T) {
	w := []uint32{0, 1, 2, 7, 0}
	a := NewAlias(w)
	rng := rand.New(rand.NewPCG(3, 4))
	counts := make([]int, len(w))
	const draws = 1000000
	for range draws {
		counts[a.Draw(rng)]++
	}
	for i, x := range w {
		want := draws * int(x) / 10
		if counts[i] < want*98/100 || counts[i] > want*102/100 {
			t.Errorf("index %d (weight %d) drawn %d times of %d, want about %d", i, x, counts[i], draws, want)
		}
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
	pool := NewPool(tabs).WithDegrees([]*Alias{NewAlias(deg[0]), NewAlias(deg[1])})
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
