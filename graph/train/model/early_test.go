package model

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// Early updates change no value: over every step case, on tables large
// enough that some uniform negatives occur once in a batch and others
// several times, steps with early updates leave the tables, their
// accumulators, the relation parameters and the global embeddings
// bit-identical to steps that update every row after the batch, and
// report the same loss.
func TestEarlyUpdatesSameBits(t *testing.T) {
	defer func(was uint64) { earlyMin = was }(earlyMin)
	earlyMin = 0
	var early, total int
	for i, c := range stepCases() {
		if c.uniform > 0 {
			c.uniform = 50
		}
		type result struct {
			tabs  []*Table
			m     *Model
			loss  []float64
			early int
		}
		var res [2]result
		for k, late := range []bool{false, true} {
			m, _, _, _ := stepModel(t, c, 6)
			rng := rand.New(rand.NewPCG(uint64(i), 3))
			L := NewTable(300, 6, 0.5, rng)
			R := NewTable(200, 6, 0.5, rng)
			if c.sameTable {
				R = L
			}
			w := NewWorker(m)
			w.late = late
			for range 3 {
				b := scaleBatch(rng, 40, L.Rows, R.Rows)
				for j := range b.Rel {
					b.Rel[j] = uint32(rng.IntN(len(m.Rels)))
					b.Weight = append(b.Weight, 0.5+rng.Float32())
				}
				st := w.Step(b, L, R, rng)
				res[k].loss = append(res[k].loss, st.Loss)
			}
			res[k].tabs, res[k].m, res[k].early = []*Table{L, R}, m, w.earlyRows
			if late && w.earlyRows != 0 {
				t.Fatalf("case %+v: %d rows updated early with early updates off", c, w.earlyRows)
			}
		}
		early += res[0].early
		total += 3 * 40 / max(c.batchNegs, 1) * c.uniform * 2
		if !slices.Equal(res[0].loss, res[1].loss) {
			t.Errorf("case %+v: losses %v early, %v late", c, res[0].loss, res[1].loss)
		}
		for j := range res[0].tabs {
			a, b := res[0].tabs[j], res[1].tabs[j]
			if !slices.Equal(bitsOfAll(a.Emb), bitsOfAll(b.Emb)) || !slices.Equal(bitsOfAll(a.Acc), bitsOfAll(b.Acc)) {
				t.Errorf("case %+v: table %d differs with early updates", c, j)
			}
		}
		for r, ps := range res[0].m.Params {
			for s, p := range ps {
				if p != nil && !slices.Equal(bitsOfAll(p.P), bitsOfAll(res[1].m.Params[r][s].P)) {
					t.Errorf("case %+v: relation %d side %d differs with early updates", c, r, s)
				}
			}
		}
		for g, p := range res[0].m.Global {
			if !slices.Equal(bitsOfAll(p.P), bitsOfAll(res[1].m.Global[g].P)) {
				t.Errorf("case %+v: global embedding %d differs with early updates", c, g)
			}
		}
	}
	// Both kinds of negative occur: some rows were updated early, and
	// (with 50 draws per chunk over a few hundred rows) most were not.
	if early == 0 || early > total/2 {
		t.Errorf("%d of about %d negatives updated early: the test exercises only one path", early, total)
	}
}

// Tables below earlyMin, whose rows stay in cache, are not counted and
// update every row after the batch; one side may be counted while the
// other is not.
func TestEarlyOnlyLargeTables(t *testing.T) {
	c := stepCase{op: "complex_diagonal", cmp: "dot", loss: "softmax", batchNegs: 5, uniform: 50}
	defer func(was uint64) { earlyMin = was }(earlyMin)
	for _, tc := range []struct {
		min          uint64
		lRows, rRows int
		wantL, wantR bool
	}{
		{32 << 20, 300, 200, false, false},
		{300 * 6 * 4, 300, 200, true, false},
		{0, 300, 200, true, true},
	} {
		earlyMin = tc.min
		m, _, _, _ := stepModel(t, c, 6)
		rng := rand.New(rand.NewPCG(1, 3))
		L, R := NewTable(tc.lRows, 6, 0.5, rng), NewTable(tc.rRows, 6, 0.5, rng)
		w := NewWorker(m)
		w.Step(scaleBatch(rng, 40, L.Rows, R.Rows), L, R, rng)
		if w.gl.census.on != tc.wantL || w.gr.census.on != tc.wantR {
			t.Errorf("earlyMin %d: sides counted %v, %v; want %v, %v", tc.min, w.gl.census.on, w.gr.census.on, tc.wantL, tc.wantR)
		}
		if (w.earlyRows > 0) != (tc.wantL || tc.wantR) {
			t.Errorf("earlyMin %d: %d rows updated early", tc.min, w.earlyRows)
		}
	}
}

// The census tells rows noted once from rows noted several times or as a
// positive, and knows no row it was not told of, across growth and reuse.
func TestRowCensus(t *testing.T) {
	var c rowCensus
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{10, 3000, 10, 70000} {
		c.reset(n)
		count := map[uint32]int{}
		for range n {
			r := uint32(rng.IntN(4 * n))
			many := rng.IntN(10) == 0
			c.note(r, many)
			count[r]++
			if many {
				count[r] += 2
			}
		}
		for r := range uint32(4 * n) {
			if got, want := c.once(r), count[r] == 1; got != want {
				t.Fatalf("n %d: once(%d) = %v, noted %d times", n, r, got, count[r])
			}
		}
	}
}
